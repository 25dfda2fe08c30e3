"""PRO: Moses' smoothed sentence BLEU, its pair sampling and selection, and the exact logistic regression."""

import math

import numpy as np
import pytest

from tuning.pro import logistic_weights, pro, sampled_pairs, smoothed_bleu


def test_smoothed_bleu_is_moses_smoothed_sentence_bleu():
    stats = np.array([[2.0, 3, 1, 2, 0, 1, 0, 0, 4]])
    # precisions (2+1)/(3+1), (1+1)/(2+1), (0+1)/(1+1), (0+1)/(0+1): their geometric mean (1/4) ** (1/4)
    precisions = (3 / 4 * 2 / 3 * 1 / 2 * 1) ** 0.25
    # 3 words against a reference of 4 (+1 with the smoothed brevity penalty)
    assert smoothed_bleu(stats)[0] == pytest.approx(precisions * math.exp(1 - 5 / 3))
    assert smoothed_bleu(stats, smooth_bp=False)[0] == pytest.approx(precisions * math.exp(1 - 4 / 3))
    assert smoothed_bleu(np.array([[0.0, 0, 0, 0, 0, 0, 0, 0, 3]]))[0] == 0.0  # an empty hypothesis


def test_the_pairs_kept_are_the_most_different_ordered_better_first():
    bleu = np.array([0.9, 0.5, 0.1])
    pairs = sampled_pairs(bleu, np.random.default_rng(0))
    # 5000 draws hold ~1100 pairs of the first and last (0.8 apart) against ~2200 at 0.4: the 50 kept are theirs
    assert pairs.tolist() == [[0, 2]] * 50


def test_pairs_closer_than_min_diff_are_dropped_and_fewer_than_keep_are_all_kept():
    pairs = sampled_pairs(np.array([0.30, 0.32, 0.60]), np.random.default_rng(1), gamma=40)
    assert len(pairs) < 50 and len(pairs) > 0
    assert all(b == 2 for b, _ in pairs)  # only pairs with the third are 0.05 apart: it is the better one
    assert len(sampled_pairs(np.array([0.5, 0.52]), np.random.default_rng(1))) == 0


def test_the_regression_reaches_its_optimum():
    # 50 copies of the difference x = 1: the loss 100 log(1 + e^-w) + w^2 / 2 has its minimum where
    # 100 sigma(-w) = w, found here by bisection
    low, high = 0.0, 100.0
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if 100 / (1 + math.exp(middle)) > middle else (low, middle)
    assert logistic_weights(np.ones((50, 1)), 1.0)[0] == pytest.approx(low, rel=1e-12)
    # symmetric data cancel: no direction is preferred
    assert logistic_weights(np.array([[1.0, 0.0], [-1.0, 0.0]]), 1.0) == pytest.approx([0.0, 0.0], abs=1e-12)


def test_pro_ranks_the_better_candidates_first_and_keeps_fixed_and_constant_weights():
    # two sentences; feature 0 tells the right candidate, feature 1 misleads, feature 2 is constant
    features = [np.array([[1.0, 0.0, 3.0], [0.0, 1.0, 3.0]]), np.array([[0.5, 0.2, 3.0], [0.0, 0.9, 3.0]])]
    right, wrong = [4, 4, 3, 3, 2, 2, 1, 1, 4], [1, 4, 0, 3, 0, 2, 0, 1, 4]
    stats = [np.array([right, wrong], dtype=float), np.array([right, wrong], dtype=float)]
    weights, bleu = pro(features, stats, [0.1, 0.5, 0.7])
    assert weights[0] > 0 > weights[1] and weights[2] == 0.7
    assert abs(weights[0]) + abs(weights[1]) == pytest.approx(1.0)
    assert bleu == pytest.approx(100.0)
    fixed, _ = pro(features, stats, [0.1, 0.5, 0.7], fixed=[False, True, False])
    # the fixed feature varies within the lists, so the tuned weight is not rescaled (that would change rankings)
    assert fixed[1] == 0.5 and fixed[2] == 0.7 and fixed[0] > 0
    again, _ = pro(features, stats, [0.1, 0.5, 0.7])
    assert again.tolist() == weights.tolist()


def test_a_pool_without_bleu_differences_keeps_the_start():
    features = [np.array([[1.0, 0.0], [0.0, 1.0]])]
    same = [2, 3, 1, 2, 0, 1, 0, 0, 3]
    weights, _ = pro(features, [np.array([same, same], dtype=float)], [0.3, 0.2])
    assert weights.tolist() == [0.3, 0.2]
