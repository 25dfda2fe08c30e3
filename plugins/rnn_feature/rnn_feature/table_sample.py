"""One seeded pass over a Moses phrase table that picks what the analyses look at.

The analyses of the paper (section 4.3) need, from a table far larger than memory: source phrases
of at least four words, some *frequent* and some *rare*, each with all its candidate targets and
their translation-model scores (Table 2, Table 3); a uniform sample of phrase pairs (Fig. 3); and
a sample of long source phrases (Fig. 5). :func:`sample_table` streams the table once, grouping
its lines by source phrase (Moses tables are sorted by source, so a source's lines are
contiguous), and fills seeded reservoirs (Vitter's algorithm R), so memory is bounded by the
sample sizes and the same seed gives the same selection.

A source phrase's frequency is its count ``count(f)`` from the table's counts field
(``count(e) count(f) count(f,e)``, as ``pysmt train`` and Moses write it); a table without counts
falls back to its number of candidate targets.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Generic, TypeVar

from pysmt.plugin.files import at_line
from rnn_feature.data import TableLine, read_table
from rnn_feature.sample_sizes import SampleSizes

T = TypeVar("T")


@dataclass
class SourcePhrase:
    """A source phrase with every target the table gives it and their translation-model log-probabilities."""

    text: str
    count: float
    targets: list[str]
    tm: list[float]


@dataclass
class Reservoir(Generic[T]):
    """A uniform sample of ``size`` items from a stream of unknown length (algorithm R)."""

    size: int
    rng: random.Random
    items: list[T] = field(default_factory=list)
    seen: int = 0

    def offer(self, make: Callable[[], T]) -> None:
        """Consider one more item; ``make`` builds it only when it enters the sample."""
        self.seen += 1
        if len(self.items) < self.size:
            self.items.append(make())
        else:
            slot = self.rng.randrange(self.seen)
            if slot < self.size:
                self.items[slot] = make()


@dataclass
class TableSample:
    frequent: list[SourcePhrase]
    rare: list[SourcePhrase]
    pairs: list[tuple[str, str, float]]  # (source, target, translation-model log-probability)
    long_phrases: list[str]
    sources: int = 0
    long_sources: int = 0


def pair_sample(source: str, line: TableLine, path: Path, column: int) -> tuple[str, str, float]:
    """A sampled pair: (source, target, the table's log-probability in ``column``)."""
    return source, " ".join(line.target), tm_log_probability(line, path, column)


def tm_log_probability(line: TableLine, path: Path, column: int) -> float:
    """Log of the table's ``column``-th score (a probability, as Moses tables store them), floored like Moses."""
    scores = line.fields[2].split()
    if column >= len(scores):
        raise at_line(path, line.line_no, f"no score {column} (the line has {len(scores)}); choose --tm-column")
    try:
        value = float(scores[column])
    except ValueError:
        raise at_line(path, line.line_no, f"score {scores[column]!r} is not a number") from None
    return math.log(value) if value > 0 else -100.0


def source_count(lines: list[TableLine]) -> float:
    """``count(f)`` from the counts field, or the number of targets when the table has no counts."""
    fields = lines[0].fields
    counts = fields[4].split() if len(fields) > 4 else []
    return float(counts[1]) if len(counts) >= 2 else float(len(lines))


def grouped(path: Path) -> Iterator[tuple[str, list[TableLine]]]:
    for source, lines in itertools.groupby(read_table(path), key=lambda line: " ".join(line.source)):
        yield source, list(lines)


def sample_table(path: Path, sizes: SampleSizes, column: int = 2, seed: int = 0) -> TableSample:
    """The seeded samples of ``sizes`` from one pass over the table at ``path``.

    ``column`` is the score used as the translation model's ``p(target | source)``: 2, the
    direct phrase probability of a standard four-score Moses table.
    """
    rng = random.Random(seed)
    frequent, rare = Reservoir[SourcePhrase](sizes.frequent, rng), Reservoir[SourcePhrase](sizes.rare, rng)
    pairs = Reservoir[tuple[str, str, float]](sizes.pairs, rng)
    long_phrases = Reservoir[str](sizes.long_phrases, rng)
    sources = long_sources = 0
    for source, lines in grouped(path):
        sources += 1
        for line in lines:
            if sizes.pairs:
                pairs.offer(partial(pair_sample, source, line, path, column))
        if len(lines[0].source) < sizes.min_words:
            continue
        long_sources += 1
        long_phrases.offer(lambda: source)
        count = source_count(lines)
        group = frequent if count >= sizes.frequent_min else rare if count <= sizes.rare_max else None
        if group is not None and group.size:
            group.offer(
                lambda: SourcePhrase(
                    source,
                    count,
                    [" ".join(line.target) for line in lines],
                    [tm_log_probability(line, path, column) for line in lines],
                )
            )
    return TableSample(frequent.items, rare.items, pairs.items, long_phrases.items, sources, long_sources)


def named_sources(path: Path, texts: list[str], column: int = 2) -> list[SourcePhrase]:
    """The table's entries for the given source phrases (in the given order); unknown ones have no targets."""
    wanted = {" ".join(text.split()) for text in texts}
    found: dict[str, SourcePhrase] = {}
    for source, lines in grouped(path):
        if source in wanted:
            found[source] = SourcePhrase(
                source,
                source_count(lines),
                [" ".join(line.target) for line in lines],
                [tm_log_probability(line, path, column) for line in lines],
            )
    return [found.get(" ".join(text.split()), SourcePhrase(" ".join(text.split()), 0.0, [], [])) for text in texts]
