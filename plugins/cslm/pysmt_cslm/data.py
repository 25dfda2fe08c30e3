"""Tokenized text (one sentence a line), integer-encoded as a stream of n-grams.

Every token of every sentence, and the ``</s>`` that ends it, is the last word of one n-gram;
its context is the six tokens before it in the same sentence, padded with ``<s>`` (input id 0)
before the sentence start. A text is kept as one int32 array of ids (each sentence followed by
``</s>``) and, per token, its distance from the sentence start capped at the context size (uint8),
so a minibatch's contexts are a few numpy gathers and the text takes 5 bytes a token.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pysmt.plugin.files import atomic_path, read_arrays, read_lines
from pysmt_cslm.vocabulary import BOS_ID, EOS_ID, Backoff, Shortlist

#: Held-out share of the lines without --valid, and its cap.
VALID_SHARE, VALID_MAX = 0.01, 10_000


def read_sentences(path: Path) -> Iterator[list[str]]:
    """The words of each line (text or gzip)."""
    for _, line in read_lines(path):
        yield line.split()


def validation_lines(lines: int, seed: int) -> np.ndarray:
    """A boolean mask of the lines held out for validation: a seeded 1% (at least 1, at most 10,000)."""
    held = np.zeros(lines, dtype=bool)
    if lines > 1:
        n_valid = min(VALID_MAX, max(1, int(lines * VALID_SHARE)))
        held[np.random.default_rng(seed).permutation(lines)[:n_valid]] = True
    return held


def count_words(path: Path, skip: np.ndarray | None = None) -> tuple[Counter[str], int]:
    """(word counts, sentences) of the lines of ``path`` not marked in ``skip``."""
    counts: Counter[str] = Counter()
    sentences = 0
    for k, words in enumerate(read_sentences(path)):
        if skip is not None and skip[k]:
            continue
        counts.update(words)
        sentences += 1
    return counts, sentences


@dataclass
class EncodedText:
    """A text as n-grams: ``ids`` (tokens, ``</s>`` after each sentence), ``pos`` (distance from the
    sentence start, capped), and optionally ``extra``: ``log p(w | outside)`` per token (0 in the shortlist)."""

    ids: np.ndarray
    pos: np.ndarray
    extra: np.ndarray | None = None
    outside: int = 0  # tokens outside the shortlist

    def __len__(self) -> int:
        return len(self.ids)

    def contexts(self, index: np.ndarray, context: int) -> np.ndarray:
        """The context ids (len(index) x context) of tokens ``index``, ``<s>`` before the sentence start."""
        offsets = np.arange(-context, 0)
        source = index[:, None] + offsets[None, :]
        keep = (-offsets)[None, :] <= self.pos[index][:, None]
        return np.where(keep, self.ids[np.maximum(source, 0)], BOS_ID).astype(np.int64)

    def save(self, path: Path) -> None:
        arrays: dict[str, Any] = {"ids": self.ids, "pos": self.pos, "outside": np.array(self.outside)}
        if self.extra is not None:
            arrays["extra"] = self.extra
        with atomic_path(path) as tmp, open(tmp, "wb") as handle:
            np.savez(handle, **arrays)

    @classmethod
    def load(cls, path: Path) -> EncodedText:
        data = read_arrays(path, ["ids", "pos", "outside"], optional=["extra"])
        return cls(data["ids"], data["pos"], data.get("extra"), int(data["outside"]))


def encode_text(
    path: Path, shortlist: Shortlist, context: int, select: np.ndarray | None = None, backoff: Backoff | None = None
) -> EncodedText:
    """The lines of ``path`` marked in ``select`` (all without it), encoded; with ``backoff``, each token's
    ``log p(w | outside)`` too."""
    ids: list[int] = []
    pos: list[int] = []
    extra: list[float] = []
    outside = 0
    for k, words in enumerate(read_sentences(path)):
        if select is not None and not select[k]:
            continue
        encoded = shortlist.encode(words)
        outside += sum(1 for i in encoded if i == 1)
        ids.extend(encoded)
        ids.append(EOS_ID)
        pos.extend(min(t, context) for t in range(len(words) + 1))
        if backoff is not None:
            extra.extend(backoff.logp(w) for w in words)
            extra.append(0.0)
    return EncodedText(
        np.array(ids, dtype=np.int32),
        np.array(pos, dtype=np.uint8),
        np.array(extra, dtype=np.float64) if backoff is not None else None,
        outside,
    )
