"""The log-linear model: features, their weights, and the scoring of options and hypotheses.

The model's score vector is the concatenation of every feature's scores, in config order; a
feature owns the slice ``[offset, offset + num_scores)``. The search only sees weighted totals,
the n-best list the full vector. The weighted sums are here too, in the one order both engines add
them (:func:`weighted_sum`, :func:`weighted_columns`, :func:`weighted_rows`).
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import mul
from typing import cast

import numpy as np

from pysmt.errors import FeatureError
from pysmt.features.base import (
    FORBIDDEN,
    CompiledTwin,
    Feature,
    PhraseSource,
    StatefulFeature,
    StoredColumns,
    with_source_context,
)
from pysmt.phrases import PhrasePair, Sentence, SentenceOptions, TranslationOption
from pysmt.search.hypothesis import Hypothesis, Request
from pysmt.search.plugin_results import StatefulCalls, checked_evaluation


def weighted_columns(matrix: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Each row's weighted sum, added column by column from the left (as :func:`weighted_sum` adds):
    the same bits whatever else is in the batch and on whatever processor. (A BLAS product sums in
    an order that depends on the rows around and the processor's vector width.)"""
    total = np.zeros(len(matrix))
    for column, weight in enumerate(weights.tolist()):
        total += matrix[:, column] * weight
    return total


