"""Search: exactness against exhaustive enumeration, n-best invariants, a hand-computed derivation."""

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pysmt.config_files import load_config
from pysmt.decoder import Decoder
from pysmt.phrases import Sentence
from pysmt.testing import exhaustive_best, huge_beam
from tests.helpers import LN10, write_moses_system

ln = math.log


VOCAB_SRC, VOCAB_TGT = ["a", "b", "c", "d"], ["x", "y", "z"]


@st.composite
def tiny_systems(draw):
    phrases = set()
    for _ in range(draw(st.integers(4, 12))):
        src = " ".join(draw(st.lists(st.sampled_from(VOCAB_SRC), min_size=1, max_size=2)))
        tgt = " ".join(draw(st.lists(st.sampled_from(VOCAB_TGT), min_size=1, max_size=2)))
        phrases.add((src, tgt))
    probs = [draw(st.sampled_from([0.1, 0.3, 0.5, 0.9])) for _ in phrases]
    table = "".join(f"{s} ||| {t} ||| {p} {p}\n" for (s, t), p in zip(sorted(phrases), probs))
    sentence = tuple(draw(st.lists(st.sampled_from(VOCAB_SRC), min_size=1, max_size=5)))
    limit = draw(st.sampled_from([0, 1, 2, 6, -1]))
    return table, sentence, limit


@settings(max_examples=40, deadline=None)
@given(tiny_systems())
def test_huge_beam_equals_exhaustive_search(tmp_path_factory, system):
    table, sentence, limit = system
    ini = write_moses_system(
        tmp_path_factory.mktemp("sys"), phrases=table, reordering=None, extra=f"[distortion-limit]\n{limit}\n"
    )
    decoder = Decoder(load_config(ini))
    expected = exhaustive_best(decoder, sentence)
    for algorithm in ("normal", "cube"):
        result = huge_beam(decoder, algorithm).translate(" ".join(sentence))
        assert result.hypotheses[0].total == pytest.approx(expected, abs=1e-9), algorithm


def test_hand_computed_monotone_derivation(tiny_system):
    decoder = Decoder(load_config(tiny_system))
    result = decoder.translate("a b c", nbest_size=200)
    labels = {name: (lo, hi) for name, lo, hi in decoder.nbest_labels()}
    monotone = [c for c in result.hypotheses if c.words == ["x", "y", "z"] and c.alignment == [(0, 0), (1, 1), (2, 2)]]
    # a|b|c one word at a time or "a b"|c: pick the one-word segmentation by its phrase-table scores
    by_tm = {tuple(np.round(c.scores[labels["PhraseDictionaryMemory0"][0] :], 6)): c for c in monotone}
    single = by_tm[tuple(np.round([ln(0.5) + ln(0.5) + ln(0.9), ln(0.5) + ln(0.4) + ln(0.9)], 6))]
    lo, hi = labels["KENLM0"]
    assert single.scores[lo] == pytest.approx((-0.2 - 0.3 - 0.25 - 0.4) * LN10)
    lo, hi = labels["LexicalReordering0"]
    assert list(single.scores[lo:hi]) == pytest.approx([ln(0.5) + ln(0.4) + ln(0.8), 0, 0, ln(0.6) + ln(0.5), 0, 0])
    assert single.scores[labels["Distortion0"][0]] == 0 and single.scores[labels["WordPenalty0"][0]] == -3


def test_nbest_is_sorted_and_totals_add_up(tiny_system):
    decoder = Decoder(load_config(tiny_system))
    result = decoder.translate("a b c", nbest_size=50)
    totals = [c.total for c in result.hypotheses]
    # every derivation: 3 single words in 6 orders x 2 translations of a, "a b"+c in 2, a+"b c" in 2 x 2
    assert len(totals) == 12 + 2 + 4
    assert totals == sorted(totals, reverse=True)
    weights = decoder.model.weights
    for candidate in result.hypotheses:
        assert candidate.total == pytest.approx(float(candidate.scores @ weights), abs=1e-9)
    assert result.hypotheses[0].total == pytest.approx(exhaustive_best(decoder, ("a", "b", "c")))


def test_distinct_nbest_has_unique_strings(tiny_system):
    result = Decoder(load_config(tiny_system)).translate("a b c", nbest_size=10, distinct=True)
    strings = [" ".join(c.words) for c in result.hypotheses]
    assert len(strings) == len(set(strings)) > 1


@pytest.mark.parametrize("engine", ["python", "auto"])
def test_distinct_list_is_the_full_list_less_its_repeats(tiny_system, engine):
    """Moses' distinct n-best: a repeated string is left out, but the derivations below it are still explored,
    so the distinct list is the full list with each string's later derivations removed, in the same order."""
    decoder = Decoder(load_config(tiny_system), engine=engine)
    full = [" ".join(c.words) for c in decoder.translate("a b a", nbest_size=1000).hypotheses]
    first_of_each = list(dict.fromkeys(full))  # 'y y x' comes third, behind two repeats of 'x y y'
    assert first_of_each[:5] == ["x y x", "x y y", "y y x", "y x y", "y y y"]
    for size in (3, 5, 12):
        distinct = [" ".join(c.words) for c in decoder.translate("a b a", nbest_size=size, distinct=True).hypotheses]
        assert distinct == first_of_each[:size]


def test_table_limit_keeps_the_best_by_weighted_score_and_estimate(tmp_path):
    phrases = "a ||| x ||| 0.1 0.1\na ||| y ||| 0.9 0.9\na ||| z ||| 0.5 0.5\n"
    ini = write_moses_system(tmp_path, phrases=phrases, reordering=None)
    ini.write_text(ini.read_text().replace("table-limit=20", "table-limit=2"))
    decoder = Decoder(load_config(ini))
    kept = decoder.options.build(Sentence(("a",))).by_span[(0, 1)]
    assert [o.target for o in kept] == [("y",), ("z",)]
    assert kept[0].future == pytest.approx(kept[0].isolation + 0.5 * -0.7 * LN10)


def test_deterministic_and_cube_agrees_on_random_sentences(tiny_system):
    decoder = Decoder(load_config(tiny_system))
    rng = random.Random(0)
    for _ in range(10):
        line = " ".join(rng.choice("abcq") for _ in range(rng.randint(1, 7)))
        first = decoder.translate(line, nbest_size=5)
        again = decoder.translate(line, nbest_size=5)
        assert [c.words for c in first.hypotheses] == [c.words for c in again.hypotheses]
        exact = exhaustive_best(decoder, tuple(line.split()))
        assert first.hypotheses[0].total == pytest.approx(exact)
