"""MERT library: BLEU statistics against sacrebleu, envelopes, line search, optimizer."""

import random
from functools import partial
from pathlib import Path

import numpy as np
import pytest
import sacrebleu

from pysmt.errors import PysmtError
from pysmt.testing import one_line_error, run_pysmt
from tests.helpers import slow_cases, write_moses_system
from tuning.bleu import BleuStatistics, bleu
from tuning.line_search import PAST_FIRST, PAST_LAST, CandidatePool, line_search, upper_envelopes
from tuning.nbest import NbestPool, read_nbest
from tuning.optimizer import constant_features, optimize, trust_region_bounds

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


def test_statistics_equal_sacrebleu_on_real_decoder_output(shared_data):
    hyps = (Path(__file__).parent / "data" / "newstest2013.pysmt-untuned.300.fr").read_text(encoding="utf-8")
    hyps = hyps.splitlines()
    refs = shared_data("news", "newstest2013.fr").read_text(encoding="utf-8").splitlines()[: len(hyps)]
    scorer = BleuStatistics([[r] for r in refs])
    stats = [scorer(i, h) for i, h in enumerate(hyps)]
    assert bleu(sum(stats)) == sacrebleu.corpus_bleu(hyps, [refs]).score
    # any subset too (the optimizer sums statistics of arbitrary candidate choices)
    assert bleu(sum(stats[::3])) == sacrebleu.corpus_bleu(hyps[::3], [refs[::3]]).score


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
    for correct, total, sys_len, ref_len in [
        ([0, 0, 0, 0], [3, 2, 1, 0], 3, 5),
        ([2, 1, 0, 0], [3, 2, 1, 0], 3, 5),
        ([5, 3, 0, 0], [6, 5, 4, 3], 6, 4),
        ([0, 0, 0, 0], [0, 0, 0, 0], 0, 2),
    ]:
        stats = [v for pair in zip(correct, total) for v in pair] + [ref_len]
        expected = sacrebleu.metrics.BLEU.compute_bleu(
            list(correct), list(total), sys_len, ref_len, smooth_method="exp"
        ).score
        assert bleu(np.array(stats, dtype=float)) == pytest.approx(expected, abs=1e-12)


def test_upper_envelope_of_hand_drawn_lines():
    # sentence 0, lines a + g*b: y=0 (flat), y=g, y=-g, y=-1+0.5g (never on top), y=0.5 (beats y=0),
    # y=0.5 again (a duplicate: the first wins); sentence 1: one line
    a = np.array([0.0, 0.0, 0.0, -1.0, 0.5, 0.5, 3.0])
    b = np.array([0.0, 1.0, -1.0, 0.5, 0.0, 0.0, 2.0])
    lines, starts, counts = upper_envelopes(a, b, np.array([0, 6, 7]))
    # y=-g leads until g = -0.5, then y=0.5 until g = 0.5, then y=g
    assert lines.tolist() == [2, 4, 1, 6]
    assert starts.tolist() == [-np.inf, -0.5, 0.5, -np.inf]
    assert counts.tolist() == [3, 1]


def test_upper_envelope_with_parallel_and_concurrent_lines():
    # three lines through (0, 0) with slopes -1, 0, 1: the flat one leads only at g = 0 and is skipped
    a = np.array([0.0, 0.0, 0.0, -5.0])
    b = np.array([-1.0, 0.0, 1.0, 1.0])  # the last is parallel to y=g and below it
    lines, starts, _ = upper_envelopes(a, b, np.array([0, 4]))
    assert lines.tolist() == [0, 2] and starts.tolist() == [-np.inf, 0.0]


def one_sentence_pool(features, stats):
    return CandidatePool.from_lists([np.array(features, dtype=float)], [np.array(stats, dtype=float)])


def perfect(n):  # statistics of a candidate with every n-gram right, length n
    return [n, n, n - 1, n - 1, n - 2, n - 2, n - 3, n - 3, n]


