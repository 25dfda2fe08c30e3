"""The compiled option builder (``pysmt/search/_options.cpp``, in :mod:`pysmt._core`) bound to a model.

It builds what :class:`~pysmt.search.options.OptionBuilder` builds (the specification: the tests
check that both give the same options, in the same order, with the same numbers), from the phrase
tables' typed arrays: span lookups, the built-in features' scores in isolation
(:class:`~pysmt.features.base.CompiledScores`), ranking and the table limit, the cache of ranked
pairs across sentences. The profile put a sentence's option building, in Python, at half of
decoding with cube pruning; here it is a small part.

Python features keep their contract. A context-free Python feature (a plugin's, such as the RNN
plugin's ``wp``) is called once per sentence with the :class:`~pysmt.phrases.PhrasePair` s the builder
has not seen before, as with the Python builder; per-sentence features and plugins' stateful
features get the sentence's :class:`~pysmt.phrases.TranslationOption` s, made only when such a
feature is there (:meth:`CompiledOptions.materialize`). A per-sentence feature whose scores are stored
with a binary table (:class:`~pysmt.features.base.StoredScores`: the RNN's, by ``pysmt rnn score``) is
read from there, and asked only about the options they do not cover. Stored scores that are their table's
columns (:class:`~pysmt.features.base.StoredColumns`: the RNN's under ``mode = "column"``) the compiled
builder reads itself when it scores the table's pairs in isolation, before the table limit. A sentence's
markup options (:mod:`pysmt.search.markup_options`) are given to the builder before its lookup; their pairs
are the table ``MARKUP``'s, numbered in the line's order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np

from pysmt import _core
from pysmt.features.base import CompiledScores, Feature, PhraseSource, StoredScores, with_source_context
from pysmt.phrases import PhrasePair, Sentence, SentenceOptions, TranslationOption
from pysmt.search.compiled import compiled_scorer
from pysmt.search.markup_options import SentenceMarkup
from pysmt.search.model import LogLinearModel, weighted_rows

#: The builder's ``table`` of an unknown word passed through, and of a markup translation: the core's own.
UNKNOWN_TABLE, MARKUP_TABLE = _core.UNKNOWN_TABLE, _core.MARKUP_TABLE


class CompiledOptions:
    """Builds each sentence's options in the compiled core, asking Python features for their scores."""

    def __init__(self, model: LogLinearModel, max_phrase_length: int) -> None:
        self.model = model
        self.core = _core.OptionBuilder(dims=model.dims, max_phrase_length=max_phrase_length)
        #: The phrase sources by the builder's number (a pair's ``table``).
        self.tables: list[PhraseSource] = []
        #: Context-free features the builder asks Python for.
        self.python: list[Feature] = []
        for k, feature in enumerate(model.features):
            column = model.offsets[k]
            if isinstance(feature, PhraseSource):
                self.core.add_table(table=feature.core_table(), column=column, limit=feature.table_limit)
                self.tables.append(feature)
            elif with_source_context(feature):
                continue
            elif isinstance(feature, CompiledScores):
                scores = feature.core_scores()
                if scores is not None:
                    self.core.add_scores(scores=scores, column=column)
            else:
                self.python.append(feature)
        self.core.set_python_columns(
            [
                model.offsets[k] + c
                for k, f in enumerate(model.features)
                if f in self.python
                for c in range(f.num_scores)
            ]
        )
        self.contextual = [f for f in model.features if with_source_context(f)]
        #: Per-sentence features' stored columns: (table number, entries x scores) of each table that has them.
        self.columns: dict[Feature, list[tuple[int, np.ndarray]]] = {}
        for k, columns in model.columns.items():
            feature = model.features[k]
            self.columns[feature] = [
                (t, columns[name])
                for t, table in enumerate(self.tables)
                if (name := cast(Feature, table).name) in columns
            ]
            for t, values in self.columns[feature]:
                self.core.add_stored(table=t, column=model.offsets[k], values=np.ascontiguousarray(values, np.float32))
        #: Per-sentence features' stored scores: (table number, entries x scores) of each table that has them.
        self.stored: dict[Feature, list[tuple[int, np.ndarray]]] = {
            f: [
                (t, found)
                for t, table in enumerate(self.tables)
                if t not in [c for c, _ in self.columns.get(f, [])]
                and (found := f.stored_scores(cast(Feature, table).name)) is not None
            ]
            for f in self.contextual
            if isinstance(f, StoredScores)
        }
        #: Whether each sentence's options must all be made as Python objects (for plugins' stateful
        #: features called from Python and per-sentence features without stored scores: they are given them).
        self.objects = any(compiled_scorer(model.stateful[k]) is None for k in model.deferred) or any(
            not (self.stored.get(f) or self.columns.get(f)) for f in self.contextual
        )
        #: The sentence being built's markup (its pairs are made from it).
        self.markup: SentenceMarkup | None = None
        self.set_weights()

    def set_weights(self) -> None:
        """The model's weights (the ranked pairs are forgotten: their ranks change)."""
        self.core.set_weights(self.model.weights.tolist())

    def clear(self) -> None:
        """Forget the ranked pairs (a feature's scores of them changed)."""
        self.core.clear()

    def build(
        self, sentence: Sentence, markup: SentenceMarkup | None = None
    ) -> tuple[_core.BuiltOptions, SentenceOptions | None]:
        """The sentence's options (with the ``markup``'s), and their Python objects when a feature needs them; the
        features have begun the sentence and the per-sentence ones scored the options."""
        self.markup = markup
        if markup is not None:
            table = markup.table
            self.core.set_markup(
                policy=_core.MarkupPolicy.__members__[markup.policy],
                starts=[option.start for option in markup.options],
                ends=[option.end for option in markup.options],
                targets=[list(option.target) for option in markup.options],
                values=[option.log_prob / table[1] if table else 0.0 for option in markup.options],
            )
        built = self.core.lookup(list(sentence.words))
        scores = estimates = None
        pending = self.core.pending() if self.python else []
        if pending:
            pairs = [self.pair(table, entry, source) for table, entry, source in pending]
            scores, estimates = self.model.collect(self.python, pairs)
        self.core.finish(built, scores, estimates)
        self.model.begin_sentence(sentence)
        options = self.materialize(built, sentence) if self.objects else None
        if self.contextual and len(built):
            scores, estimates = self.contextual_scores(built, sentence, options)
            isolation, future = weighted_rows(scores, estimates, self.model.weights)
            if options is not None:
                self.model.apply_contextual(options, scores, isolation, future)
            built.add_contextual(scores, isolation, future)
        return built, options

    def contextual_scores(
        self, built: _core.BuiltOptions, sentence: Sentence, options: SentenceOptions | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The per-sentence features' scores and estimates of the options (full-width rows): stored ones
        read, the rest asked of the features, as :meth:`LogLinearModel.contextual_scores` asks for all."""
        count = len(built)
        scores, estimates = np.zeros((count, self.model.dims)), np.zeros((count, self.model.dims))
        tables, entries = built.table, built.entry
        for feature in self.contextual:
            k = self.model.features.index(feature)
            lo, hi = self.model.offsets[k], self.model.offsets[k + 1]
            asked = np.ones(count, dtype=bool)
            for table, stored in self.columns.get(feature, []):  # scored in isolation already
                rows = np.flatnonzero(tables == table)
                asked[rows[~np.isnan(stored[entries[rows]]).any(axis=1)]] = False
            for table, stored in self.stored.get(feature, []):
                rows = np.flatnonzero(tables == table)
                found = np.asarray(stored[entries[rows]], dtype=np.float64)
                known = ~np.isnan(found).any(axis=1)
                scores[rows[known], lo:hi] = found[known]
                asked[rows[known]] = False
            indices = np.flatnonzero(asked).tolist()
            if indices:
                items = [options.options[i] for i in indices] if options else self.options_at(built, sentence, indices)
                s, e = self.model.collect([feature], items)
                scores[indices, lo:hi], estimates[indices, lo:hi] = s[:, lo:hi], e[:, lo:hi]
        return scores, estimates

    def pair(self, table: int, entry: int, source: str) -> PhrasePair:
        """An unscored phrase pair: table ``table``'s entry ``entry``, the unknown word ``source``
        (:data:`UNKNOWN_TABLE`), or the sentence's markup option ``entry`` (:data:`MARKUP_TABLE`)."""
        if table == UNKNOWN_TABLE:
            return PhrasePair(source, (source,), table=None, table_scores=None, alignment="0-0", unknown=True)
        if table == MARKUP_TABLE:
            assert self.markup is not None
            return self.markup.pair(entry)
        return self.tables[table].pair(entry, source)

    def materialize(self, built: _core.BuiltOptions, sentence: Sentence) -> SentenceOptions:
        """The options as Python objects, scored in isolation (before any per-sentence feature)."""
        result = SentenceOptions(sentence)
        result.options = self.options_at(built, sentence, range(len(built)))
        offsets, members = built.span_offsets.tolist(), built.span_options.tolist()
        for s, (start, end) in enumerate(zip(built.span_start.tolist(), built.span_end.tolist())):
            result.by_span[(start, end)] = [result.options[k] for k in members[offsets[s] : offsets[s + 1]]]
        return result

    def options_at(
        self, built: _core.BuiltOptions, sentence: Sentence, indices: Sequence[int]
    ) -> list[TranslationOption]:
        """Options ``indices`` as Python objects, scored in isolation."""
        starts, ends, tables, entries = (
            built.start.tolist(),
            built.end.tolist(),
            built.table.tolist(),
            built.entry.tolist(),
        )
        scores, isolation, future = built.scores, built.isolation.tolist(), built.future.tolist()
        made = []
        for k in indices:
            pair = self.pair(tables[k], entries[k], " ".join(sentence.words[starts[k] : ends[k]]))
            pair.scores, pair.isolation, pair.future = scores[k], isolation[k], future[k]
            made.append(TranslationOption(starts[k], ends[k], pair, k))
        return made
