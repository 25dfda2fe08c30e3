"""Translation options: the phrase pairs that can cover each source span of a sentence.

Every span of at most ``max-phrase-length`` words is looked up in each phrase table; the candidates
of a source phrase are scored by the context-free features, pruned to the table's ``table-limit``
by weighted score plus estimate (as Moses prunes), and cached across sentences. A word without any
single-word option becomes an unknown-word option that passes it through unchanged.
"""

from __future__ import annotations

from pysmt.phrases import PhrasePair, Sentence, SentenceOptions, TranslationOption
from pysmt.search.model import LogLinearModel


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