def test_line_search_finds_the_interval_where_the_good_candidate_wins():
    # candidate 0 is junk with features (1, 0), candidate 1 perfect with features (0, 1)
    pool = one_sentence_pool([[1.0, 0.0], [0.0, 1.0]], [[0, 6, 0, 5, 0, 4, 0, 3, 6], perfect(6)])
    a = pool.scores(np.array([1.0, 0.0]))  # junk leads: 1 > 0
    step, value = line_search(pool, a, pool.features[1])
    # along axis 1 the perfect candidate leads once g > 1: the unbounded interval, entered as Moses does
    assert (step, value) == (1.0 + PAST_LAST, pytest.approx(100.0))
    # against axis 1 it leads once g < -1: Moses goes far past the change point on that side
    assert line_search(pool, a, -pool.features[1]) == (-1.0 - PAST_FIRST, pytest.approx(100.0))
    # already at the optimum: stay
    assert line_search(pool, pool.scores(np.array([0.0, 1.0])), pool.features[0]) == (0.0, pytest.approx(100.0))


def test_a_bounded_line_search_stays_within_its_bounds():
    pool = one_sentence_pool([[1.0, 0.0], [0.0, 1.0]], [[0, 6, 0, 5, 0, 4, 0, 3, 6], perfect(6)])
    a = pool.scores(np.array([1.0, 0.0]))  # junk leads; along axis 1 the perfect candidate leads once g > 1
    assert line_search(pool, a, pool.features[1], -2.0, 3.0) == (2.0, pytest.approx(100.0))  # middle of (1, 3)
    junk = line_search(pool, a, pool.features[1], -2.0, 0.5)  # the change point lies beyond the bound: stay
    assert junk[0] == 0.0 and junk[1] < 100.0
    assert line_search(pool, a, -pool.features[1], -5.0, 1.0) == (-3.0, pytest.approx(100.0))  # middle of (-5, -1)
    assert line_search(pool, a, pool.features[1], -np.inf, 4.0) == (2.5, pytest.approx(100.0))  # (1, 4)
    assert line_search(pool, a, -pool.features[1], -np.inf, 1.0) == (-1.0 - PAST_FIRST, pytest.approx(100.0))


def test_the_trust_region_scales_with_each_weight_or_the_mean_one():
    weights = np.array([0.5, -0.1, 0.0, 0.2])  # the last is not tuned; the tuned ones' mean magnitude is 0.2
    low, high = trust_region_bounds(weights, np.array([0, 1, 2]), 1.0)
    assert low.tolist() == pytest.approx([0.0, -0.3, -0.2, 0.2]) and high.tolist() == pytest.approx(
        [1.0, 0.1, 0.2, 0.2]
    )
    low, high = trust_region_bounds(weights, np.array([0, 1, 2]), 0.5)
    assert low.tolist() == pytest.approx([0.25, -0.2, -0.1, 0.2]) and high.tolist() == pytest.approx(
        [0.75, 0.0, 0.1, 0.2]
    )
    low, high = trust_region_bounds(np.zeros(3), np.array([0, 1]), 0.5)  # all 0: the scale of normalized weights
    assert low.tolist() == [-0.5, -0.5, 0.0] and high.tolist() == [0.5, 0.5, 0.0]
    low, high = trust_region_bounds(weights, np.array([0, 1, 2]), np.inf)
    assert low[:3].tolist() == [-np.inf] * 3 and high[:3].tolist() == [np.inf] * 3 and low[3] == high[3] == 0.2


def test_the_trust_region_keeps_a_weight_from_rewarding_what_the_pool_only_shows_losing():
    # the good candidate has a log-probability feature the junk lacks (a swap): it wins only when that
    # feature's weight turns negative, rewarding the swap, far from where the pool was decoded
    features = [np.array([[1.0, 0.0], [0.0, -1.0]])] * 2
    stats = [np.array([[0, 6, 0, 5, 0, 4, 0, 3, 6], perfect(6)], dtype=float)] * 2
    free, free_bleu = optimize(features, stats, [1.0, 1.0], restarts=3)
    assert free_bleu == pytest.approx(100.0) and (free < 0.0).any()  # a weight changed sign
    bounded, bounded_bleu = optimize(features, stats, [1.0, 1.0], restarts=3, trust_region=1.0)
    assert bounded_bleu < 100.0 and (bounded >= 0.0).all()


