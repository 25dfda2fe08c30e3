"""Och's exact line search: the BLEU-optimal step along one direction in weight space.

Along a direction ``r`` from weights ``w`` every candidate's model score is a line in the step
``g``: ``a + g * b`` with ``a = f . w`` and ``b = f . r``. Each sentence's decoder output, as a
function of ``g``, is its *upper envelope* of lines: a few candidates, each best on an interval.
Merging every sentence's change points and sweeping BLEU's sufficient statistics over them gives
corpus BLEU on every interval of the real line; the search returns the middle of the best one
(or, when that interval is unbounded, a point beyond its end: see :data:`PAST_FIRST`).

The envelopes are the inner loop of MERT (thousands of line searches over millions of
candidates), so they are compiled with numba: per sentence, one pass finds the leader at ``g = 0``
and the extreme slopes, a second keeps only lines on or above the chords that join them (a
quickhull step: lines below a chord never lead), and a gift-wrapping walk over the few survivors
yields the envelope from ``g = -inf`` to ``g = +inf``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numba
import numpy as np

from tuning.bleu import N_STATS, bleu

#: Relative slack when discarding lines below a chord, so rounding never drops an envelope line.
CHORD_SLACK = 1e-9

#: How far the step goes past the first change point when the best interval is the one reaching
#: ``-inf``, and past the last one when it reaches ``+inf``: Moses' ``mert`` values (from cmert).
#: BLEU is the same anywhere in the interval, but the next line searches start from that point:
#: far to the left the direction outweighs every other score (on an axis the feature ranks the
#: candidates and the rest mostly break its ties), and line searches along other directions
#: start from that ranking rather than from the edge of it. On Moses' ``mert.basic`` statistics
#: the best optimum weights the word penalty far above the rest; the starts that reach it step
#: 1000 left along that axis first, and with steps of 1 none of the 21 starts reached it.
PAST_FIRST, PAST_LAST = 1000.0, 0.1


@dataclass
class CandidatePool:
    """The n-best candidates of every dev sentence, concatenated.

    Sentence ``s`` owns candidates ``offsets[s]:offsets[s + 1]``; ``features[j]`` holds feature ``j``
    of every candidate (axis first, so a coordinate direction's slopes are one contiguous array).
    """

    features: np.ndarray  # (d, N)
    stats: np.ndarray  # (N, 9)
    offsets: np.ndarray  # (S + 1,)

    @classmethod
    def from_lists(cls, features: Sequence[np.ndarray], stats: Sequence[np.ndarray]) -> CandidatePool:
        """Build from one ``(n_i, d)`` feature array and one ``(n_i, 9)`` statistics array per sentence."""
        if len(features) != len(stats):
            raise ValueError(f"{len(features)} feature arrays but {len(stats)} statistics arrays")
        if not features:
            raise ValueError("no sentences")
        d = np.asarray(features[0]).shape[1]
        for s, (f, st) in enumerate(zip(features, stats)):
            f, st = np.asarray(f), np.asarray(st)
            if f.ndim != 2 or f.shape[1] != d or st.shape != (len(f), N_STATS) or not len(f):
                raise ValueError(
                    f"sentence {s}: need n x {d} features and n x {N_STATS} statistics with n > 0, "
                    f"got {f.shape} and {st.shape}"
                )
        offsets = np.concatenate([[0], np.cumsum([len(f) for f in features])]).astype(np.int64)
        return cls(
            np.ascontiguousarray(np.vstack(features).T, dtype=np.float64), np.vstack(stats).astype(np.float64), offsets
        )

    def sentences(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each sentence's ``(n_i, d)`` candidate features (rows contiguous) and ``(n_i, 9)`` statistics."""
        return [
            (np.ascontiguousarray(self.features[:, lo:hi].T), self.stats[lo:hi])
            for lo, hi in zip(self.offsets[:-1], self.offsets[1:])
        ]

    @property
    def dimension(self) -> int:
        return self.features.shape[0]

    def scores(self, weights: np.ndarray) -> np.ndarray:
        """Model score of every candidate."""
        return weights @ self.features

    def best(self, weights: np.ndarray) -> np.ndarray:
        """Each sentence's best candidate under ``weights`` (the first on ties)."""
        return segment_argmax(self.scores(weights), self.offsets)

    def bleu(self, weights: np.ndarray) -> float:
        """Corpus BLEU (0-100) of each sentence's best candidate under ``weights``."""
        return float(bleu(self.stats[self.best(weights)].sum(axis=0)))


@numba.njit(cache=True)
def segment_argmax(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Index of the first maximum of every segment ``values[offsets[s]:offsets[s + 1]]``."""
    out = np.empty(len(offsets) - 1, dtype=np.int64)
    for s in range(len(offsets) - 1):
        best = offsets[s]
        for k in range(offsets[s] + 1, offsets[s + 1]):
            if values[k] > values[best]:
                best = k
        out[s] = best
    return out


@numba.njit(cache=True)
def upper_envelopes(a: np.ndarray, b: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every sentence's upper envelope of the lines ``a[k] + g * b[k]``.

    Returns ``(lines, starts, counts)``: the envelope lines of all sentences in order (each
    sentence's from ``g = -inf`` rightwards), the step from which each leads (``-inf`` for a
    sentence's first), and how many lines each sentence has. Among equal lines the first wins.
    """
    n_sentences = len(offsets) - 1
    lines = np.empty(len(a), dtype=np.int64)
    starts = np.empty(len(a), dtype=np.float64)
    counts = np.zeros(n_sentences, dtype=np.int64)
    survivors = np.empty(len(a), dtype=np.int64)
    out = 0
    for s in range(n_sentences):
        lo, hi = offsets[s], offsets[s + 1]
        # leader at g = 0; smallest and largest slope (highest on ties); values kept in registers
        top, left, right = lo, lo, lo
        top_a, left_a, left_b, right_a, right_b = a[lo], a[lo], b[lo], a[lo], b[lo]
        for k in range(lo + 1, hi):
            ak, bk = a[k], b[k]
            if ak > top_a:
                top, top_a = k, ak
            if bk < left_b or (bk == left_b and ak > left_a):
                left, left_a, left_b = k, ak, bk
            if bk > right_b or (bk == right_b and ak > right_a):
                right, right_a, right_b = k, ak, bk
        # keep lines on or above the chords left-top and top-right (quickhull's first split); a
        # chord of zero width (the leader has an extreme slope) keeps nothing strictly beside it
        top_b = b[top]
        right_slope = (right_a - top_a) / (right_b - top_b) if right_b > top_b else np.inf
        left_slope = (left_a - top_a) / (left_b - top_b) if left_b < top_b else -np.inf
        m = 0
        for k in range(lo, hi):
            offset = b[k] - top_b
            slope = right_slope if offset >= 0.0 else left_slope
            chord = top_a + offset * slope if offset != 0.0 else top_a
            keep = a[k] >= chord - CHORD_SLACK * (abs(chord) + 1.0)
            survivors[m] = k
            m += keep or k == left or k == right or k == top
        # gift wrapping from the leader at -inf: the next leader is the line of larger slope that
        # overtakes the current one first (the steepest of those overtaking at the same step)
        current, start = left, -np.inf
        while True:
            lines[out] = current
            starts[out] = start
            out += 1
            counts[s] += 1
            best, best_step = -1, np.inf
            for i in range(m):
                k = survivors[i]
                if b[k] <= b[current]:
                    continue
                step = (a[current] - a[k]) / (b[k] - b[current])
                if step < best_step or (step == best_step and b[k] > b[best]):
                    best, best_step = k, step
            if best < 0:
                break
            current, start = best, max(best_step, start)
    return lines[:out], starts[:out], counts


def line_search(
    pool: CandidatePool, a: np.ndarray, b: np.ndarray, low: float = -np.inf, high: float = np.inf
) -> tuple[float, float]:
    """The best step ``g`` in ``[low, high]`` for scores ``a + g * b`` and its corpus BLEU (0-100), by exact
    envelope sweep.

    BLEU is constant on the open intervals between change points; the answer is the middle of the
    best one (cut to ``[low, high]``, which must hold 0: the bounds of MERT's trust region,
    :mod:`tuning.optimizer`). Ties go to the interval holding ``g = 0`` (stay where we are), then to
    the leftmost; an unbounded best interval is entered :data:`PAST_FIRST` before its first change
    point or :data:`PAST_LAST` after its last (before or after a bound, where that comes first).
    """
    lines, starts, _ = upper_envelopes(a, b, pool.offsets)
    stats = pool.stats[lines]
    first = starts == -np.inf
    base = stats[first].sum(axis=0)  # every sentence's leader as g -> -infinity
    change = np.flatnonzero(~first)
    by_step = np.argsort(starts[change], kind="stable")
    change = change[by_step]
    points, deltas = starts[change], stats[change] - stats[change - 1]
    last_of_group = np.ones(len(points), dtype=bool)
    last_of_group[:-1] = points[1:] != points[:-1]
    bounds = points[last_of_group]
    totals = np.vstack([base[None, :], base + np.cumsum(deltas, axis=0)[last_of_group]])
    scores = np.atleast_1d(bleu(totals))  # scores[i]: interval (bounds[i-1], bounds[i])
    # intervals reaching into [low, high]: from the one holding low (or starting at it) to the one holding high
    first_in, last_in = int(np.searchsorted(bounds, low, side="right")), int(np.searchsorted(bounds, high))
    best = first_in + int(np.argmax(scores[first_in : last_in + 1]))
    current = int(np.searchsorted(bounds, 0.0))
    if (current == len(bounds) or bounds[current] != 0.0) and scores[current] == scores[best]:
        return 0.0, float(scores[current])
    left = max(float(bounds[best - 1]) if best > 0 else -np.inf, low)
    right = min(float(bounds[best]) if best < len(bounds) else np.inf, high)
    if left == -np.inf and right == np.inf:
        step = 0.0
    elif left == -np.inf:
        step = right - PAST_FIRST
    elif right == np.inf:
        step = left + PAST_LAST
    else:
        step = (left + right) / 2
    return step, float(scores[best])
