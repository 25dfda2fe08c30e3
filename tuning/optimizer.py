"""MERT's optimizer: exact line searches along coordinate axes and random directions, with restarts.

From each starting point (the given weights, then ``restarts`` points drawn uniformly between
``lower`` and ``upper``) it repeats sweeps over the coordinate axes of the tunable features,
moving to the BLEU-optimal point of each line at once, until a sweep gains less than ``epsilon``
BLEU; then it tries ``random_directions`` random unit directions, and resumes sweeping if one of
them helped. The best point over all starts wins (the earliest on ties, the given weights first),
so tuning never makes dev BLEU worse on the n-best lists.

Every start draws its point and its random directions from a generator of its own, spawned from
``seed`` (``numpy.random.SeedSequence.spawn``), so the starts are independent of each other and
may climb at once wherever a :class:`Mapper` runs them (``pysmt tune``: on its local processes or
its cluster): the same inputs give the same weights however the starts are spread.

Moses' ``mert`` (SimpleOptimizer) instead line-searches every axis from the same point and moves
once a sweep, along the best of them. On Moses' ``mert.basic`` statistics both orders reach Moses'
BLEU with each of 20 seeds, and moving at once puts every improving line search to use. What does
matter there is where a line search lands in an unbounded interval, and that follows Moses
(:data:`tuning.line_search.PAST_FIRST`).

With a ``trust_region``, as ``pysmt tune`` runs it, every line search stays within a box around
the given weights (:func:`trust_region_bounds`) and the restarts are drawn inside it: the pool was
decoded at those weights and says little about translations far from them.

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
from typing import Protocol, TypeVar

import numpy as np

from tuning.line_search import CandidatePool, line_search

#: Where random restarts are drawn: mert-moses.pl's default range for every feature.
DEFAULT_LOWER, DEFAULT_UPPER = 0.0, 1.0

S = TypeVar("S")
J = TypeVar("J")
R = TypeVar("R")


def constant_features(pool: CandidatePool) -> np.ndarray:
    """Boolean mask of features constant within every sentence's candidates (no signal to tune)."""
    starts = pool.offsets[:-1]
    high = np.maximum.reduceat(pool.features, starts, axis=1)
    low = np.minimum.reduceat(pool.features, starts, axis=1)
    return np.asarray(~(high > low).any(axis=1))


@dataclass
class _Climber:
    """Coordinate ascent over one candidate pool, from any starting point."""

    pool: CandidatePool
    tunable: np.ndarray
    epsilon: float
    random_directions: int
    #: The trust region: every weight stays between these (-inf and inf: no bound).
    low: np.ndarray
    high: np.ndarray

    def steps(self, weights: np.ndarray, direction: np.ndarray) -> tuple[float, float]:
        """How far the line search may go from ``weights`` along ``direction`` within the trust region."""
        with np.errstate(divide="ignore", invalid="ignore"):
            to_low, to_high = (self.low - weights) / direction, (self.high - weights) / direction
        moving = direction != 0.0
        ends = np.where(direction > 0.0, to_high, to_low)[moving]
        starts = np.where(direction > 0.0, to_low, to_high)[moving]
        return min(0.0, float(starts.max(initial=-np.inf))), max(0.0, float(ends.min(initial=np.inf)))

    def climb(self, weights: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, float]:
        weights = weights.copy()
        scores = self.pool.scores(weights)
        current = self.pool.bleu(weights)
        while True:
            start = current
            for j in self.tunable:
                low, high = min(0.0, self.low[j] - weights[j]), max(0.0, self.high[j] - weights[j])
                if low == high:
                    continue
                step, value = line_search(self.pool, scores, self.pool.features[j], low, high)
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
                low, high = self.steps(weights, direction)
                if low == high:
                    continue
                step, value = line_search(self.pool, scores, slopes, low, high)
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


class Mapper(Protocol):
    """How the starts are climbed: ``function(shared, job)`` for every job, the results in the jobs' order.

    ``shared`` (the candidate pool, with the climbing settings) is the same for every job and far
    larger than one, so a mapper that runs the jobs elsewhere sends it there once, not with each job.
    """

    def __call__(self, function: Callable[[S, J], R], jobs: Sequence[J], shared: S, /) -> list[R]: ...


