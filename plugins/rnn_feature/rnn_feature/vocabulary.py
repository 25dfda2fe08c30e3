"""Shortlists: the most frequent words of each side, everything else ``[UNK]``, and end-of-sequence.

A shortlist is stored as a plain text file, one word per line in id order (``[EOS]`` = 0,
``[UNK]`` = 1, then words by decreasing frequency, ties by byte order). The target shortlist file
(``target.vocab``) is the contract with other neural features: the WP feature counts the words
outside it, and a CSLM trained with the same file agrees on which words are "unknown".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from pysmt.plugin import PysmtError
from pysmt.plugin.files import atomic_writer

EOS, UNK = "[EOS]", "[UNK]"
EOS_ID, UNK_ID = 0, 1


class Shortlist:
    """Word <-> id for one side."""

    def __init__(self, words: list[str]) -> None:
        if words[:2] != [EOS, UNK]:
            raise ValueError(f"a shortlist starts with {EOS} and {UNK}")
        self.words = words
        self.ids = {w: k for k, w in enumerate(words)}

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: str) -> bool:
        return word in self.ids and self.ids[word] > UNK_ID

    @classmethod
    def most_frequent(cls, counts: Counter[str], size: int) -> Shortlist:
        """The ``size - 2`` most frequent words (ties broken by byte order, for reproducibility)."""
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0].encode()))
        return cls([EOS, UNK] + [w for w, _ in ranked[: max(size - 2, 0)]])

    def encode(self, words: Iterable[str]) -> list[int]:
        return [self.ids.get(w, UNK_ID) for w in words]

    def decode(self, ids: Iterable[int]) -> list[str]:
        return [self.words[i] for i in ids]

    def save(self, path: Path) -> None:
        with atomic_writer(path) as out:
            out.write("".join(w + "\n" for w in self.words))

    @classmethod
    def load(cls, path: Path) -> Shortlist:
        if not path.is_file():
            raise PysmtError(f"{path}: no such shortlist file (train a model with `pysmt rnn train`)")
        return cls(path.read_text(encoding="utf-8").split("\n")[:-1])
