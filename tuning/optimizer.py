"""MERT's optimizer: exact line searches along coordinate axes and random directions, with restarts.

From each starting point (the given weights, then ``restarts`` points drawn uniformly between
``lower`` and ``upper``) it repeats sweeps over the coordinate axes of the tunable features,
moving to the BLEU-optimal point of each line at once, until a sweep gains less than ``epsilon``
BLEU; then it tries ``random_directions`` random unit directions, and resumes sweeping if one of
them helped. The best point over all starts wins (the earliest on ties, the given weights first),
so tuning never makes dev BLEU worse on the n-best lists.

Every start draws its point and its random directions from a generator of its own, spawned from
``seed`` (``numpy.random.SeedSequence.spawn``), so the starts are independent of each other and
may climb on ``processes`` forked workers at once: the same inputs give the same weights whatever
the number of processes.

Moses' ``mert`` (SimpleOptimizer) instead line-searches every axis from the same point and moves
once a sweep, along the best of them. On Moses' ``mert.basic`` statistics both orders reach Moses'
BLEU with each of 20 seeds, and moving at once puts every improving line search to use. What does
matter there is where a line search lands in an unbounded interval, and that follows Moses
(:data:`tuning.line_search.PAST_FIRST`).

Fixed features (``fixed``) keep their weights; features whose value never varies within a
sentence's list cannot change any decision and keep their weights too (reported by
:func:`constant_features`).

The result is L1-normalized as Moses' ``mert`` does: the tuned weights are divided by the sum of
their absolute values. Scaling does not change which candidate wins (when the untuned features are
constant within each sentence's list, which is checked), but it keeps the weights' scale, and so
the decoder's beam threshold, the same from one iteration to the next; without it, line searches
that end far out on a line inflate the scale and the next decode prunes much harder.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pysmt.parallel import ordered_map, shared
from tuning.line_search import CandidatePool, line_search

#: Where random restarts are drawn: mert-moses.pl's default range for every feature.
DEFAULT_LOWER, DEFAULT_UPPER = 0.0, 1.0


def constant_features(pool: CandidatePool) -> np.ndarray:
    """Boolean mask of features constant within every sentence's candidates (no signal to tune)."""
    starts = pool.offsets[:-1]
    high = np.maximum.reduceat(pool.features, starts, axis=1)
    low = np.minimum.reduceat(pool.features, starts, axis=1)
    return ~(high > low).any(axis=1)


@dataclass
class _Climber:
    """Coordinate ascent over one candidate pool, from any starting point."""

    pool: CandidatePool
    tunable: np.ndarray
    epsilon: float
    random_directions: int

    def climb(self, weights: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, float]:
        weights = weights.copy()
        scores = self.pool.scores(weights)
        current = self.pool.bleu(weights)
        while True:
            start = current
            for j in self.tunable:
                step, value = line_search(self.pool, scores, self.pool.features[j])
                if value > current and step != 0.0:
                    weights[j] += step
                    scores += step * self.pool.features[j]
                    current = value
            if current - start >= self.epsilon:
                continue
            improved = False
            for _ in range(self.random_directions):
                direction = np.zeros(self.pool.dimension)
                direction[self.tunable] = rng.standard_normal(len(self.tunable))
                direction /= np.linalg.norm(direction)
                slopes = direction @ self.pool.features
                step, value = line_search(self.pool, scores, slopes)
                if value > current and step != 0.0:
                    weights += step * direction
                    scores += step * slopes
                    improved = improved or value - current >= self.epsilon
                    current = value
            if not improved:
                return weights, current


@dataclass
class _Start:
    """One start of the optimizer: a point to climb from and the generator of its random directions."""

    weights: np.ndarray
    rng: np.random.Generator


#: Runs ``function(job)`` for every job, in order, with :func:`~pysmt.parallel.shared` giving the third argument.
Mapper = Callable[[Callable[[_Start], tuple[np.ndarray, float]], Sequence[_Start], Any], list[tuple[np.ndarray, float]]]


def _climb(start: _Start) -> tuple[np.ndarray, float]:
    climber: _Climber = shared()
    return climber.climb(start.weights, start.rng)


def optimize(features: Sequence[np.ndarray], stats: Sequence[np.ndarray], init: Sequence[float], *,
             lower: Sequence[float] | float | None = None, upper: Sequence[float] | float | None = None,
             restarts: int = 20, seed: int = 0, fixed: Sequence[bool] | None = None,
             random_directions: int = 3, epsilon: float = 0.01, processes: int = 1,
             mapper: Mapper | None = None) -> tuple[np.ndarray, float]:
    """MERT: weights maximizing corpus BLEU of the 1-best candidates, and that BLEU (0-100, sacrebleu's scale).

    ``features[i]`` is an ``(n_i, d)`` array of candidate feature values of dev sentence ``i`` and
    ``stats[i]`` the ``(n_i, 9)`` BLEU statistics of the same candidates (Moses' order, see
    :mod:`tuning.bleu`). ``lower``/``upper`` bound the random restart points (scalars or one value
    per feature; default 0 and 1, as ``mert-moses.pl``). ``fixed`` marks features whose weight must
    not move. ``processes`` climbs that many starts at once; ``mapper`` climbs them elsewhere
    instead (a cluster's :meth:`~pysmt.cluster.Cluster.map`); neither changes the result.
    """
    pool = CandidatePool.from_lists(features, stats)
    d = pool.dimension
    init_w = np.asarray(init, dtype=np.float64)
    if init_w.shape != (d,):
        raise ValueError(f"{len(init_w)} initial weights for {d} features")
    frozen = np.zeros(d, dtype=bool) if fixed is None else np.asarray(fixed, dtype=bool)
    constant = constant_features(pool)
    tunable = np.flatnonzero(~frozen & ~constant)
    low = np.broadcast_to(np.asarray(DEFAULT_LOWER if lower is None else lower, dtype=np.float64), (d,))
    high = np.broadcast_to(np.asarray(DEFAULT_UPPER if upper is None else upper, dtype=np.float64), (d,))
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(restarts + 1)]
    starts = [_Start(init_w.copy(), rngs[0])]
    for rng in rngs[1:]:
        point = init_w.copy()
        point[tunable] = rng.uniform(low[tunable], high[tunable])
        starts.append(_Start(point, rng))
    climber = _Climber(pool, tunable, epsilon, random_directions)
    if mapper is None:
        results = ordered_map(_climb, starts, processes, shared=climber)
    else:
        results = mapper(_climb, starts, climber)
    best_w, best_bleu = results[0]
    for w, value in results[1:]:
        if value > best_bleu:
            best_w, best_bleu = w, value
    return l1_normalized(best_w, tunable, constant), best_bleu


def l1_normalized(weights: np.ndarray, tuned: np.ndarray, constant: np.ndarray) -> np.ndarray:
    """``weights`` with the ``tuned`` ones divided by their L1 norm, when that changes no sentence's ranking:
    when every other feature is ``constant`` (the mask of :func:`constant_features`)."""
    untuned = np.ones(len(weights), dtype=bool)
    untuned[tuned] = False
    norm = float(np.abs(weights[tuned]).sum())
    if norm == 0.0 or not constant[untuned].all():
        return weights  # an untuned feature varies within a list: scaling the others would change rankings
    normalized = weights.copy()
    normalized[tuned] /= norm
    return normalized