def weighted_rows(scores: np.ndarray, estimates: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's weighted score, and that plus its weighted estimates (future): both -inf for a row
    with a -inf score (a forbidden translation), whatever the weights."""
    with np.errstate(all="ignore"):  # overflow and inf * 0 are dealt with here, or by the search
        isolation = weighted_columns(scores, weights)
        future = isolation + weighted_columns(estimates, weights)
    if len(scores) and not (scores > FORBIDDEN).all():
        forbidden = (scores == FORBIDDEN).any(axis=1)
        isolation[forbidden] = future[forbidden] = FORBIDDEN
    return isolation, future


def column_row(columns: dict[str, np.ndarray], pair: PhrasePair) -> np.ndarray | None:
    """A pair's scores in a feature's stored columns (:class:`~pysmt.features.base.StoredColumns`, by table
    name), or None when its table has none or its row has a NaN (no stored score)."""
    stored = columns.get(pair.table) if pair.table is not None and pair.entry >= 0 else None
    if stored is None:
        return None
    row = stored[pair.entry]
    return None if np.isnan(row).any() else row


def weighted_sum(weights: Sequence[float], scores: Sequence[float]) -> float:
    """``sum(w * s)`` left to right (as the compiled core adds), -inf when a score is -inf."""
    if FORBIDDEN in scores:
        return FORBIDDEN
    return sum(map(mul, weights, scores))


class LogLinearModel:
    """Features with one weight per score; evaluates phrase pairs and extends hypotheses.

    Stateful features come in two groups, in this order in a hypothesis' states: the *immediate*
    ones, with a compiled twin in the core (:class:`~pysmt.features.base.CompiledTwin`: KenLM,
    distortion, lexicalized reordering),
    scored as each hypothesis is built; and the *deferred* ones (every other stateful feature),
    asked in batches through their array interface (:meth:`StatefulFeature.score_batch`) by
    :meth:`resolve`. A hypothesis with deferred scores still to come has ``pending`` requests.

    What features return enters through :mod:`pysmt.search.plugin_results`, checked: the evaluation
    hooks' arrays here, the deferred features' through their :class:`StatefulCalls` (``calls``), which the
    compiled core calls too. A -inf score forbids the option or extension, whatever its weight.
    """

    def __init__(self, features: Sequence[Feature], weights: Sequence[Sequence[float]]) -> None:
        self.features = list(features)
        self.offsets = np.cumsum([0] + [f.num_scores for f in self.features]).tolist()
        self.dims = self.offsets[-1]
        self.phrase_tables = [f for f in self.features if isinstance(f, PhraseSource)]
        #: Per-sentence features' stored columns (:class:`StoredColumns`): by feature number, by table name.
        self.columns: dict[int, dict[str, np.ndarray]] = {}
        for k, feature in enumerate(self.features):
            if with_source_context(feature) and isinstance(feature, StoredColumns):
                found = {
                    t.name: values
                    for t in cast(list[Feature], self.phrase_tables)
                    if (values := feature.stored_columns(t.name)) is not None
                }
                for table, values in found.items():
                    if values.dtype != np.float32 or values.shape[1:] != (feature.num_scores,):
                        raise FeatureError(
                            f"feature {feature.name}: its stored columns of {table} must be float32, "
                            f"{feature.num_scores} a row, not {values.dtype} of shape {list(values.shape)}"
                        )
                if found:
                    self.columns[k] = found
        stateful = [f for f in self.features if isinstance(f, StatefulFeature)]
        immediate = [f for f in stateful if isinstance(f, CompiledTwin)]
        self.stateful: list[StatefulFeature] = immediate + [f for f in stateful if f not in immediate]
        self.stateful_offsets = [self.offsets[self.features.index(f)] for f in self.stateful]
        self.deferred = list(range(len(immediate), len(self.stateful)))
        #: The deferred features' array interface, checked (by index into ``stateful``).
        self.calls = {k: StatefulCalls(self.stateful[k]) for k in self.deferred}
        self.answers: dict[Request, tuple[tuple[float, ...], int]] = {}
        self.set_weights(weights)

    def set_weights(self, weights: Sequence[Sequence[float]]) -> None:
        """Install new weights (one list per feature, in feature order)."""
        self.weights = np.concatenate([np.asarray(w, dtype=np.float64) for w in weights]) if weights else np.zeros(0)
        self.stateful_weights = [tuple(self.feature_weights(f).tolist()) for f in self.stateful]
        # What the hot loop of extend() needs, bound once: (index, extend, final, weights, single weight).
        self._plain = [
            (k, f.extend, f.final, self.stateful_weights[k], f.num_scores == 1)
            for k, f in enumerate(self.stateful)
            if k not in self.deferred
        ]

    def feature_weights(self, feature: Feature) -> np.ndarray:
        k = self.features.index(feature)
        return self.weights[self.offsets[k] : self.offsets[k + 1]]

    def collect(self, features: Sequence[Feature], items: Sequence) -> tuple[np.ndarray, np.ndarray]:
        """Scores and estimates of ``items`` by ``features``, as full-width matrices."""
        scores = np.zeros((len(items), self.dims))
        estimates = np.zeros((len(items), self.dims))
        for feature in features:
            k = self.features.index(feature)
            lo, hi = self.offsets[k], self.offsets[k + 1]
            s, e = checked_evaluation(feature, items)
            if s is not None:
                scores[:, lo:hi] = s
            if e is not None:
                estimates[:, lo:hi] = e
        return scores, estimates

    def evaluate_pairs(self, pairs: Sequence[PhrasePair]) -> None:
        """Score phrase pairs with the context-free features, and per-sentence features' stored columns (once per
        pair; cached by the caller)."""
        scores, estimates = self.collect([f for f in self.features if not with_source_context(f)], pairs)
        for k, columns in self.columns.items():  # per-sentence features' stored columns: the tables' own
            lo, hi = self.offsets[k], self.offsets[k + 1]
            for i, pair in enumerate(pairs):
                row = column_row(columns, pair)
                if row is not None:
                    scores[i, lo:hi] = row
        isolation, future = weighted_rows(scores, estimates, self.weights)
        for pair, row, estimate, weighted, best in zip(pairs, scores, estimates, isolation.tolist(), future.tolist()):
            pair.scores, pair.estimates, pair.isolation, pair.future = row, estimate, weighted, best

    def evaluate_options(self, sentence: Sentence, options: SentenceOptions) -> None:
        """Start a sentence: per-sentence features score all its options in one batch each."""
        self.begin_sentence(sentence)
        found = self.contextual_scores(options.options)
        if found is not None:
            self.apply_contextual(options, *found)

    def begin_sentence(self, sentence: Sentence) -> None:
        for feature in self.features:
            feature.begin_sentence(sentence)

    def contextual_scores(
        self, options: Sequence[TranslationOption]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The per-sentence features' scores of a sentence's options (full-width rows), with their weighted
        scores and estimates; None without such features or options. A feature's stored columns cover
        their options already (:meth:`evaluate_pairs`): it is asked only about the others."""
        contextual = [f for f in self.features if with_source_context(f)]
        if not contextual or not options:
            return None
        columned = [self.features[k] for k in self.columns]
        scores, estimates = self.collect([f for f in contextual if f not in columned], options)
        for k, columns in self.columns.items():
            lo, hi = self.offsets[k], self.offsets[k + 1]
            asked = [i for i, option in enumerate(options) if column_row(columns, option.pair) is None]
            if asked:
                s, e = self.collect([self.features[k]], [options[i] for i in asked])
                scores[asked, lo:hi], estimates[asked, lo:hi] = s[:, lo:hi], e[:, lo:hi]
        return (scores, *weighted_rows(scores, estimates, self.weights))

    def apply_contextual(
        self, options: SentenceOptions, scores: np.ndarray, isolation: np.ndarray, future: np.ndarray
    ) -> None:
        """Add per-sentence scores to the options' own, then sort each span's options best first again."""
        for k, option in enumerate(options.options):
            option.scores = option.pair.scores + scores[k]
            option.isolation = option.pair.isolation + float(isolation[k])
            option.future = option.pair.future + float(future[k])
        for span_options in options.by_span.values():
            span_options.sort(key=lambda option: -option.future)

    def end_sentence(self) -> None:
        self.answers.clear()
        for feature in self.features:
            feature.end_sentence()

    def initial_hypothesis(self, options: SentenceOptions, future_cost: float) -> Hypothesis:
        """The empty hypothesis of a sentence; the deferred features start their search over its options."""
        self.answers.clear()
        sentence = options.sentence
        states = tuple(
            self.calls[k].start(sentence, options.options) if k in self.calls else f.initial_state(sentence)
            for k, f in enumerate(self.stateful)
        )
        hyp = Hypothesis(None, None, 0, 0, 0, 0.0, states, (), 0)
        hyp.future = future_cost
        return hyp

    def extend(
        self, hyp: Hypothesis, option: TranslationOption, future_cost: float, complete: bool, seq: int
    ) -> Hypothesis:
        """Apply ``option`` to ``hyp``: immediate features score it (and the sentence end when ``complete``);
        deferred features' requests wait in ``pending`` for :meth:`resolve`."""
        score = hyp.score + option.isolation
        old_states = hyp.states
        states = []
        deltas = []
        for k, extend, final, weights, single in self._plain:
            delta, state = extend(old_states[k], option)
            if complete:
                end = final(state)
                if end is not None:
                    delta = tuple([a + b for a, b in zip(delta, end)])
            score += weights[0] * delta[0] if single else sum(map(mul, weights, delta))
            states.append(state)
            deltas.append(delta)
        new = Hypothesis(
            hyp,
            option,
            hyp.coverage | ((1 << option.end) - (1 << option.start)),
            hyp.covered + option.end - option.start,
            option.end,
            score,
            tuple(states) + (None,) * len(self.deferred),
            tuple(deltas) + (None,) * len(self.deferred),
            seq,
        )
        new.future = score + future_cost
        if self.deferred:
            new.pending = [(k, cast(int, old_states[k]), option.index, complete) for k in self.deferred]
        return new

    def resolve(self, hyps: Sequence[Hypothesis]) -> None:
        """Ask the deferred features for the pending scores of ``hyps``, each distinct request once a sentence."""
        waiting = [(h, h.pending) for h in hyps if h.pending is not None]
        if not waiting:
            return
        for k, calls in self.calls.items():
            asked = list(
                dict.fromkeys(
                    request
                    for _, pending in waiting
                    for request in pending
                    if request[0] == k and request not in self.answers
                )
            )
            for begin in range(0, len(asked), calls.buffer_size):
                batch = asked[begin : begin + calls.buffer_size]
                scores, new_states = calls.score_batch(
                    np.array([r[1] for r in batch], dtype=np.int64),
                    np.array([r[2] for r in batch], dtype=np.int32),
                    np.array([r[3] for r in batch], dtype=bool),
                )
                for request, row, state in zip(batch, scores.tolist(), new_states.tolist()):
                    self.answers[request] = (tuple(row), state)
        for hyp, pending in waiting:
            states, deltas = list(hyp.states), list(hyp.deltas)
            gained = 0.0
            for request in pending:
                k = request[0]
                answer, states[k] = self.answers[request]
                deltas[k] = answer
                gained += weighted_sum(self.stateful_weights[k], answer)
            hyp.states, hyp.deltas = tuple(states), tuple(deltas)
            hyp.score += gained
            hyp.future += gained
            hyp.pending = None

    def breakdown(self, path: Sequence[Hypothesis]) -> np.ndarray:
        """The unweighted score vector of a derivation (hypotheses from first to last option)."""
        total = np.zeros(self.dims)
        with np.errstate(over="ignore"):  # scores too large to add up are the decoder's error to report
            for hyp in path:
                total += cast(TranslationOption, hyp.option).scores
                for k, delta in enumerate(hyp.deltas):
                    assert delta is not None, "breakdown of a hypothesis with scores pending"
                    lo = self.stateful_offsets[k]
                    total[lo : lo + len(delta)] += delta
        return total
