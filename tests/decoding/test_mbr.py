"""MBR and consensus decoding (`decode --mbr`, `--consensus-decoding`; pysmt.decoding.mbr): Moses' sentence BLEU and
choice on hand-worked lists, the limits that give MAP back, and the command's wiring and checks."""

from __future__ import annotations

import math
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from pysmt.decoding import mbr
from pysmt.decoding.mbr import (
    MbrSettings,
    choose,
    consensus_scores,
    expected_losses,
    pairwise_bleu,
    posteriors,
    sentence_bleu,
)
from pysmt.testing import one_line_error, run_pysmt, write_toy_system

#: Posteriors 0.4, 0.3, 0.3 at scale 1: MAP is "x y"; no other translation shares a word with it.
HAND = [["x", "y"], ["a", "b"], ["a", "b", "c"]]
HAND_SCORES = [math.log(0.4), math.log(0.3), math.log(0.3)]


def test_moses_sentence_bleu_by_hand() -> None:
    # "a b" against "a b c": every precision 1 (3- and 4-grams: (0+1)/(0+1)), brevity exp(1 - 3/2)
    assert sentence_bleu(["a", "b"], ["a", "b", "c"]) == pytest.approx(math.exp(-0.5), abs=1e-15)
    # "a b c" against "a b": 2/3, (1+1)/(2+1), (0+1)/(1+1), 4-grams (0+1)/(0+1); no brevity penalty
    assert sentence_bleu(["a", "b", "c"], ["a", "b"]) == pytest.approx((2 / 9) ** 0.25, abs=1e-15)
    assert sentence_bleu(["x", "y"], ["a", "b"]) == 0.0  # no unigram match: 0, unsmoothed
    assert sentence_bleu([], ["a"]) == 0.0
    assert sentence_bleu(["a", "b", "c", "d"], ["a", "b", "c", "d"]) == 1.0


def test_mbr_chooses_by_hand_computed_expected_bleu() -> None:
    losses = expected_losses(HAND, HAND_SCORES)
    hand = [0.3 + 0.3, 0.4 + 0.3 * (1 - math.exp(-0.5)), 0.4 + 0.3 * (1 - (2 / 9) ** 0.25)]
    np.testing.assert_allclose(losses, hand, rtol=0, atol=1e-12)  # 0.6, 0.51804, 0.49402
    assert choose(HAND, HAND_SCORES, MbrSettings()) == 2  # MAP would be 0


def test_consensus_chooses_by_hand_computed_expected_counts() -> None:
    # expected counts: x y .4, a b .6, c .3, "x y" .4, "a b" .6, "b c" .3, "a b c" .3; expected length 2.3
    scores = consensus_scores(HAND, HAND_SCORES)
    hand = [
        math.exp((math.log(0.8 / 2) + math.log(1.4 / 2)) / 4 + 1 - 2.3 / 2),
        math.exp((math.log(1.2 / 2) + math.log(1.6 / 2)) / 4 + 1 - 2.3 / 2),
        math.exp((math.log(1.5 / 3) + math.log(1.9 / 3) + math.log(1.3 / 2)) / 4),
    ]
    np.testing.assert_allclose(scores, hand, rtol=0, atol=1e-12)  # 0.6261, 0.7164, 0.6736
    assert choose(HAND, HAND_SCORES, MbrSettings(consensus=True)) == 1


def test_the_limits_give_map_back() -> None:
    assert choose(HAND, HAND_SCORES, MbrSettings(scale=1e6)) == 0  # the posterior all on the best model score
    assert choose(HAND, HAND_SCORES, MbrSettings(scale=1e300)) == 0  # no overflow on the way
    assert choose(HAND, HAND_SCORES, MbrSettings(size=1)) == 0
    assert choose(HAND, HAND_SCORES, MbrSettings(size=2)) == 0  # "a b" against "x y" alone: loss .4 vs .3
    assert choose([], [], MbrSettings()) == 0 and choose([["a"]], [0.0], MbrSettings()) == 0


def test_the_size_counts_distinct_translations_and_ties_go_to_the_better_score() -> None:
    doubled = [HAND[0], HAND[0], HAND[1], HAND[2]]  # a repeated string is one candidate, its first entry's score
    assert choose(doubled, [HAND_SCORES[0], -50.0, *HAND_SCORES[1:]], MbrSettings(size=3)) == 3
    assert choose([["a"], ["b"]], [0.0, 0.0], MbrSettings()) == 0  # equal losses: the first, as Moses