def test_every_start_climbs_within_the_trust_region():
    features, stats, _ = toy_nbest(5)
    init = np.array([0.4, 0.3, -0.2, 0.1])
    low, high = trust_region_bounds(init, np.arange(4), 0.5)
    weights, value = optimize(features, stats, init, restarts=4, trust_region=0.5, seed=1)
    assert value >= CandidatePool.from_lists(features, stats).bleu(init)
    # the result is L1-normalized, the region is not: compare what scaling keeps, the signs and the ratios
    assert low[:3].tolist() == pytest.approx([0.2, 0.15, -0.325]) and high[:3].tolist() == pytest.approx(
        [0.6, 0.45, -0.075]
    )
    assert np.sign(weights[:3]).tolist() == [1.0, 1.0, -1.0]
    assert 0.2 / 0.45 - 1e-9 <= weights[0] / weights[1] <= 0.6 / 0.15 + 1e-9


def brute_force_best(pool, a, b):
    """BLEU at the middle of every interval between all pairwise crossings, and beyond the ends."""
    crossings = []
    for lo, hi in zip(pool.offsets[:-1], pool.offsets[1:]):
        for i in range(lo, hi):
            for j in range(lo, hi):
                if b[i] != b[j]:
                    crossings.append((a[i] - a[j]) / (b[j] - b[i]))
    points = np.unique(crossings)
    probes = (
        np.concatenate([[points[0] - 1], (points[1:] + points[:-1]) / 2, [points[-1] + 1]])
        if len(points)
        else np.array([0.0])
    )
    best = -1.0
    for g in probes:
        choice = [lo + int(np.argmax((a + g * b)[lo:hi])) for lo, hi in zip(pool.offsets[:-1], pool.offsets[1:])]
        best = max(best, float(bleu(pool.stats[choice].sum(axis=0))))
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
    b = direction @ pool.features
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


def test_a_mapper_climbs_the_starts_with_the_shared_pool_and_changes_nothing():
    features, stats, _ = toy_nbest(4)
    calls = []

    def backwards(function, jobs, shared):  # the starts climbed last first: each has its own generator
        calls.append(len(jobs))
        return [function(shared, job) for job in reversed(jobs)][::-1]

    alone = optimize(features, stats, [0.1, 0.1, 0.1, 0.1], restarts=6, seed=3)
    mapped = optimize(features, stats, [0.1, 0.1, 0.1, 0.1], restarts=6, seed=3, mapper=backwards)
    assert calls == [7]  # one map of the given weights and the 6 restarts
    assert np.array_equal(alone[0], mapped[0]) and alone[1] == mapped[1]


def test_optimize_gives_the_same_weights_on_several_processes():
    from pysmt.running.parallel import map_with_shared

    features, stats, _ = toy_nbest(4)
    alone = optimize(features, stats, [0.1, 0.1, 0.1, 0.1], restarts=6, seed=3)
    forked = optimize(
        features, stats, [0.1, 0.1, 0.1, 0.1], restarts=6, seed=3, mapper=partial(map_with_shared, processes=2)
    )
    assert np.array_equal(alone[0], forked[0]) and alone[1] == forked[1]


def test_fixed_and_constant_features_keep_their_weights():
    features, stats, _ = toy_nbest(2)
    features = [np.hstack([f, np.full((len(f), 1), 3.0)]) for f in features]  # constant feature
    pool = CandidatePool.from_lists(features, stats)
    assert constant_features(pool).tolist() == [False, False, False, False, True]
    weights, value = optimize(
        features, stats, [0.1, 0.1, 0.1, 0.7, 0.3], restarts=2, fixed=[False, False, False, True, False]
    )
    assert weights[3] == 0.7 and weights[4] == 0.3
    assert np.isfinite(value)


def test_optimized_weights_are_l1_normalized_without_changing_the_winners():
    features, stats, _ = toy_nbest(3)
    features = [np.hstack([f, np.full((len(f), 1), 3.0)]) for f in features]  # constant: stays as it is
    weights, value = optimize(features, stats, [1.0, 2.0, -3.0, 4.0, 0.3], restarts=2)
    assert np.abs(weights[:4]).sum() == pytest.approx(1.0) and weights[4] == 0.3
    assert CandidatePool.from_lists(features, stats).bleu(weights) == pytest.approx(value)
    varying = [np.hstack([f, np.arange(len(f))[:, None]]) for f in features]  # a fixed feature that varies
    weights, _ = optimize(varying, stats, [1.0, 2.0, -3.0, 4.0, 0.3, 0.5], restarts=2, fixed=[False] * 5 + [True])
    assert np.abs(weights[:4]).sum() != pytest.approx(1.0)  # not normalized: rankings would change


