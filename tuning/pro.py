"""Pairwise ranking optimization (Hopkins & May 2011) as Moses' ``pro`` extractor samples it:
``pysmt tune --optimizer pro``.

For each dev sentence, ``gamma`` (5,000) pairs of its pooled candidates are drawn uniformly with
replacement; a pair whose smoothed sentence BLEU differs by less than ``min_diff`` (0.05) is dropped;
of the rest, the ``keep`` (50) most different are kept (Moses' rule: the pairs, in the order drawn,
whose difference reaches the 50th largest less 1e-5, up to 50 of them). Each kept pair is one
training example for a classifier that must rank the better candidate above the worse: the difference
of their feature vectors (components within 1e-5 of 0 set to 0, as Moses writes them) labelled 1,
and its opposite labelled 0.

Sentence BLEU is Moses' ``smoothedSentenceBleu``: add-one smoothing of every n-gram precision, and by
default (``smooth_bp``, Moses' ``--smooth-brevity-penalty`` of its ``pro-bp-smooth`` regression test,
Nakov et al. 2012) one added to the reference length of the brevity penalty too.

The classifier is logistic regression without a bias (mert-moses.pl runs MegaM with ``-nobias``),
with an L2 penalty ``l2 / 2 * |w|^2`` (a Gaussian prior on the weights), fitted to its unique
optimum by Newton's method: the same pairs give the same weights to the last bit, and no iteration
cap decides the result. Its weights are L1-normalized, as mert-moses.pl normalizes PRO's; fixed
features, and features constant within every sentence's list (no pair can tell them apart), keep
their weights.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tuning.bleu import ORDER
from tuning.line_search import CandidatePool
from tuning.optimizer import constant_features, l1_normalized

#: Moses' constants: Gamma and Xi of Hopkins & May, and the smallest BLEU difference a pair may have.
GAMMA, KEEP, MIN_DIFF = 5000, 50, 0.05
#: Feature differences this close to 0 are 0 (Moses writes only larger ones for the classifier).
TINY = 0.00001


def smoothed_bleu(stats: np.ndarray, smooth_bp: bool = True) -> np.ndarray:
    """Moses' ``smoothedSentenceBleu`` (smoothing 1) of each row of ``stats`` (``(n, 9)``, Moses' order)."""
    stats = np.asarray(stats, dtype=np.float64)
    log_bleu = (np.log(stats[:, 0 : 2 * ORDER : 2] + 1.0) - np.log(stats[:, 1 : 2 * ORDER : 2] + 1.0)).sum(axis=1)
    log_bleu /= ORDER
    reference = stats[:, -1] + (1.0 if smooth_bp else 0.0)
    with np.errstate(divide="ignore"):
        brevity = 1.0 - reference / stats[:, 1]  # an empty hypothesis: -inf, BLEU 0
    return np.exp(log_bleu + np.minimum(brevity, 0.0))


def sampled_pairs(
    bleu: np.ndarray, rng: np.random.Generator, gamma: int = GAMMA, keep: int = KEEP, min_diff: float = MIN_DIFF
) -> np.ndarray:
    """The (better, worse) index pairs Moses' ``pro`` keeps among candidates of sentence BLEU ``bleu``: ``(k, 2)``."""
    drawn = rng.integers(len(bleu), size=(gamma, 2))
    diff = bleu[drawn[:, 0]] - bleu[drawn[:, 1]]
    kept = np.abs(diff) >= min_diff
    drawn, diff = drawn[kept], diff[kept]
    ordered = np.where((diff > 0)[:, None], drawn, drawn[:, ::-1])
    distance = np.abs(diff)
    if len(distance) > keep:
        threshold = 0.99999 - np.partition(1.0 - distance, keep - 1)[keep - 1]
        ordered = ordered[distance >= threshold][:keep]
    return ordered


def logistic_weights(differences: np.ndarray, l2: float) -> np.ndarray:
    """The weights minimizing ``sum 2 log(1 + exp(-w . x)) + l2 / 2 |w|^2`` over the rows ``x`` of
    ``differences``: logistic regression without bias on each row labelled 1 and its opposite labelled 0."""
    x = np.asarray(differences, dtype=np.float64)
    w = np.zeros(x.shape[1])

    def loss(v: np.ndarray) -> float:
        return float(2.0 * np.logaddexp(0.0, -(x @ v)).sum() + 0.5 * l2 * v @ v)

    current = loss(w)
    for _ in range(100):
        margin = x @ w
        wrong = 0.5 * (1.0 - np.tanh(0.5 * margin))  # sigma(-margin), without overflow
        gradient = -2.0 * x.T @ wrong + l2 * w
        if np.max(np.abs(gradient), initial=0.0) < 1e-12:
            break
        hessian = 2.0 * (x.T * (wrong * (1.0 - wrong))) @ x + l2 * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        scale = 1.0
        while scale > 1e-10:  # Newton's step, halved until the loss falls (it is strictly convex)
            trial = w - scale * step
            value = loss(trial)
            if value <= current:
                break
            scale /= 2
        else:
            break
        if np.array_equal(trial, w):
            break
        w, current = trial, value
    return w


def pro(
    features: Sequence[np.ndarray],
    stats: Sequence[np.ndarray],
    init: Sequence[float],
    *,
    gamma: int = GAMMA,
    keep: int = KEEP,
    min_diff: float = MIN_DIFF,
    l2: float = 1.0,
    smooth_bp: bool = True,
    seed: int = 0,
    fixed: Sequence[bool] | None = None,
) -> tuple[np.ndarray, float]:
    """PRO's weights on the pool, and the pool's BLEU (0-100) under them.

    ``features`` and ``stats`` are one array per dev sentence, as :func:`tuning.optimizer.optimize`
    takes them; ``fixed`` marks the features whose weights must not move. Each sentence draws its
    pairs in turn from one generator seeded by ``seed``.
    """
    pool = CandidatePool.from_lists(features, stats)
    start = np.asarray(init, dtype=np.float64)
    if start.shape != (pool.dimension,):
        raise ValueError(f"{len(start)} initial weights for {pool.dimension} features")
    constant = constant_features(pool)
    frozen = np.zeros(pool.dimension, dtype=bool) if fixed is None else np.asarray(fixed, dtype=bool)
    tuned = np.flatnonzero(~frozen & ~constant)
    rng = np.random.default_rng(seed)
    examples = []
    for candidates, sentence_stats in pool.sentences():
        pairs = sampled_pairs(smoothed_bleu(sentence_stats, smooth_bp), rng, gamma, keep, min_diff)
        examples.append(candidates[pairs[:, 0]] - candidates[pairs[:, 1]])
    differences = np.vstack(examples)[:, tuned]
    if not len(differences) or not len(tuned):
        return start, pool.bleu(start)  # no pair to learn from: every candidate of a sentence scores alike
    differences[np.abs(differences) <= TINY] = 0.0
    weights = start.copy()
    weights[tuned] = logistic_weights(differences, l2)
    if not np.abs(weights[tuned]).sum() > 0:
        return start, pool.bleu(start)
    result = l1_normalized(weights, tuned, constant)
    return result, pool.bleu(result)
