"""MERT library: BLEU statistics against sacrebleu, envelopes, line search, optimizer."""

import random

import numpy as np
import pytest
import sacrebleu

from tuning.bleu import BleuStatistics, bleu
from tuning.line_search import CandidatePool, line_search, upper_envelopes
from tuning.optimizer import constant_features, optimize

WORDS = "le la les chat chien est sur tapis . , un une de du maison ! ?".split()


def random_sentence(rng: random.Random, n_max: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, n_max)))


@pytest.mark.parametrize("seed", range(5))
def test_statistics_sum_to_sacrebleu_corpus_bleu_on_random_strings(seed):
    rng = random.Random(seed)
    refs = [random_sentence(rng) for _ in range(40)]
    hyps = [random_sentence(rng) for _ in range(40)]
    scorer = BleuStatistics([[r] for r in refs])
    total = sum(scorer(i, h) for i, h in enumerate(hyps))
    assert bleu(total) == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score, abs=1e-12)


def test_statistics_with_two_references_match_sacrebleu():
    rng = random.Random(7)
    refs_a = [random_sentence(rng) for _ in range(30)]
    refs_b = [random_sentence(rng) for _ in range(30)]
    hyps = [random_sentence(rng) for _ in range(30)]
    scorer = BleuStatistics(list(zip(refs_a, refs_b)))
    total = sum(scorer(i, h) for i, h in enumerate(hyps))
    assert bleu(total) == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs_a, refs_b]).score, abs=1e-12)


def test_statistics_in_moses_order_by_hand():
    scorer = BleuStatistics([["a b c d"]])
    # hypothesis "a b x": 1-grams 2/3, 2-grams 1/2, 3-grams 0/1, no 4-grams; reference length 4
    assert scorer(0, "a b x").tolist() == [2, 3, 1, 2, 0, 1, 0, 0, 4]


def test_bleu_edge_cases_match_sacrebleu():
    for correct, total, sys_len, ref_len in [([0, 0, 0, 0], [3, 2, 1, 0], 3, 5), ([2, 1, 0, 0], [3, 2, 1, 0], 3, 5),
                                             ([5, 3, 0, 0], [6, 5, 4, 3], 6, 4), ([0, 0, 0, 0], [0, 0, 0, 0], 0, 2)]:
        stats = [v for pair in zip(correct, total) for v in pair] + [ref_len]
        expected = sacrebleu.metrics.BLEU.compute_bleu(list(correct), list(total), sys_len, ref_len,
                                                       smooth_method="exp").score
        assert bleu(np.array(stats, dtype=float)) == pytest.approx(expected, abs=1e-12)


def test_upper_envelope_of_hand_drawn_lines():
    # lines a + g*b: y=0 (flat), y=g, y=-g, y=-1+0.5g (never on top), y=0.5 (beats y=0 everywhere)
    a = np.array([0.0, 0.0, 0.0, -1.0, 0.5])
    b = np.array([0.0, 1.0, -1.0, 0.5, 0.0])
    rows = np.zeros(5, dtype=int)
    hull = upper_envelopes(rows, a, b)
    # by increasing slope: y=-g leads for g < -0.5, then y=0.5 until g = 0.5, then y=g
    assert hull.tolist() == [2, 4, 1]


def one_sentence_pool(features, stats):
    return CandidatePool.from_lists([np.array(features, dtype=float)], [np.array(stats, dtype=float)])


def perfect(n):  # statistics of a candidate with every n-gram right, length n
    return [n, n, n - 1, n - 1, n - 2, n - 2, n - 3, n - 3, n]


def test_line_search_finds_the_interval_where_the_good_candidate_wins():
    # candidate 0 is junk with features (1, 0), candidate 1 perfect with features (0, 1)
    pool = one_sentence_pool([[1.0, 0.0], [0.0, 1.0]], [[0, 6, 0, 5, 0, 4, 0, 3, 6], perfect(6)])
    a = pool.scores(np.array([1.0, 0.0]))  # junk leads: 1 > 0
    step, value = line_search(pool, a, pool.features[1])
    # along axis 1 the perfect candidate leads once g > 1: the unbounded interval, entered 1 past its end
    assert (step, value) == (2.0, pytest.approx(100.0))
    # already at the optimum: stay
    assert line_search(pool, pool.scores(np.array([0.0, 1.0])), pool.features[0]) == (0.0, pytest.approx(100.0))