def read_moses_mert_blocks(path: Path) -> list[np.ndarray]:
    """One array per sentence from Moses' text FEATSTAT/SCORESTAT (``*_TXT_BEGIN_i ...`` to ``*_TXT_END_i``)."""
    blocks: list[np.ndarray] = []
    rows: list[list[float]] = []
    for line in path.read_text().splitlines():
        if "_TXT_BEGIN_" in line:
            rows = []
        elif "_TXT_END_" in line:
            blocks.append(np.array(rows, dtype=float))
        else:
            rows.append([float(v) for v in line.split()])
    return blocks


# Moses' regression test mert.basic: its mert reaches BLEU 0.304339 from these statistics
MOSES_MERT_BASIC_BLEU = 0.304339


def test_optimize_reaches_moses_bleu_on_moses_mert_basic_statistics(shared_data):
    fixture = shared_data("fixtures", "moses", "mert.basic")
    features = read_moses_mert_blocks(fixture / "FEATSTAT.txt")
    stats = read_moses_mert_blocks(fixture / "SCORESTAT.txt")
    init, lower, upper = ([float(v) for v in line.split()] for line in (fixture / "INIT").read_text().splitlines())
    weights, value = optimize(features, stats, init, lower=lower, upper=upper)
    assert value / 100 >= MOSES_MERT_BASIC_BLEU
    assert CandidatePool.from_lists(features, stats).bleu(weights) == pytest.approx(value)


# -- n-best lists and the outer loop --------------------------------------------------------------

SOURCE_WORDS = "a b c d e f".split()


def misleading_system(directory):
    """Each source word has a right translation (x<word>) and a wrong one (y<word>); the first
    phrase-table score prefers the wrong one and the second the right one, and with the default
    weights (0.2 0.2) the wrong one wins: log .6 + log .4 > log .4 + log .5."""
    phrases = "".join(f"{w} ||| y{w} ||| 0.6 0.4 ||| 0-0\n{w} ||| x{w} ||| 0.4 0.5 ||| 0-0\n" for w in SOURCE_WORDS)
    targets = [f"{p}{w}" for w in SOURCE_WORDS for p in "xy"]
    arpa = (
        "\\data\\\nngram 1=%d\nngram 2=1\n\n\\1-grams:\n-99\t<s>\t0\n-1\t</s>\n-1\t<unk>\n" % (len(targets) + 3)
        + "".join(f"-1\t{t}\t0\n" for t in targets)
        + "\n\\2-grams:\n-1\t<s> </s>\n\n\\end\\\n"
    )
    return write_moses_system(directory, phrases=phrases, reordering=None, arpa=arpa)


