"""The example plugins, tested as their author would: installed in their own environment, found through
their entry points (nothing registered by hand, no ``sys.path`` edits), on pysmt's toy system."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pysmt.testing import installed_features, run_pysmt, toy_decoder, toy_options, write_toy_system


@pytest.fixture
def system(tmp_path):
    return write_toy_system(tmp_path / "system")


def test_the_features_are_registered_entry_points():
    assert {"length-ratio", "repeated-word", "repeated-word-batched"} <= installed_features()


def test_length_ratio_scores_each_pair_by_hand(system):
    decoder = toy_decoder(system, ["length-ratio"], weights={"LengthRatio0": [0.5]})
    options = toy_options(decoder, "a b c")
    column = [name for name, _, _ in decoder.nbest_labels()].index("LengthRatio0")
    offset = decoder.nbest_labels()[column][1]
    scores = {(o.source, " ".join(o.target)): o.scores[offset] for o in options.options}
    assert scores[("a", "x")] == 0.0  # log(1 / 1)
    assert scores[("a b", "x y")] == 0.0  # log(2 / 2)
    assert ("b c", "z x") in scores and scores[("b c", "z x")] == 0.0


def test_repeated_word_penalizes_a_repeat_across_phrases(system):
    decoder = toy_decoder(system, ["repeated-word"], weights={"RepeatedWord0": [2.0]}, search="normal")
    labels = {name: lo for name, lo, _ in decoder.nbest_labels()}
    nbest = decoder.translate("a a", nbest_size=10).hypotheses
    for candidate in nbest:
        repeats = sum(1 for u, v in zip(candidate.words, candidate.words[1:]) if u == v)
        assert candidate.scores[labels["RepeatedWord0"]] == -repeats
    assert ["x", "x"] in [c.words for c in nbest]
    assert math.isclose(sum(c.total for c in nbest[:1]), float(nbest[0].scores @ decoder.model.weights))


@pytest.mark.parametrize("search", ["normal", "cube"])
def test_the_batched_feature_decodes_like_the_plain_one(system, search):
    plain = toy_decoder(system, ["repeated-word"], search=search)
    batched = toy_decoder(system, ["repeated-word-batched"], search=search)
    for line in ["a a b", "c c a a q", "b b b"]:
        one, two = plain.translate(line, nbest_size=20), batched.translate(line, nbest_size=20)
        assert [(c.words, c.total) for c in one.hypotheses] == [(c.words, c.total) for c in two.hypotheses]


def test_the_batched_feature_returns_what_the_search_checks(system):
    decoder = toy_decoder(system, ["repeated-word-batched"])
    feature = decoder.features[-1]
    options = toy_options(decoder, "a a")
    start = feature.start(options.sentence, options.options)
    scores, states = feature.score_batch(
        np.array([start, start], dtype=np.int64), np.array([0, 0], dtype=np.int32), np.array([False, True])
    )
    assert scores.dtype == np.float64 and scores.shape == (2, 1) and states.dtype == np.int64 and states.shape == (2,)


def test_decode_and_tune_with_the_plugins_from_the_command_line(system, tmp_path):
    source, reference = tmp_path / "dev.src", tmp_path / "dev.ref"
    source.write_text("a b c\na a\nc b\n")
    reference.write_text("x y z\nx y\nz y\n")
    features = "length-ratio,repeated-word-batched"
    decoded = run_pysmt("decode", "-c", system, "-i", source, "--features", features)
    assert decoded.returncode == 0, decoded.stderr
    assert len(decoded.stdout.splitlines()) == 3
    tuned = run_pysmt(
        "tune",
        "-c",
        system,
        "--src",
        source,
        "--ref",
        reference,
        "--features",
        features,
        "--out",
        tmp_path / "tune",
        "--max-iterations",
        "2",
        "--nbest-size",
        "10",
        "--restarts",
        "2",
    )
    assert tuned.returncode == 0, tuned.stderr
    assert "LengthRatio0=" in (tmp_path / "tune" / "weights.txt").read_text()
