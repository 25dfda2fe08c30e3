"""Phrase pairs from a Moses phrase table, integer-encoded for training and scoring.

The network learns from the table's *unique* phrase pairs (each line once, frequencies ignored on
purpose, as the paper does). Shortlists count a word once per pair it occurs in. Pairs are kept
as ragged int32 arrays (one flat array and offsets per side), so millions of pairs take tens of
megabytes and a minibatch is a few numpy gathers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Self

import numpy as np
import torch

from pysmt.plugin.files import at_line, atomic_path, read_arrays, read_lines
from rnn_feature.vocabulary import Shortlist


@dataclass
class TableLine:
    line_no: int
    source: list[str]
    target: list[str]
    fields: list[str]  # all " ||| " fields, for rewriting the line


def read_table(path: Path) -> Iterator[TableLine]:
    """The lines of a Moses phrase table (text or gzip), with their source and target words checked."""
    for line_no, line in read_lines(path):
        fields = line.split(" ||| ")
        if len(fields) < 3:
            raise at_line(path, line_no, "expected 'source ||| target ||| scores ...'")
        source, target = fields[0].split(), fields[1].split()
        if not source or not target:
            raise at_line(path, line_no, f"empty {'source' if not source else 'target'} phrase")
        yield TableLine(line_no, source, target, fields)


@dataclass
class Ragged:
    """Variable-length id sequences: sequence ``k`` is ``flat[offsets[k]:offsets[k + 1]]``."""

    flat: np.ndarray
    offsets: np.ndarray

    @classmethod
    def from_lists(cls, sequences: list[list[int]]) -> Ragged:
        lengths = np.fromiter((len(s) for s in sequences), dtype=np.int64, count=len(sequences))
        flat = np.fromiter((i for s in sequences for i in s), dtype=np.int32, count=int(lengths.sum()))
        return cls(flat, np.concatenate([[0], np.cumsum(lengths)]))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def padded(self, index: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        """Sequences ``index`` as a zero-padded (batch x longest) tensor and their lengths."""
        starts, lengths = self.offsets[index], self.lengths()[index]
        width = int(lengths.max()) if len(index) else 0
        positions = np.arange(width)
        mask = positions[None, :] < lengths[:, None]
        gather = np.where(mask, starts[:, None] + positions[None, :], 0)
        ids = np.where(mask, self.flat[gather] if len(self.flat) else 0, 0)
        return torch.from_numpy(ids.astype(np.int64)), torch.from_numpy(lengths.astype(np.int64))

    def take(self, index: np.ndarray) -> Ragged:
        return Ragged.from_lists([self.flat[self.offsets[k] : self.offsets[k + 1]].tolist() for k in index])


@dataclass
class EncodedPairs:
    """Source and target sequences as ids, pair by pair, saved as one ``.npz`` (the sentence model's bitext too:
    :class:`rnn_feature.sentence.data.EncodedBitext`)."""

    source: Ragged
    target: Ragged

    def __len__(self) -> int:
        return len(self.source)

    def save(self, path: Path) -> None:
        with atomic_path(path) as tmp:
            np.savez(
                tmp,
                source_flat=self.source.flat,
                source_offsets=self.source.offsets,
                target_flat=self.target.flat,
                target_offsets=self.target.offsets,
            )

    @classmethod
    def load(cls, path: Path) -> Self:
        """The pairs :meth:`save` wrote; a damaged or foreign file is one line naming it."""
        data = read_arrays(path, ["source_flat", "source_offsets", "target_flat", "target_offsets"])
        return cls(
            Ragged(data["source_flat"], data["source_offsets"]), Ragged(data["target_flat"], data["target_offsets"])
        )


def count_words(path: Path) -> tuple[Counter[str], Counter[str]]:
    """Word frequencies per side, counting each phrase pair once."""
    source: Counter[str] = Counter()
    target: Counter[str] = Counter()
    for line in read_table(path):
        source.update(line.source)
        target.update(line.target)
    return source, target


def encode_table(path: Path, source: Shortlist, target: Shortlist) -> EncodedPairs:
    """Every pair of the table, encoded with the shortlists (words outside them become [UNK])."""
    sources, targets = [], []
    for line in read_table(path):
        sources.append(source.encode(line.source))
        targets.append(target.encode(line.target))
    return EncodedPairs(Ragged.from_lists(sources), Ragged.from_lists(targets))