# the default optimizer in the fast tier, the others in the slow one (their arithmetic: test_tuning.py above, test_pro)
@pytest.mark.parametrize("optimizer", ["kbmira", *slow_cases("mert", "pro")])
def test_tune_finds_weights_that_translate_the_dev_set_right(tmp_path, optimizer):
    ini = misleading_system(tmp_path / "system")
    rng = random.Random(3)
    sources = [" ".join(rng.sample(SOURCE_WORDS, 5)) for _ in range(8)]
    (tmp_path / "dev.src").write_text("\n".join(sources) + "\n")
    (tmp_path / "dev.ref").write_text("\n".join(" ".join(f"x{w}" for w in s.split()) for s in sources) + "\n")
    command = [
        "tune",
        "-c",
        ini,
        "--src",
        tmp_path / "dev.src",
        "--ref",
        tmp_path / "dev.ref",
        "--out",
        tmp_path / "tune",
        "--max-iterations",
        "4",
        "--restarts",
        "2",
        "--search",
        "normal",
        "--optimizer",
        optimizer,
    ]
    first = run_pysmt(*command)
    assert first.returncode == 0, first.stderr
    # stderr is no terminal: a line per iteration, no progress bar's carriage returns
    assert "\r" not in first.stderr and "pysmt tune: iteration 2: dev BLEU" in first.stderr
    assert "pysmt tune: iteration 1: decode dev (8 sentences)" in first.stderr  # (a rerun that resumes has none)
    log = [line.split("\t") for line in (tmp_path / "tune" / "summary.tsv").read_text().splitlines()]
    assert log[0][:2] == ["iteration", "dev_bleu"]
    assert float(log[1][1]) == 0.0 and float(log[-1][1]) == 100.0  # untuned all wrong, tuned all right
    # each row's weights are those its iteration decoded with
    for row in log[1:]:
        decoded_with = (tmp_path / "tune" / f"run{row[0]}" / "weights.txt").read_text().split()
        values = [float(w) for w in decoded_with if not w.endswith("=")]
        assert [float(w) for w in row[7:]] == pytest.approx(values, rel=1e-5)
    named = [line.split() for line in (tmp_path / "tune" / "run1" / "weights.txt").read_text().splitlines()]
    expected = [name[:-1] if len(ws) == 1 else f"{name[:-1]}[{k}]" for name, *ws in named for k in range(len(ws))]
    assert log[0][7:] == expected  # one column a weight, named as Moses' n-best lists name the feature
    assert (tmp_path / "tune" / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    tuned = tmp_path / "tune" / "pysmt.toml"
    decoded = run_pysmt("decode", "-c", tuned, "-i", tmp_path / "dev.src")
    assert decoded.returncode == 0, decoded.stderr
    assert decoded.stdout.splitlines() == (tmp_path / "dev.ref").read_text().splitlines()
    from pysmt.config_files import load_config

    assert load_config(tuned).feature("UnknownWordPenalty0").weights == [1.0]  # not tunable: fixed
    first = (tmp_path / "tune" / "run1" / "weights.txt").read_text().splitlines()
    assert sum(
        abs(float(w)) for line in first if not line.startswith("Unknown") for w in line.split()[1:]
    ) == pytest.approx(1.0)  # the first decode too, as mert-moses.pl
    # a rerun resumes from the files: nothing is decoded again and the result is the same
    again = run_pysmt(*command, "--quiet")  # (--quiet changes no result: the same job)
    assert again.returncode == 0 and "decode dev" not in again.stderr
    assert (tmp_path / "tune" / "pysmt.toml").read_text() == tuned.read_text()
    assert "pysmt tune: iteration" not in again.stderr and "pysmt tune: best dev BLEU 100.00" in again.stderr


def test_tune_rejects_a_dev_set_of_unequal_sides_before_decoding(tmp_path):
    ini = misleading_system(tmp_path / "system")
    (tmp_path / "dev.src").write_text("a b\nc d\n")
    (tmp_path / "dev.ref").write_text("xa xb\n")
    proc = run_pysmt(
        "tune", "-c", ini, "--src", tmp_path / "dev.src", "--ref", tmp_path / "dev.ref", "--out", tmp_path / "tune"
    )
    one_line_error(proc, "has 2 lines but", "has 1")
    assert not (tmp_path / "tune").exists()


def test_nbest_with_inconsistent_features_is_an_error_naming_the_line(tmp_path):
    path = tmp_path / "nbest.txt"
    path.write_text("0 ||| x ||| LM0= -1 TM0= -2 -3 ||| -6\n0 ||| y ||| LM0= -1 TM0= -2 ||| -3\n")
    with pytest.raises(PysmtError, match=r"nbest.txt, line 2: features LM0\(1\) TM0\(1\) differ"):
        read_nbest(path, 1)
    path.write_text("0 ||| x ||| LM0= -1 TM0= -2 -3 ||| -6\n")
    labels, entries = read_nbest(path, 1)
    assert labels == [("LM0", 1), ("TM0", 2)] and entries[0].features == (-1.0, -2.0, -3.0)


def test_pool_merges_lists_and_scores_each_distinct_text_once(tmp_path):
    processed = []

    def postprocess(words: str) -> str:
        processed.append(words)
        return words.replace("@", "")

    pool = NbestPool(BleuStatistics([["a b c d"], ["x y"]]), postprocess)
    first, second = tmp_path / "run1.txt", tmp_path / "run2.txt"
    # "a b@ x" twice under two derivations, once repeated exactly; sentence 1 once
    first.write_text(
        "0 ||| a b@ x ||| F0= 1 ||| 1\n0 ||| a b@ x ||| F0= 2 ||| 2\n"
        "0 ||| a b@ x ||| F0= 1 ||| 1\n1 ||| x y ||| F0= 0 ||| 0\n"
    )
    second.write_text("0 ||| a b@ x ||| F0= 3 ||| 3\n0 ||| a b@ x ||| F0= 1 ||| 1\n1 ||| x y ||| F0= 0 ||| 0\n")
    assert pool.add(first) == 3 and pool.add(second) == 1 and len(pool) == 4
    assert sorted(processed) == ["a b@ x", "x y"]
    features, stats = pool.arrays()
    assert features[0].tolist() == [[1.0], [2.0], [3.0]] and features[1].tolist() == [[0.0]]
    assert stats[0].tolist() == [[2, 3, 1, 2, 0, 1, 0, 0, 4]] * 3  # the hand-computed case above
    assert stats[1].tolist() == [[2, 2, 1, 1, 0, 0, 0, 0, 2]]


# -- historic interpolation: the next weights move part of the way --------------------------------


def test_interpolation_moves_part_of_the_way_between_normalized_weights():
    from tuning.loop import interpolated

    decoded = np.array([1.0, 0.2, -0.2, 0.6])  # the first feature is fixed (the unknown-word penalty)
    optimized = np.array([1.0, 4.0, 0.0, -4.0])
    tuned = np.array([False, True, True, True])
    # scale-free: both L1-normalized over the tuned features (0.5 0 -0.5 and 0.2 -0.2 0.6), then mixed
    scale_free = np.array([True, True, True, True])  # every untuned feature constant within the lists
    fixed_varies = np.array([False, True, True, True])
    assert interpolated(decoded, optimized, tuned, 0.5, scale_free).tolist() == pytest.approx([1.0, 0.35, -0.1, 0.05])
    assert interpolated(decoded, optimized, tuned, 0.5, fixed_varies).tolist() == pytest.approx(
        [1.0, 2.1, -0.1, -1.7]
    )  # a fixed feature varies within lists: the scale matters, mix as they are
    assert interpolated(decoded, optimized, tuned, 1.0, scale_free) is optimized  # plain MERT
    assert decoded.tolist() == [1.0, 0.2, -0.2, 0.6]  # inputs untouched


@pytest.mark.slow  # three tune runs
def test_tune_records_its_interpolation(tmp_path):
    system = write_moses_system(tmp_path / "system")
    src, ref = tmp_path / "dev.src", tmp_path / "dev.ref"
    src.write_text("a b c\nc b a\nb c\n")
    ref.write_text("x y z\nz y x\ny z\n")
    out = tmp_path / "tune"
    command = [
        "tune",
        "-c",
        system,
        "--src",
        src,
        "--ref",
        ref,
        "--out",
        out,
        "--max-iterations",
        "1",
        "--restarts",
        "2",
    ]
    assert run_pysmt(*command).returncode == 0
    one_line_error(run_pysmt(*command, "--historic-interpolation", "1"), "interpolation: 0.5 -> 1.0")
    one_line_error(run_pysmt(*command, "--historic-interpolation", "0"), "--historic-interpolation", status=2)


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--seed", "-1", "Invalid value for '--seed': -1 is not in the range x>=0."),
        ("--restarts", "10001", "Invalid value for '--restarts': 10001 is not in the range 0<=x<=10000."),
    ],
)
def test_tune_bounds_the_optimizer_s_numbers_before_decoding(tmp_path, option, value, message):
    """A negative seed was numpy's traceback, a billion restarts a memory error: both after the first decoding."""
    ini = misleading_system(tmp_path / "system")
    (tmp_path / "dev.src").write_text("a b\n")
    (tmp_path / "dev.ref").write_text("xa xb\n")
    proc = run_pysmt(
        "tune", "-c", ini, "--src", tmp_path / "dev.src", "--ref", tmp_path / "dev.ref", "--out", tmp_path / "tune",
        "--optimizer", "mert", option, value,
    )  # fmt: skip
    assert (proc.returncode, proc.stderr.splitlines()[-1]) == (2, f"Error: {message}")
    assert not (tmp_path / "tune").exists()
