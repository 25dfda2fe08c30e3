"""The log-linear model: features, their weights, and the scoring of options and hypotheses.

The model's score vector is the concatenation of every feature's scores, in config order; a
feature owns the slice ``[offset, offset + num_scores)``. The search only sees weighted totals,
the n-best list the full vector.
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import mul

import numpy as np

from pysmt.features.base import BatchedStatefulFeature, Feature, StatefulFeature
from pysmt.search.hypothesis import Hypothesis
from pysmt.search.options import PhrasePair, Sentence, SentenceOptions, TranslationOption


class LogLinearModel:
    """Features with one weight per score; evaluates phrase pairs and extends hypotheses."""

    def __init__(self, features: Sequence[Feature], weights: Sequence[Sequence[float]]) -> None:
        self.features = list(features)
        self.offsets = np.cumsum([0] + [f.num_scores for f in self.features]).tolist()
        self.dims = self.offsets[-1]
        self.phrase_tables = [f for f in self.features if getattr(f, "provides_phrases", False)]
        # Unbatched stateful features first, then batched ones: hypotheses' states follow this order.
        stateful = [f for f in self.features if isinstance(f, StatefulFeature)]
        self.stateful = [f for f in stateful if not isinstance(f, BatchedStatefulFeature)] + \
                        [f for f in stateful if isinstance(f, BatchedStatefulFeature)]
        self.stateful_offsets = [self.offsets[self.features.index(f)] for f in self.stateful]
        self.batched = [k for k, f in enumerate(self.stateful) if isinstance(f, BatchedStatefulFeature)]
        self.set_weights(weights)

    def set_weights(self, weights: Sequence[Sequence[float]]) -> None:
        """Install new weights (one list per feature, in feature order)."""
        self.weights = np.concatenate([np.asarray(w, dtype=np.float64) for w in weights]) if weights else np.zeros(0)
        self.stateful_weights = [tuple(self.feature_weights(f).tolist()) for f in self.stateful]
        # What the hot loop of extend() needs, bound once: (index, extend, final, weights, single weight).
        self._plain = [(k, f.extend, f.final, self.stateful_weights[k], f.num_scores == 1)
                       for k, f in enumerate(self.stateful) if k not in self.batched]

    def feature_weights(self, feature: Feature) -> np.ndarray:
        k = self.features.index(feature)
        return self.weights[self.offsets[k]:self.offsets[k + 1]]

    def _collect(self, features: Sequence[Feature], items: Sequence) -> tuple[np.ndarray, np.ndarray]:
        """Scores and estimates of ``items`` by ``features``, as full-width matrices."""
        scores = np.zeros((len(items), self.dims))
        estimates = np.zeros((len(items), self.dims))
        for feature in features:
            k = self.features.index(feature)
            lo, hi = self.offsets[k], self.offsets[k + 1]
            s, e = feature.evaluate(items)
            if s is not None:
                scores[:, lo:hi] = s
            if e is not None:
                estimates[:, lo:hi] = e
        return scores, estimates

    def evaluate_pairs(self, pairs: Sequence[PhrasePair]) -> None:
        """Score phrase pairs with the context-free features (once per pair; cached by the caller)."""
        scores, estimates = self._collect([f for f in self.features if f.context_free], pairs)
        isolation = scores @ self.weights
        future = isolation + estimates @ self.weights
        for k, pair in enumerate(pairs):
            pair.scores = scores[k]
            pair.estimates = estimates[k]
            pair.isolation = float(isolation[k])
            pair.future = float(future[k])

    def evaluate_options(self, sentence: Sentence, options: SentenceOptions) -> None:
        """Start a sentence: per-sentence features score all its options in one batch each."""
        for feature in self.features:
            feature.begin_sentence(sentence)
        contextual = [f for f in self.features if not f.context_free]
        if not contextual or not options.options:
            return
        scores, estimates = self._collect(contextual, options.options)
        isolation = scores @ self.weights
        future = isolation + estimates @ self.weights
        for k, option in enumerate(options.options):
            option.scores = option.pair.scores + scores[k]
            option.isolation = option.pair.isolation + float(isolation[k])
            option.future = option.pair.future + float(future[k])
        for span_options in options.by_span.values():
            span_options.sort(key=lambda option: -option.future)

    def end_sentence(self) -> None:
        for feature in self.features:
            feature.end_sentence()

    def initial_hypothesis(self, sentence: Sentence, future_cost: float) -> Hypothesis:
        states = tuple(f.initial_state(sentence) for f in self.stateful)
        hyp = Hypothesis(None, None, 0, 0, 0, 0.0, states, (), 0)
        hyp.future = future_cost
        return hyp

    def extend(self, hyp: Hypothesis, option: TranslationOption, future_cost: float,
               complete: bool, seq: int) -> Hypothesis:
        """Apply ``option`` to ``hyp``: stateful features score it (and the sentence end when ``complete``)."""
        score = hyp.score + option.isolation
        old_states = hyp.states
        states = []
        deltas = []
        for k, extend, final, weights, single in self._plain:
            delta, state = extend(old_states[k], hyp, option)
            if complete:
                end = final(state)
                if end is not None:
                    delta = tuple([a + b for a, b in zip(delta, end)])
            score += weights[0] * delta[0] if single else sum(map(mul, weights, delta))
            states.append(state)
            deltas.append(delta)
        pending = None
        if self.batched:
            pending = []
            for k in self.batched:
                feature = self.stateful[k]
                ticket, state = feature.request(old_states[k], hyp, option)  # type: ignore[attr-defined]
                pending.append((k, ticket))
                if complete:
                    ticket, _ = feature.request(state, hyp, None)  # type: ignore[attr-defined]
                    pending.append((k, ticket))
                states.append(state)
                deltas.append(None)
        new = Hypothesis(hyp, option, hyp.coverage | ((1 << option.end) - (1 << option.start)),
                         hyp.covered + option.end - option.start, option.end, score, tuple(states), tuple(deltas), seq)
        new.future = score + future_cost
        if pending is not None:
            new.pending = pending
            if any(self.stateful[k].buffer_full() for k in self.batched):  # type: ignore[attr-defined]
                self.flush()
        return new

    def flush(self) -> None:
        """Let every batched feature score its queued requests."""
        for k in self.batched:
            self.stateful[k].flush()  # type: ignore[attr-defined]

    def resolve(self, hyps: Sequence[Hypothesis]) -> None:
        """Flush batched features and add their scores to hypotheses created since the last resolve."""
        waiting = [h for h in hyps if h.pending is not None]
        if not waiting:
            return
        self.flush()
        for hyp in waiting:
            deltas = list(hyp.deltas)
            gained = 0.0
            for k, ticket in hyp.pending:  # type: ignore[union-attr]
                scores = self.stateful[k].result(ticket)  # type: ignore[attr-defined]
                deltas[k] = scores if deltas[k] is None else tuple(a + b for a, b in zip(deltas[k], scores))
                gained += sum(map(mul, self.stateful_weights[k], scores))
            hyp.deltas = tuple(deltas)
            hyp.score += gained
            hyp.future += gained
            hyp.pending = None

    def breakdown(self, path: Sequence[Hypothesis]) -> np.ndarray:
        """The unweighted score vector of a derivation (hypotheses from first to last option)."""
        total = np.zeros(self.dims)
        for hyp in path:
            total += hyp.option.scores  # type: ignore[union-attr]
            for k, delta in enumerate(hyp.deltas):
                lo = self.stateful_offsets[k]
                total[lo:lo + len(delta)] += delta
        return total
