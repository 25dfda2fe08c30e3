"""Translation options: the phrase pairs that can cover each source span of a sentence.

Every span of at most ``max-phrase-length`` words is looked up in each phrase table; the candidates
of a source phrase are scored by the context-free features, pruned to the table's ``table-limit``
by weighted score plus estimate (as Moses prunes), and cached across sentences. A word without any
single-word option becomes an unknown-word option that passes it through unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from pysmt.search.model import LogLinearModel


@dataclass(frozen=True, slots=True)
class Sentence:
    """A tokenized input sentence and its position in the input (0-based)."""

    words: tuple[str, ...]
    index: int = 0

    def __len__(self) -> int:
        return len(self.words)


class PhrasePair:
    """A source/target phrase pair with its feature scores, shared by every span it translates."""

    __slots__ = ("source", "target", "table", "table_scores", "alignment", "unknown",
                 "scores", "estimates", "isolation", "future")

    def __init__(self, source: str, target: tuple[str, ...], *, table: str | None, table_scores: np.ndarray | None,
                 alignment: str = "", unknown: bool = False) -> None:
        self.source = source
        self.target = target
        #: Name of the phrase-table feature the pair comes from (None for unknown words).
        self.table = table
        self.table_scores = table_scores
        #: Word alignment inside the pair, Moses' ``i-j`` pairs (source-target), possibly empty.
        self.alignment = alignment
        self.unknown = unknown
        self.scores: np.ndarray = np.zeros(0)
        self.estimates: np.ndarray = np.zeros(0)
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

    sentence: "Sentence"
    by_span: dict[tuple[int, int], list[TranslationOption]] = field(default_factory=dict)
    options: list[TranslationOption] = field(default_factory=list)

    def spans_by_start(self) -> list[list[tuple[int, list[TranslationOption]]]]:
        """For each start position, (end, options) of the spans starting there, shortest first."""
        starts: list[list[tuple[int, list[TranslationOption]]]] = [[] for _ in range(len(self.sentence))]
        for (start, end), opts in sorted(self.by_span.items()):
            starts[start].append((end, opts))
        return starts


class OptionBuilder:
    """Builds each sentence's translation options, caching the pruned candidates of every source phrase."""

    def __init__(self, model: LogLinearModel, max_phrase_length: int) -> None:
        self.model = model
        self.max_phrase_length = max_phrase_length
        self.cache: dict[str, list[PhrasePair]] = {}

    def candidates(self, source: str) -> list[PhrasePair]:
        """The table-limited phrase pairs of a source phrase, best first (ties keep table order)."""
        cached = self.cache.get(source)
        if cached is None:
            cached = []
            for table in self.model.phrase_tables:
                pairs = table.translations(source)
                if pairs:
                    self.model.evaluate_pairs(pairs)
                    pairs.sort(key=lambda pair: -pair.future)
                    cached.extend(pairs[:table.table_limit] if table.table_limit > 0 else pairs)
            if len(self.model.phrase_tables) > 1:
                cached.sort(key=lambda pair: -pair.future)
            self.cache[source] = cached
        return cached

    def unknown(self, word: str) -> PhrasePair:
        """The pass-through option of a word no phrase table translates on its own."""
        key = "\0unk\0" + word
        cached = self.cache.get(key)
        if cached is None:
            pair = PhrasePair(word, (word,), table=None, table_scores=None, alignment="0-0", unknown=True)
            self.model.evaluate_pairs([pair])
            cached = self.cache[key] = [pair]
        return cached[0]

    def build(self, sentence: Sentence) -> SentenceOptions:
        """Look up every span, add unknown-word options, and let per-sentence features score the options."""
        words = sentence.words
        result = SentenceOptions(sentence)
        n = len(words)
        for start in range(n):
            for end in range(start + 1, min(n, start + self.max_phrase_length) + 1):
                pairs = self.candidates(" ".join(words[start:end]))
                if not pairs and end == start + 1:
                    pairs = [self.unknown(words[start])]
                if pairs:
                    opts = [TranslationOption(start, end, pair, len(result.options) + k)
                            for k, pair in enumerate(pairs)]
                    result.by_span[(start, end)] = opts
                    result.options.extend(opts)
        self.model.evaluate_options(sentence, result)
        return result
