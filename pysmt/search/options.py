"""Translation options: the phrase pairs that can cover each source span of a sentence.

Every span of at most ``max-phrase-length`` words is looked up in each phrase table; the candidates
of a source phrase are scored by the context-free features, pruned to the table's ``table-limit``
by weighted score plus estimate (as Moses prunes), and cached across sentences. A word without any
single-word option becomes an unknown-word option that passes it through unchanged. A sentence's markup
(``--xml-input``) adds its options and takes table options away as :mod:`pysmt.search.markup_options` says.
"""

from __future__ import annotations

from pysmt.phrases import PhrasePair, Sentence, SentenceOptions, TranslationOption
from pysmt.search.markup_options import SentenceMarkup
from pysmt.search.model import LogLinearModel

#: The cache key of an unknown word's pass-through pair: this, then the word (no source phrase has a NUL).
UNKNOWN = "\0unk\0"


class OptionBuilder:
    """Builds each sentence's translation options, caching the pruned candidates of every source phrase."""

    def __init__(self, model: LogLinearModel, max_phrase_length: int) -> None:
        self.model = model
        self.max_phrase_length = max_phrase_length
        self.cache: dict[str, list[PhrasePair]] = {}

    def prepare(
        self,
        sources: list[str],
        single: list[bool],
        starts: list[int] | None = None,
        markup: SentenceMarkup | None = None,
        markup_pairs: list[PhrasePair] | None = None,
    ) -> None:
        """Cache the table-limited phrase pairs of the ``sources`` not cached yet, best first (ties keep table
        order), and the pass-through pairs of the words no table translates alone (``single``: the source
        is one word, starting at ``starts``; with ``markup``, also those it leaves without an option): every new
        pair of a sentence is scored by the context-free features in one batch, table pairs first, in the order
        of the sentence's spans, then the pass-through pairs, then the ``markup_pairs``."""
        new = [source for source in dict.fromkeys(sources) if source not in self.cache]
        found = {source: [table.translations(source) for table in self.model.phrase_tables] for source in new}
        batch = [pair for per_table in found.values() for pairs in per_table for pair in pairs]
        unknown = []
        for position, (source, one_word) in enumerate(zip(sources, single)):
            if not one_word:
                continue
            translated = bool(self.cache[source] if source in self.cache else any(found[source]))
            if markup.wants_unknown(starts[position], translated) if markup and starts else not translated:
                key = UNKNOWN + source
                if key not in self.cache and key not in unknown:
                    unknown.append(key)
                    self.cache[key] = [
                        PhrasePair(source, (source,), table=None, table_scores=None, alignment="0-0", unknown=True)
                    ]
        batch += [self.cache[key][0] for key in unknown] + (markup_pairs or [])
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

    def build(self, sentence: Sentence, markup: SentenceMarkup | None = None) -> SentenceOptions:
        """Look up every span, add unknown-word options and the ``markup``'s, and let per-sentence features score
        the options."""
        words = sentence.words
        result = SentenceOptions(sentence)
        n = len(words)
        spans = [
            (start, end, " ".join(words[start:end]))
            for start in range(n)
            for end in range(start + 1, min(n, start + self.max_phrase_length) + 1)
        ]
        markup_pairs = [markup.pair(k) for k in range(len(markup.options))] if markup else []
        self.prepare(
            [source for _, _, source in spans],
            [end == start + 1 for start, end, _ in spans],
            [start for start, _, _ in spans],
            markup,
            markup_pairs,
        )
        for start, end, source in spans:
            pairs = self.cache[source]
            if end == start + 1 and (markup.wants_unknown(start, bool(pairs)) if markup else not pairs):
                pairs = self.cache[UNKNOWN + source]
            elif markup:
                pairs = [pair for pair in pairs if markup.keeps(start, end, pair.target)]
            given = [markup_pairs[k] for k in markup.at(start, end)] if markup else []
            if pairs or given:
                first = len(result.options)
                opts = [TranslationOption(start, end, pair, first + k) for k, pair in enumerate(pairs + given)]
                result.options.extend(opts)
                if given:  # best first, as the tables' are (Moses sorts each span's options)
                    opts.sort(key=lambda option: -option.future)
                result.by_span[(start, end)] = opts
        self.model.evaluate_options(sentence, result)
        return result
