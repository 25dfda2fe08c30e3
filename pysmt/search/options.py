"""Translation options: the phrase pairs that can cover each source span of a sentence.

Every span of at most ``max-phrase-length`` words is looked up in each phrase table; the candidates
of a source phrase are scored by the context-free features, pruned to the table's ``table-limit``
by weighted score plus estimate (as Moses prunes), and cached across sentences. A word without any
single-word option becomes an unknown-word option that passes it through unchanged.
"""

from __future__ import annotations

from pysmt.phrases import PhrasePair, Sentence, SentenceOptions, TranslationOption
from pysmt.search.model import LogLinearModel

#: The cache key of an unknown word's pass-through pair: this, then the word (no source phrase has a NUL).
UNKNOWN = "\0unk\0"


class OptionBuilder:
    """Builds each sentence's translation options, caching the pruned candidates of every source phrase."""

    def __init__(self, model: LogLinearModel, max_phrase_length: int) -> None:
        self.model = model
        self.max_phrase_length = max_phrase_length
        self.cache: dict[str, list[PhrasePair]] = {}

    def prepare(self, sources: list[str], single: list[bool]) -> None:
        """Cache the table-limited phrase pairs of the ``sources`` not cached yet, best first (ties keep table
        order), and the pass-through pairs of the words no table translates alone (``single``: the source
        is one word): every new pair of a sentence is scored by the context-free features in one batch,
        table pairs first, in the order of the sentence's spans."""
        new = [source for source in dict.fromkeys(sources) if source not in self.cache]
        found = {source: [table.translations(source) for table in self.model.phrase_tables] for source in new}
        batch = [pair for per_table in found.values() for pairs in per_table for pair in pairs]
        unknown = []
        for source, one_word in zip(sources, single):
            if one_word and not (self.cache[source] if source in self.cache else any(found[source])):
                key = UNKNOWN + source
                if key not in self.cache and key not in unknown:
                    unknown.append(key)
                    self.cache[key] = [
                        PhrasePair(source, (source,), table=None, table_scores=None, alignment="0-0", unknown=True)
                    ]
        batch += [self.cache[key][0] for key in unknown]
        if batch:
            self.model.evaluate_pairs(batch)
        for source, per_table in found.items():
            cached: list[PhrasePair] = []
            for table, pairs in zip(self.model.phrase_tables, per_table):
                pairs.sort(key=lambda pair: -pair.future)
                cached.extend(pairs[: table.table_limit] if table.table_limit > 0 else pairs)
            if len(self.model.phrase_tables) > 1:
                cached.sort(key=lambda pair: -pair.future)
            self.cache[source] = cached

    def build(self, sentence: Sentence) -> SentenceOptions:
        """Look up every span, add unknown-word options, and let per-sentence features score the options."""
        words = sentence.words
        result = SentenceOptions(sentence)
        n = len(words)
        spans = [
            (start, end, " ".join(words[start:end]))
            for start in range(n)
            for end in range(start + 1, min(n, start + self.max_phrase_length) + 1)
        ]
        self.prepare([source for _, _, source in spans], [end == start + 1 for start, end, _ in spans])
        for start, end, source in spans:
            pairs = self.cache[source]
            if not pairs and end == start + 1:
                pairs = self.cache[UNKNOWN + source]
            if pairs:
                opts = [TranslationOption(start, end, pair, len(result.options) + k) for k, pair in enumerate(pairs)]
                result.by_span[(start, end)] = opts
                result.options.extend(opts)
        self.model.evaluate_options(sentence, result)
        return result