def in_turn(function: Callable[[S, J], R], jobs: Sequence[J], shared: S) -> list[R]:
    """The optimizer's own mapper: every job in this process, one after the other."""
    return [function(shared, job) for job in jobs]


def _climb(climber: _Climber, start: _Start) -> tuple[np.ndarray, float]:
    return climber.climb(start.weights, start.rng)


def optimize(
    features: Sequence[np.ndarray],
    stats: Sequence[np.ndarray],
    init: Sequence[float],
    *,
    lower: Sequence[float] | float | None = None,
    upper: Sequence[float] | float | None = None,
    restarts: int = 20,
    seed: int = 0,
    fixed: Sequence[bool] | None = None,
    random_directions: int = 3,
    epsilon: float = 0.01,
    trust_region: float = np.inf,
    mapper: Mapper = in_turn,
) -> tuple[np.ndarray, float]:
    """MERT: weights maximizing corpus BLEU of the 1-best candidates, and that BLEU (0-100, sacrebleu's scale).

    ``features[i]`` is an ``(n_i, d)`` array of candidate feature values of dev sentence ``i`` and
    ``stats[i]`` the ``(n_i, 9)`` BLEU statistics of the same candidates (Moses' order, see
    :mod:`tuning.bleu`). ``lower``/``upper`` bound the random restart points (scalars or one value
    per feature; default 0 and 1, as ``mert-moses.pl``). ``fixed`` marks features whose weight must
    not move. ``trust_region`` bounds how far each weight may move from ``init``
    (:func:`trust_region_bounds`; the restarts are then drawn within those bounds instead of
    ``lower``/``upper``). ``mapper`` climbs the starts (a :class:`Mapper`: by default here, one after the other;
    ``pysmt tune`` climbs them on its processes or its cluster); it does not change the result.
    """
    pool = CandidatePool.from_lists(features, stats)
    d = pool.dimension
    init_w = np.asarray(init, dtype=np.float64)
    if init_w.shape != (d,):
        raise ValueError(f"{len(init_w)} initial weights for {d} features")
    frozen = np.zeros(d, dtype=bool) if fixed is None else np.asarray(fixed, dtype=bool)
    constant = constant_features(pool)
    tunable = np.flatnonzero(~frozen & ~constant)
    box_low, box_high = trust_region_bounds(init_w, tunable, trust_region)
    if np.isfinite(trust_region):
        low, high = box_low, box_high
    else:
        low = np.broadcast_to(np.asarray(DEFAULT_LOWER if lower is None else lower, dtype=np.float64), (d,))
        high = np.broadcast_to(np.asarray(DEFAULT_UPPER if upper is None else upper, dtype=np.float64), (d,))
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(restarts + 1)]
    starts = [_Start(init_w.copy(), rngs[0])]
    for rng in rngs[1:]:
        point = init_w.copy()
        point[tunable] = rng.uniform(low[tunable], high[tunable])
        starts.append(_Start(point, rng))
    climber = _Climber(pool, tunable, epsilon, random_directions, box_low, box_high)
    results = mapper(_climb, starts, climber)
    best_w, best_bleu = results[0]
    for w, value in results[1:]:
        if value > best_bleu:
            best_w, best_bleu = w, value
    return l1_normalized(best_w, tunable, constant), best_bleu


def trust_region_bounds(weights: np.ndarray, tunable: np.ndarray, size: float) -> tuple[np.ndarray, np.ndarray]:
    """The lowest and highest value of each weight within the trust region of ``size`` around ``weights``.

    A tunable weight may move by ``size`` times the larger of its own magnitude and the mean
    magnitude of the tunable weights (so that a weight near 0 may still move; 1 when they are all
    0); the others stay.
    ``size`` 1 lets a weight drop to 0 or double, but not change sign unless it is small beside the
    rest: the sign decides whether the search avoids or seeks a feature, and a pool decoded while
    avoiding it holds no translation that seeks it more than its n-best lists happened to (MERT's
    collapse on Multi30k, docs/results.md). ``inf``: no bounds.
    """
    low, high = weights.copy(), weights.copy()
    if not len(tunable):
        return low, high
    magnitude = np.abs(weights[tunable])
    floor = magnitude.mean() or 1.0  # every weight 0: the scale is free, take the L1-normalized one's
    radius = size * np.maximum(magnitude, floor) if np.isfinite(size) else np.inf
    low[tunable] -= radius
    high[tunable] += radius
    return low, high


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
