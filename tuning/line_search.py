"""Och's exact line search: the BLEU-optimal step along one direction in weight space.

Along a direction ``r`` from weights ``w`` every candidate's model score is a line in the step
``g``: ``a + g * b`` with ``a = f . w`` and ``b = f . r``. Each sentence's decoder output, as a
function of ``g``, is its *upper envelope* of lines: a few candidates, each best on an interval.
Merging every sentence's change points and sweeping BLEU's sufficient statistics over them gives
corpus BLEU on every interval of the whole real line; the search returns the middle of the best.

The candidates of all sentences sit in padded ``(max candidates, sentences)`` arrays so that the
expensive part, finding which lines can ever reach an envelope, is a few whole-array numpy passes
that run across sentences at once: after sorting each sentence's lines by slope, a line can lead
for some ``g > 0`` only if no line of larger slope has an intercept as high (a running maximum
from the end), and for some ``g < 0`` only if no line of smaller slope does (from the start). The
few survivors then go through an exact convex-hull pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tuning.bleu import N_STATS, bleu


@dataclass
class CandidatePool:
    """The n-best candidates of every dev sentence, padded to a rectangle.

    ``features[j, k, s]`` is feature ``j`` of candidate ``k`` of sentence ``s`` (axis first, so a
    coordinate direction's slopes are one contiguous slice); ``valid`` marks real candidates.
    """

    features: np.ndarray  # (d, K, S)
    stats: np.ndarray  # (K, S, 9)
    valid: np.ndarray  # (K, S) bool

    @classmethod
    def from_lists(cls, features: Sequence[np.ndarray], stats: Sequence[np.ndarray]) -> CandidatePool:
        """Build from one ``(n_i, d)`` feature array and one ``(n_i, 9)`` statistics array per sentence."""
        if len(features) != len(stats):
            raise ValueError(f"{len(features)} feature arrays but {len(stats)} statistics arrays")
        if not features:
            raise ValueError("no sentences")
        d = np.asarray(features[0]).shape[1]
        width = max(len(f) for f in features)
        pool = cls(np.zeros((d, width, len(features))), np.zeros((width, len(features), N_STATS)),
                   np.zeros((width, len(features)), dtype=bool))
        for s, (f, st) in enumerate(zip(features, stats)):
            f, st = np.asarray(f, dtype=np.float64), np.asarray(st, dtype=np.float64)
            if f.ndim != 2 or f.shape[1] != d or st.shape != (len(f), N_STATS) or not len(f):
                raise ValueError(f"sentence {s}: need n x {d} features and n x {N_STATS} statistics with n > 0, "
                                 f"got {f.shape} and {st.shape}")
            pool.features[:, :len(f), s] = f.T
            pool.stats[:len(f), s] = st
            pool.valid[:len(f), s] = True
        return pool

    @property
    def dimension(self) -> int:
        return self.features.shape[0]

    def scores(self, weights: np.ndarray) -> np.ndarray:
        """Model scores ``(K, S)``; padding scores minus infinity."""
        return np.where(self.valid, np.tensordot(weights, self.features, axes=1), -np.inf)

    def bleu(self, weights: np.ndarray) -> float:
        """Corpus BLEU of each sentence's best candidate under ``weights`` (first one on ties)."""
        best = np.argmax(self.scores(weights), axis=0)
        return float(bleu(self.stats[best, np.arange(len(best))].sum(axis=0)))

    def slope_order(self, slopes: np.ndarray) -> np.ndarray:
        """Flat indices into ``(K, S)`` arrays that sort each sentence's slopes (padding last), as (K, S).

        Computed once per coordinate axis, since an axis's slopes are that feature's values.
        """
        rank = np.argsort(np.where(self.valid, slopes, np.inf), axis=0, kind="stable")
        index_type = np.int32 if slopes.size < 2 ** 31 else np.int64
        return (rank * slopes.shape[1] + np.arange(slopes.shape[1])).astype(index_type)


def envelope_candidates(a: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(candidate, sentence) of lines that can lead their sentence's envelope for some step (a small superset)."""
    a_sorted = a.ravel().take(order)
    before = np.empty_like(a_sorted)  # best intercept among smaller slopes
    before[0] = -np.inf
    np.maximum.accumulate(a_sorted[:-1], axis=0, out=before[1:])
    after = np.empty_like(a_sorted)  # best intercept among larger slopes
    after[-1] = -np.inf
    np.maximum.accumulate(a_sorted[:0:-1], axis=0, out=after[-2::-1])
    keep = (a_sorted >= np.minimum(before, after)) & (a_sorted > -np.inf)
    return np.divmod(order[keep], a.shape[1])


def upper_envelopes(rows: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Indices (into the given arrays) of each row's envelope lines, by row then increasing slope.

    The envelope of lines ``a + g * b`` is the upper convex hull of the points ``(b, a)``: among
    equal slopes only the highest intercept counts, and a point on or below the chord of its
    neighbours never leads. Removing all such points at once is safe (each is dominated by points
    that stay or are themselves dominated), so rounds repeat until the chain is convex.
    """
    idx = np.lexsort((a, b, rows))
    same_row_next = rows[idx][1:] == rows[idx][:-1]
    # equal slope in the same row: keep the last, which has the highest intercept
    duplicate = np.zeros(len(idx), dtype=bool)
    duplicate[:-1] = same_row_next & (b[idx][1:] == b[idx][:-1])
    idx = idx[~duplicate]
    while True:
        r, x, y = rows[idx], b[idx], a[idx]
        interior = np.zeros(len(idx), dtype=bool)
        interior[1:-1] = (r[:-2] == r[1:-1]) & (r[2:] == r[1:-1])
        below = np.zeros(len(idx), dtype=bool)
        below[1:-1] = (y[1:-1] - y[:-2]) * (x[2:] - x[:-2]) <= (y[2:] - y[:-2]) * (x[1:-1] - x[:-2])
        drop = interior & below
        if not drop.any():
            return idx
        idx = idx[~drop]


def line_search(pool: CandidatePool, a: np.ndarray, b: np.ndarray, order: np.ndarray | None = None
                ) -> tuple[float, float]:
    """The best step ``g`` for scores ``a + g * b`` (``(S, K)`` arrays) and its BLEU, by exact envelope sweep.

    BLEU is constant on the open intervals between change points; the answer is the middle of the
    best one. Ties go to the interval holding ``g = 0`` (stay where we are), then to the leftmost;
    an unbounded best interval is entered 1 past its finite end.
    """
    if order is None:
        order = pool.slope_order(b)
    cands, rows = envelope_candidates(a, order)
    la, lb = a[cands, rows], b[cands, rows]
    hull = upper_envelopes(rows, la, lb)
    rows, cands, la, lb = rows[hull], cands[hull], la[hull], lb[hull]
    stats = pool.stats[cands, rows]
    first = np.ones(len(rows), dtype=bool)
    first[1:] = rows[1:] != rows[:-1]
    base = stats[first].sum(axis=0)  # every row's leftmost line: the leader as g -> -infinity
    change = ~first
    prev = np.flatnonzero(change) - 1
    points = (la[prev] - la[change]) / (lb[change] - lb[prev])  # where line k overtakes line k-1
    by_step = np.argsort(points, kind="stable")
    points, deltas = points[by_step], (stats[change] - stats[prev])[by_step]
    last_of_group = np.ones(len(points), dtype=bool)
    last_of_group[:-1] = points[1:] != points[:-1]
    bounds = points[last_of_group]
    totals = np.vstack([base[None, :], base + np.cumsum(deltas, axis=0)[last_of_group]])
    scores = np.atleast_1d(bleu(totals))  # scores[i]: interval (bounds[i-1], bounds[i])
    best = int(np.argmax(scores))
    current = int(np.searchsorted(bounds, 0.0))
    if (current == len(bounds) or bounds[current] != 0.0) and scores[current] == scores[best]:
        return 0.0, float(scores[current])
    if len(bounds) == 0:
        step = 0.0
    elif best == 0:
        step = float(bounds[0]) - 1.0
    elif best == len(bounds):
        step = float(bounds[-1]) + 1.0
    else:
        step = float(bounds[best - 1] + bounds[best]) / 2
    return step, float(scores[best])
