"""k-best batch MIRA: Moses' sentence BLEU, its update and averaging, on pools small enough to follow by hand."""

import math

import numpy as np
import pytest

from tuning.kbmira import AveragedWeights, background_bleu, kbmira

#: One sentence, two candidates: the right one (all n-grams match) and a wrong one.
RIGHT = [4, 4, 3, 3, 2, 2, 1, 1, 4]
WRONG = [1, 4, 0, 3, 0, 2, 0, 1, 4]
FEATURES = [np.array([[1.0, 0.0], [0.0, 1.0]])]
STATS = [np.array([RIGHT, WRONG], dtype=float)]
#: Their sentence BLEU on the first visit (background all 1): the right one 5 (precisions 1, reference
#: length 4 + 1); the wrong one 5 * (2/5 * 1/4 * 1/3 * 1/2) ** (1/4) = 5 * 60 ** (-1/4).
RIGHT_BLEU, WRONG_BLEU = 5.0, 5.0 * 60**-0.25


def test_background_bleu_is_moses_sentence_level_background_bleu():
    ones = np.ones(9)
    # (3/4 * 2/3 * 1/2 * 1/1) ** (1/4) = 1/4 ** (1/4), times the reference length 3 + 1
    assert background_bleu(np.array([[2.0, 3, 1, 2, 0, 1, 0, 0, 3]]), ones)[0] == pytest.approx(2 * math.sqrt(2))
    # precisions 1, but 4 words against a reference of 10: exp(1 - 10/4), times 10
    assert background_bleu(np.array([[3.0, 3, 2, 2, 1, 1, 0, 0, 9]]), ones)[0] == pytest.approx(10 * math.exp(-1.5))
    values = background_bleu(np.array(STATS[0]), ones)
    assert values == pytest.approx([RIGHT_BLEU, WRONG_BLEU])


def test_averaging_counts_the_start_once_more_as_moses_does():
    mira = AveragedWeights.starting_at(np.array([0.5, 0.5]))
    assert mira.average().tolist() == [0.5, 0.5]  # no update yet: the weights themselves
    mira.update(np.array([1.0, -1.0]), 0.01)
    mira.update(np.array([1.0, -1.0]), 0.01)
    assert mira.weights == pytest.approx([0.52, 0.48])
    assert mira.average() == pytest.approx([(0.5 + 0.51 + 0.52) / 2, (0.5 + 0.49 + 0.48) / 2])


def test_a_step_is_capped_at_c_and_the_first_best_pass_wins():
    # pass 1: hope RIGHT, fear WRONG, loss 5 - 5 * 60 ** -0.25 - 0 = 3.2 > 0, eta = min(0.01, 3.2 / 2) = 0.01:
    # weights 0.51 0.49, average (start + them) / 1 = 1.01 0.99, BLEU 100; pass 2 moves on to 0.52 0.48 (average
    # 0.765 0.735) with the same BLEU, so pass 1's average stays; L1-normalized: 0.505 0.495
    weights, value = kbmira(FEATURES, STATS, [0.5, 0.5], passes=2)
    assert weights == pytest.approx([0.505, 0.495])
    assert value == pytest.approx(100.0)


def test_a_step_below_c_is_the_loss_over_the_squared_distance():
    eta = (RIGHT_BLEU - WRONG_BLEU) / 2  # 1.60 < C = 10
    weights, _ = kbmira(FEATURES, STATS, [0.5, 0.5], passes=1, c=10.0)
    # the average 1 + eta, 1 - eta (eta > 1), L1-normalized by (1 + eta) + (eta - 1)
    assert weights == pytest.approx([(1 + eta) / (2 * eta), (1 - eta) / (2 * eta)])


def test_no_update_when_the_model_already_separates_hope_and_fear_by_their_bleu():
    # loss = 3.2 - (10 - 0) < 0: the weights stay where they are
    weights, value = kbmira(FEATURES, STATS, [10.0, 0.0], passes=3)
    assert weights.tolist() == [1.0, 0.0] and value == pytest.approx(100.0)


def test_a_fixed_feature_keeps_its_weight():
    # the direction loses its fixed component: (1, 0), squared norm 1, eta = 0.01; the fixed feature varies in
    # the list, so nothing is rescaled
    weights, _ = kbmira(FEATURES, STATS, [0.5, 0.5], passes=1, fixed=[False, True])
    assert weights == pytest.approx([1.01, 1.0])


def test_a_sentence_with_one_candidate_teaches_nothing():
    weights, _ = kbmira([np.array([[2.0, 1.0]])], [np.array([RIGHT], dtype=float)], [0.3, 0.1], passes=5)
    assert weights.tolist() == [0.3, 0.1]  # the start: both features are constant in the list


def random_pool(seed: int, sentences: int = 30, candidates: int = 20, dimension: int = 4):
    rng = np.random.default_rng(seed)
    features = [rng.normal(size=(candidates, dimension)) for _ in range(sentences)]
    stats = []
    for _ in range(sentences):
        totals = rng.integers(6, 12, size=(candidates, 1)) - np.arange(4)
        block = np.empty((candidates, 9))
        block[:, 1:8:2] = totals
        block[:, 0:8:2] = np.floor(totals * rng.uniform(size=(candidates, 4)))
        block[:, 8] = 9
        stats.append(block)
    return features, stats


def test_seeded_and_never_below_the_pools_best_pass():
    features, stats = random_pool(0)
    first = kbmira(features, stats, [0.25] * 4, seed=1, passes=10)
    again = kbmira(features, stats, [0.25] * 4, seed=1, passes=10)
    assert first[0].tolist() == again[0].tolist() and first[1] == again[1]
    other = kbmira(features, stats, [0.25] * 4, seed=2, passes=10)
    assert other[0].tolist() != first[0].tolist()  # another order of the sentences
    assert np.abs(first[0]).sum() == pytest.approx(1.0)


def test_the_model_background_changes_what_the_hope_is_weighed_against():
    features, stats = random_pool(3)
    hope = kbmira(features, stats, [0.25] * 4, passes=5)
    model = kbmira(features, stats, [0.25] * 4, passes=5, model_bg=True)
    assert hope[0].tolist() != model[0].tolist()


def test_the_command_lines_defaults_are_moses_kbmira_defaults():
    from tuning import kbmira as module
    from tuning.optimizers import MIRA_C, MIRA_DECAY, MIRA_PASSES

    assert (MIRA_C, MIRA_PASSES, MIRA_DECAY) == (module.C, module.PASSES, module.DECAY) == (0.01, 60, 0.999)
