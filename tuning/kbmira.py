"""k-best batch MIRA (Cherry & Foster 2012) as Moses' ``kbmira`` runs it: ``pysmt tune --optimizer kbmira``.

Each pass over the pool visits the dev sentences in a shuffled order (seeded). For a sentence it picks,
among the pool's candidates, the *hope* (highest model score plus sentence BLEU), the *fear* (highest
model score minus sentence BLEU) and the model's best (the first on ties, as Moses' strict ``>``).
When hope and fear differ and the hope's BLEU is higher, the weights move towards the hope by the
passive-aggressive step ``eta = min(C, loss / |hope - fear|^2)`` with ``loss = BLEU difference - score
difference`` (no move unless the loss is positive); then the background corpus decays by ``decay`` and
adds the hope's statistics (the model best's with ``model_bg``, Moses' ``--model-bg``).

Sentence BLEU is Moses' ``sentenceLevelBackgroundBleu``: BLEU of the sentence's statistics plus the
background's, times their reference length (Chiang et al. 2008); the background starts at 1 for every
statistic, so no logarithm is ever of 0.

The result is Moses' averaged weight vector (``MiraWeightVector``/``AvgWeightVector``): the starting
weights plus the weights after each update, divided by the number of updates (the start counts once
more than a plain average would count it: Moses' own arithmetic). After each pass the average is
scored on the pool (corpus BLEU of each sentence's model best, sacrebleu's BLEU as everywhere in
pysmt); the best pass's average wins (the earliest on ties; a pass must beat BLEU 0 to count, as in
Moses, else the starting weights stay), L1-normalized as mert-moses.pl normalizes kbmira's output.

Fixed features (``fixed``) keep their weights: their components of ``hope - fear`` are left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from tuning.bleu import N_STATS, ORDER
from tuning.line_search import CandidatePool
from tuning.optimizer import constant_features, l1_normalized

#: Moses' defaults: the step-size cap C, the background corpus's decay, and the passes over the pool (-J).
C, DECAY, PASSES = 0.01, 0.999, 60


def background_bleu(stats: np.ndarray, background: np.ndarray) -> np.ndarray:
    """Moses' ``sentenceLevelBackgroundBleu`` of each row of ``stats`` (``(n, 9)``, Moses' order) with
    the background corpus's statistics added."""
    summed = stats + background
    log_bleu = (np.log(summed[:, 0 : 2 * ORDER : 2]) - np.log(summed[:, 1 : 2 * ORDER : 2])).sum(axis=1) / ORDER
    log_bleu += np.minimum(1.0 - summed[:, -1] / summed[:, 1], 0.0)  # the brevity penalty, when shorter
    return np.exp(log_bleu) * summed[:, -1]


@dataclass
class AveragedWeights:
    """Moses' ``MiraWeightVector`` for dense features: the weights, and the running total that averages them."""

    weights: np.ndarray
    total: np.ndarray
    updates: int = 0

    @classmethod
    def starting_at(cls, weights: np.ndarray) -> AveragedWeights:
        return cls(weights.copy(), weights.copy())

    def update(self, direction: np.ndarray, eta: float) -> None:
        self.updates += 1
        self.weights += eta * direction
        self.total += self.weights

    def average(self) -> np.ndarray:
        return self.weights.copy() if self.updates == 0 else self.total / self.updates


def kbmira(
    features: Sequence[np.ndarray],
    stats: Sequence[np.ndarray],
    init: Sequence[float],
    *,
    c: float = C,
    decay: float = DECAY,
    passes: int = PASSES,
    model_bg: bool = False,
    seed: int = 0,
    fixed: Sequence[bool] | None = None,
) -> tuple[np.ndarray, float]:
    """Batch MIRA's weights on the pool, and the pool's BLEU (0-100) under them before normalizing.

    ``features`` and ``stats`` are one array per dev sentence, as :func:`tuning.optimizer.optimize`
    takes them; ``fixed`` marks the features whose weights must not move.
    """
    pool = CandidatePool.from_lists(features, stats)
    d = pool.dimension
    start = np.asarray(init, dtype=np.float64)
    if start.shape != (d,):
        raise ValueError(f"{len(start)} initial weights for {d} features")
    free = np.ones(d) if fixed is None else (~np.asarray(fixed, dtype=bool)).astype(np.float64)
    by_sentence = pool.sentences()
    mira = AveragedWeights.starting_at(start)
    background = np.ones(N_STATS)
    rng = np.random.default_rng(seed)
    best, best_bleu = start, 0.0
    for _ in range(passes):
        for sentence in rng.permutation(len(by_sentence)):
            candidates, sentence_stats = by_sentence[sentence]
            scores = candidates @ mira.weights
            bleu = background_bleu(sentence_stats, background)
            hope, fear = int(np.argmax(scores + bleu)), int(np.argmax(scores - bleu))
            if hope == fear or not bleu[hope] > bleu[fear]:
                continue
            direction = (candidates[hope] - candidates[fear]) * free
            loss = (bleu[hope] - bleu[fear]) - float(mira.weights @ direction)
            if loss > 0:
                norm = float(direction @ direction)
                mira.update(direction, c if norm == 0.0 else min(c, loss / norm))
            chosen = int(np.argmax(scores)) if model_bg else hope
            background = background * decay + sentence_stats[chosen]
        average = mira.average()
        value = pool.bleu(average)
        if value > best_bleu:
            best, best_bleu = average, value
    if best is start:
        best_bleu = pool.bleu(start)
    constant = constant_features(pool)
    return l1_normalized(best, np.flatnonzero(free.astype(bool) & ~constant), constant), best_bleu