def test_pairwise_bleu_is_sentence_bleu_for_every_pair() -> None:
    rng = np.random.default_rng(7)
    for _ in range(30):
        words = list("abcdef")[: rng.integers(1, 7)]
        hypotheses = [list(rng.choice(words, size=rng.integers(0, 14))) for _ in range(rng.integers(1, 25))]
        expected = [[sentence_bleu(h, r) for r in hypotheses] for h in hypotheses]
        np.testing.assert_array_equal(pairwise_bleu(hypotheses), np.array(expected))


def test_blocks_of_rows_give_the_same_bleu_and_risks_bit_for_bit(monkeypatch) -> None:
    rng = np.random.default_rng(3)
    hypotheses = [list(rng.choice(list("abcdefgh"), size=rng.integers(0, 12))) for _ in range(60)]
    scores = list(rng.uniform(-5, 0, size=60))
    whole, risks = pairwise_bleu(hypotheses), expected_losses(hypotheses, scores)
    for entries in (1, 200):  # one row a block; a few rows a block
        monkeypatch.setattr(mbr, "BLOCK_ENTRIES", entries)
        np.testing.assert_array_equal(pairwise_bleu(hypotheses), whole)
        np.testing.assert_array_equal(expected_losses(hypotheses, scores), risks)


def test_memory_is_bounded_whatever_the_size() -> None:
    """`--mbr-size 100000` built dense translations x n-grams and N x N x 4 matrices (3.2 GB, then a numpy
    MemoryError): 1,500 translations of 20 distinct words each needed 1.4 GB; now a few 32 MiB blocks."""
    hypotheses = [[f"w{i}-{k}" for k in range(20)] for i in range(1_500)]
    tracemalloc.start()
    try:
        risks = expected_losses(hypotheses, [-float(i) for i in range(1_500)])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * mbr.BLOCK_ENTRIES * 8, peak  # 256 MB
    assert risks[0] == pytest.approx(1 - posteriors([-float(i) for i in range(1_500)], 1.0)[0], abs=1e-12)


@pytest.mark.parametrize(
    "options, message",
    [
        (["--mbr", "--mbr-size", "0"], "--mbr-size must be positive, not 0"),
        (["--mbr", "--mbr-scale", "-1"], "--mbr-scale must be a finite number, 0 or more, not -1.0"),
        (["--consensus-decoding", "--mbr-scale", "nan"], "--mbr-scale must be a finite number, 0 or more, not nan"),
        (["--mbr", "--mbr-scale", "inf"], "--mbr-scale must be a finite number, 0 or more, not inf"),
        (["--mbr-size", "10"], "--mbr-size and --mbr-scale apply to --mbr or --consensus-decoding"),
    ],
)
def test_bad_values_are_one_line_errors(tiny_system: Path, options: list[str], message: str) -> None:
    one_line_error(run_pysmt("decode", "-c", tiny_system, *options, input="a b c\n"), message, status=2)


def nbest_lists(path: Path) -> dict[int, list[tuple[list[str], float]]]:
    lists: dict[int, list[tuple[list[str], float]]] = {}
    for line in path.read_text().splitlines():
        index, words, _, total = line.split(" ||| ")
        lists.setdefault(int(index), []).append((words.split(), float(total)))
    return lists


@pytest.mark.slow  # a whole tune, train or several decodes: seconds (the fast tier stays under 2 minutes)
def test_decode_writes_the_mbr_choice_of_its_nbest_list(tmp_path: Path) -> None:
    system = write_toy_system(tmp_path / "system")
    source = tmp_path / "in.txt"
    source.write_text("a b c\nc b a\nb c\n\na q b\n")

    def decode(*options: str | Path) -> list[str]:
        proc = run_pysmt("decode", "-c", system, "-i", source, "--quiet", *options)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.splitlines()

    plain = decode()
    assert decode("--mbr", "--mbr-size", "1") == plain
    nbest, alignment = tmp_path / "nbest.txt", tmp_path / "align.txt"
    chosen = decode("--mbr", "--mbr-scale", "0", "--nbest", nbest, "--nbest-size", "200", "--distinct")
    lists = nbest_lists(nbest)
    for index, line in enumerate(chosen):
        entries = lists.get(index, [([], 0.0)])
        expected = entries[choose([w for w, _ in entries], [t for _, t in entries], MbrSettings(scale=0))][0]
        assert line.split() == expected
    assert chosen != plain  # a flat posterior picks another translation on the toy system
    assert decode("--mbr", "--mbr-scale", "0", "--threads", "2", "--alignment", alignment) == chosen
    segmented = decode("--mbr", "--mbr-scale", "0", "--report-segmentation")
    assert [" ".join(w for w in line.split() if not w.startswith("|")) for line in segmented] == chosen
    assert len(alignment.read_text().splitlines()) == len(chosen)
    assert decode("--consensus-decoding", "--mbr-size", "1") == plain
