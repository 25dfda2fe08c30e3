"""A word-aligned parallel corpus held integer-encoded: the input of extraction and scoring.

Sentences are one flat int32 array of word ids and their offsets (4 bytes a word), not a tuple
of Python ints each (about 40 bytes a word): on the news preset that is 20 MB instead of about
400, and forked workers that read it do not copy it page by page as they would Python objects
(whose reference counts a read writes).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pysmt.errors import PysmtError, at_line
from pysmt.files.textio import read_lines
from pysmt.models.vocabulary import Vocabulary


class Sentences(Sequence[tuple[int, ...]]):
    """Sentences of word ids in one flat array; sentence ``k`` is given as a tuple of ints when asked for."""

    def __init__(self, flat: np.ndarray, offsets: np.ndarray) -> None:
        self.flat, self.offsets = flat, offsets

    @classmethod
    def encode(cls, lines: Iterable[str], vocabulary: Vocabulary) -> Sentences:
        """Each line's words, given ids by ``vocabulary`` (which grows)."""
        flat, offsets = array("i"), array("q", [0])
        for line in lines:
            flat.extend(vocabulary.add(word) for word in line.split())
            offsets.append(len(flat))
        return cls(
            np.frombuffer(flat, dtype=np.int32) if flat else np.zeros(0, np.int32),
            np.frombuffer(offsets, dtype=np.int64),
        )

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, k: int) -> tuple[int, ...]:  # type: ignore[override]  # (no slices)
        return tuple(self.flat[self.offsets[k] : self.offsets[k + 1]].tolist())

    def __iter__(self) -> Iterator[tuple[int, ...]]:
        return (self[k] for k in range(len(self)))

    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)


@dataclass
class AlignedCorpus:
    """Sentences of word ids per side (:class:`Sentences`), and each sentence's alignment as Pharaoh text."""

    sources: Sentences
    targets: Sentences
    alignments: list[str]
    src_vocab: Vocabulary
    tgt_vocab: Vocabulary

    def __len__(self) -> int:
        return len(self.sources)

    def source_words(self, k: int, start: int = 0, length: int | None = None) -> list[str]:
        ids = self.sources[k][start : None if length is None else start + length]
        return [self.src_vocab.words[i] for i in ids]

    def target_words(self, k: int, start: int = 0, length: int | None = None) -> list[str]:
        ids = self.targets[k][start : None if length is None else start + length]
        return [self.tgt_vocab.words[i] for i in ids]

    @classmethod
    def load(cls, source_path: Path, target_path: Path, alignment_path: Path) -> AlignedCorpus:
        """Read the three parallel files, checking line counts and alignment indices."""
        src_vocab, tgt_vocab = Vocabulary(), Vocabulary()
        sources = Sentences.encode((line for _, line in read_lines(source_path)), src_vocab)
        targets = Sentences.encode((line for _, line in read_lines(target_path)), tgt_vocab)
        alignments = [line for _, line in read_lines(alignment_path)]
        if not len(sources) == len(targets) == len(alignments):
            raise PysmtError(
                f"{source_path} has {len(sources):,} lines, {target_path} {len(targets):,} and "
                f"{alignment_path} {len(alignments):,}: they must be parallel"
            )
        src_lengths, tgt_lengths = sources.lengths().tolist(), targets.lengths().tolist()
        for k, line in enumerate(alignments):
            for token in line.split():
                s, sep, t = token.partition("-")
                if not (sep and s.isdigit() and t.isdigit()):
                    raise at_line(alignment_path, k + 1, f"alignment point {token!r} is not 'i-j'")
                if int(s) >= src_lengths[k] or int(t) >= tgt_lengths[k]:
                    raise at_line(alignment_path, k + 1, f"alignment point {token} is outside the sentence pair")
        return cls(sources, targets, alignments, src_vocab, tgt_vocab)
