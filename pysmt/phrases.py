"""What a sentence's translation is made of, as the search and every feature see it: the plugin vocabulary.

A :class:`Sentence` is a tokenized input line; a :class:`PhrasePair` a source/target pair from a
phrase table (or an unknown word passed through) with its scores in isolation; a
:class:`TranslationOption` a pair placed on a source span of one sentence; and
:class:`SentenceOptions` all options of a sentence by span. This module imports nothing from pysmt:
features (built-in and plugins) and the search both stand on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True, slots=True)
class Sentence:
    """A tokenized input sentence and its position in the input (0-based)."""

    words: tuple[str, ...]
    index: int = 0

    def __len__(self) -> int:
        return len(self.words)


#: The scores of a pair not scored yet (one read-only array for all: a pair is made per table entry
#: looked up, hundreds of thousands per hundred sentences).
UNSCORED = np.zeros(0)
UNSCORED.flags.writeable = False


class PhrasePair:
    """A source/target phrase pair with its feature scores, shared by every span it translates."""

    __slots__ = (
        "source",
        "target",
        "table",
        "entry",
        "table_scores",
        "alignment",
        "unknown",
        "scores",
        "estimates",
        "isolation",
        "future",
    )

    def __init__(
        self,
        source: str,
        target: tuple[str, ...],
        *,
        table: str | None,
        table_scores: np.ndarray | None,
        alignment: str = "",
        unknown: bool = False,
        entry: int = -1,
    ) -> None:
        self.source = source
        self.target = target
        #: Name of the phrase-table feature the pair comes from (None for unknown words).
        self.table = table
        #: The pair's entry (row) in that table, -1 for none: where scores stored with the table are.
        self.entry = entry
        self.table_scores = table_scores
        #: Word alignment inside the pair, Moses' ``i-j`` pairs (source-target), possibly empty.
        self.alignment = alignment
        self.unknown = unknown
        self.scores: np.ndarray = UNSCORED
        self.estimates: np.ndarray = UNSCORED
        self.isolation = 0.0
        self.future = 0.0

    def describe(self) -> str:
        """``'a b' -> 'x y'``, as error messages name a pair."""
        return f"{self.source!r} -> {' '.join(self.target)!r}"

    def __repr__(self) -> str:
        return f"PhrasePair({self.describe()})"


class TranslationOption:
    """A phrase pair placed on the source span ``[start, end)`` of one sentence.

    ``isolation`` is its weighted score in isolation, ``future`` adds the estimates (future cost).
    """

    __slots__ = ("start", "end", "pair", "target", "scores", "isolation", "future", "index")

    def __init__(self, start: int, end: int, pair: PhrasePair, index: int) -> None:
        self.start = start
        self.end = end
        self.pair = pair
        self.target = pair.target
        self.scores = pair.scores
        self.isolation = pair.isolation
        self.future = pair.future
        #: Position in the sentence's option list, for features that keep per-option arrays.
        self.index = index

    @property
    def source(self) -> str:
        return self.pair.source

    def describe(self) -> str:
        """``'a b' -> 'x y'``, as error messages name an option."""
        return self.pair.describe()

    def __repr__(self) -> str:
        return f"TranslationOption([{self.start},{self.end}) {self.pair.source!r} -> {' '.join(self.target)!r})"


@dataclass
class SentenceOptions:
    """All translation options of a sentence, by span, each span's list best first."""

    sentence: Sentence
    by_span: dict[tuple[int, int], list[TranslationOption]] = field(default_factory=dict)
    options: list[TranslationOption] = field(default_factory=list)

    def spans_by_start(self) -> list[list[tuple[int, list[TranslationOption]]]]:
        """For each start position, (end, options) of the spans starting there, shortest first."""
        starts: list[list[tuple[int, list[TranslationOption]]]] = [[] for _ in range(len(self.sentence))]
        for (start, end), opts in sorted(self.by_span.items()):
            starts[start].append((end, opts))
        return starts