def brute_force_best(pool, a, b):
    """BLEU at the middle of every interval between all pairwise crossings, and beyond the ends."""
    crossings = []
    for s in range(a.shape[1]):
        idx = np.flatnonzero(pool.valid[:, s])
        for i in idx:
            for j in idx:
                if b[i, s] != b[j, s]:
                    crossings.append((a[i, s] - a[j, s]) / (b[j, s] - b[i, s]))
    points = np.unique(crossings)
    probes = np.concatenate([[points[0] - 1], (points[1:] + points[:-1]) / 2, [points[-1] + 1]]) if len(points) \
        else np.array([0.0])
    best = -1.0
    for g in probes:
        scores = np.where(pool.valid, a + g * b, -np.inf)
        choice = np.argmax(scores, axis=0)
        best = max(best, float(bleu(pool.stats[choice, np.arange(a.shape[1])].sum(axis=0))))
    return best


@pytest.mark.parametrize("seed", range(8))
def test_line_search_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 8, size=6)
    features = [np.round(rng.normal(size=(n, 3)), 1) for n in sizes]  # rounding makes ties
    stats = []
    for n in sizes:
        total = rng.integers(4, 9, size=(n, 1))
        st = np.zeros((n, 9))
        for k in range(4):
            st[:, 2 * k + 1] = np.maximum(total[:, 0] - k, 0)
            st[:, 2 * k] = rng.integers(0, st[:, 2 * k + 1] + 1)
        st[:, 8] = 6
        stats.append(st)
    pool = CandidatePool.from_lists(features, stats)
    w = rng.normal(size=3)
    a = pool.scores(w)
    direction = rng.normal(size=3)
    b = np.tensordot(direction, pool.features, axes=1)
    step, value = line_search(pool, a, b)
    assert value == pytest.approx(brute_force_best(pool, a, b))
    # and the returned step really gives that BLEU
    assert pool.bleu(w + step * direction) == pytest.approx(value)


def toy_nbest(seed, sentences=30, n=20, d=4):
    rng = np.random.default_rng(seed)
    true_w = np.array([1.0, -0.5, 0.25, 0.0])[:d]
    features, stats = [], []
    for _ in range(sentences):
        f = rng.normal(size=(n, d))
        quality = f @ true_w + 0.1 * rng.normal(size=n)
        order = np.argsort(np.argsort(quality))  # 0 = worst
        st = np.zeros((n, 9))
        for k in range(4):
            st[:, 2 * k + 1] = 10 - k
            st[:, 2 * k] = np.round((10 - k) * (order + 1) / n)
        st[:, 8] = 10
        features.append(f)
        stats.append(st)
    return features, stats, true_w


def test_optimize_recovers_the_direction_of_the_true_weights():
    features, stats, true_w = toy_nbest(0)
    weights, value = optimize(features, stats, [0.1, 0.1, 0.1, 0.1], restarts=5)
    start = CandidatePool.from_lists(features, stats).bleu(np.array([0.1, 0.1, 0.1, 0.1]))
    assert value > start
    assert value == pytest.approx(CandidatePool.from_lists(features, stats).bleu(weights))
    cosine = weights @ true_w / np.linalg.norm(weights) / np.linalg.norm(true_w)
    assert cosine > 0.9


def test_optimize_is_deterministic_and_seeded():
    features, stats, _ = toy_nbest(1)
    first = optimize(features, stats, [0.1, 0.1, 0.1, 0.1], restarts=3, seed=5)
    again = optimize(features, stats, [0.1, 0.1, 0.1, 0.1], restarts=3, seed=5)
    assert np.array_equal(first[0], again[0]) and first[1] == again[1]


def test_fixed_and_constant_features_keep_their_weights():
    features, stats, _ = toy_nbest(2)
    features = [np.hstack([f, np.full((len(f), 1), 3.0)]) for f in features]  # constant feature
    pool = CandidatePool.from_lists(features, stats)
    assert constant_features(pool).tolist() == [False, False, False, False, True]
    weights, value = optimize(features, stats, [0.1, 0.1, 0.1, 0.7, 0.3], restarts=2,
                              fixed=[False, False, False, True, False])
    assert weights[3] == 0.7 and weights[4] == 0.3
    assert np.isfinite(value)
