"""The experiment's data: slices of the training bitext, the dev set and the test sets, written once.

Slices are deterministic (every k-th training pair of the preset's corpora in their order, the
first N lines of the dev and test sets, whose documents stay whole), so two runs at one scale train
and test on the same lines. Every file is written atomically.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pysmt.errors import PysmtError
from pysmt.files.textio import atomic_writer, read_lines, require_file


@dataclass(frozen=True)
class Bitext:
    """A source file and its parallel target (reference) file."""

    source: Path
    target: Path

    @classmethod
    def resolved(cls, files: tuple[Path, Path]) -> Bitext:
        """A bitext as ``--test SRC REF`` gives it, made absolute, as the stages record and pass it."""
        source, target = files
        return cls(source.resolve(), target.resolve())

    def pairs(self, label: str) -> Iterator[tuple[str, str]]:
        """The line pairs; files of different lengths are an error naming ``label``."""
        for path in (self.source, self.target):
            require_file(path, label)
        sources, targets = read_lines(self.source), read_lines(self.target)
        for (_, src), (_, tgt) in itertools.zip_longest(sources, targets, fillvalue=(0, None)):
            if src is None or tgt is None:
                raise PysmtError(f"{label}: {self.source} and {self.target} have different numbers of lines")
            yield src, tgt

    def count(self, label: str) -> int:
        return sum(1 for _ in self.pairs(label))


def write_pairs(pairs: Iterator[tuple[str, str]], out: Bitext) -> int:
    """Write line pairs to ``out`` atomically; return how many."""
    n = 0
    with atomic_writer(out.source) as src, atomic_writer(out.target) as tgt:
        for n, (source, target) in enumerate(pairs, start=1):
            src.write(source + "\n")
            tgt.write(target + "\n")
    return n


def write_every(corpora: list[Bitext], every: int, out: Bitext, label: str) -> int:
    """Every ``every``-th pair of the corpora taken in order (the first, the (k+1)-th, ...): a stratified slice."""
    pairs = itertools.chain.from_iterable(corpus.pairs(label) for corpus in corpora)
    return write_pairs(itertools.islice(pairs, 0, None, every), out)


def write_head(corpus: Bitext, size: int | None, out: Bitext, label: str, option: str) -> int:
    """The first ``size`` pairs (all with None); asking for more lines than there are is an error naming ``option``."""
    available = corpus.count(label)
    if size is not None and size > available:
        raise PysmtError(f"{option} {size:,}: {corpus.source} has only {available:,} lines")
    return write_pairs(itertools.islice(corpus.pairs(label), size), out)
