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

    def prepare(self, sources: list[str]) -> None:
        """Cache the table-limited phrase pairs of the ``sources`` not cached yet, best first (ties keep table
        order): every new pair of a sentence is scored by the context-free features in one batch."""
        new = [source for source in dict.fromkeys(sources) if source not in self.cache]
        found = [[table.translations(source) for table in self.model.phrase_tables] for source in new]
        batch = [pair for per_table in found for pairs in per_table for pair in pairs]
        if batch:
            self.model.evaluate_pairs(batch)
        for source, per_table in zip(new, found):
            cached: list[PhrasePair] = []
            for table, pairs in zip(self.model.phrase_tables, per_table):
                pairs.sort(key=lambda pair: -pair.future)
                cached.extend(pairs[:table.table_limit] if table.table_limit > 0 else pairs)
            if len(self.model.phrase_tables) > 1:
                cached.sort(key=lambda pair: -pair.future)
            self.cache[source] = cached

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
        spans = [(start, end, " ".join(words[start:end])) for start in range(n)
                 for end in range(start + 1, min(n, start + self.max_phrase_length) + 1)]
        self.prepare([source for _, _, source in spans])
        for start, end, source in spans:
            pairs = self.cache[source]
            if not pairs and end == start + 1:
                pairs = [self.unknown(words[start])]
            if pairs:
                opts = [TranslationOption(start, end, pair, len(result.options) + k) for k, pair in enumerate(pairs)]
                result.by_span[(start, end)] = opts
                result.options.extend(opts)
        self.model.evaluate_options(sentence, result)
        return result
