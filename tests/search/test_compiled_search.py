"""The compiled search core against the Python reference search: the same hypotheses, the same scores.

The Python searches (normal.py, cube.py) and nbest.py are the executable specification; the
compiled core must give the same n-best lists with the same feature scores, to the last bit,
whatever the pruning settings, on random tiny systems, on sentences longer than 64 words, and on
the Moses news system (the reference lists in data/reference were recorded with the Python
search).
"""

from __future__ import annotations

import gzip
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pysmt.config_files import load_config
from pysmt.decoder import Decoder
from tests.helpers import write_moses_system

REFERENCE = Path(__file__).resolve().parent / "data" / "reference"
SRC, TGT = ["a", "b", "c", "d", "e"], ["x", "y", "z", "w"]


def nbest(decoder: Decoder, line: str, size: int = 30, distinct: bool = False) -> list[tuple[str, list[float], float]]:
    return [
        (" ".join(c.words), c.scores.tolist(), c.total)
        for c in decoder.translate(line, nbest_size=size, distinct=distinct).hypotheses
    ]


def same_lists(python, compiled, tolerance: float = 0.0) -> None:
    """Same strings in the same order with the same scores: to the last bit unless a tolerance is given."""
    assert [words for words, _, _ in compiled] == [words for words, _, _ in python]
    if not tolerance:
        assert compiled == python
        return
    for (_, scores_p, total_p), (_, scores_c, total_c) in zip(python, compiled):
        assert total_c == pytest.approx(total_p, abs=tolerance)
        assert scores_c == pytest.approx(scores_p, abs=tolerance)


@st.composite
def systems(draw):
    pairs = set()
    for _ in range(draw(st.integers(5, 16))):
        src = " ".join(draw(st.lists(st.sampled_from(SRC), min_size=1, max_size=3)))
        tgt = " ".join(draw(st.lists(st.sampled_from(TGT), min_size=1, max_size=3)))
        pairs.add((src, tgt))
    pairs = sorted(pairs)
    probs = [draw(st.sampled_from([0.05, 0.2, 0.3, 0.5, 0.9])) for _ in pairs]
    table = "".join(f"{s} ||| {t} ||| {p} {1 - p / 2}\n" for (s, t), p in zip(pairs, probs))
    rows = [draw(st.lists(st.sampled_from([0.1, 0.2, 0.5, 0.7]), min_size=6, max_size=6)) for _ in pairs]
    reordering = "".join(
        f"{s} ||| {t} ||| {' '.join(map(str, r))}\n" for (s, t), r in zip(pairs, rows) if draw(st.booleans())
    )
    sentence = " ".join(draw(st.lists(st.sampled_from(SRC + ["q"]), min_size=1, max_size=8)))
    search = {
        "distortion-limit": draw(st.sampled_from([0, 1, 3, 6, -1])),
        "stack": draw(st.integers(1, 6)),
        "beam-threshold": draw(st.sampled_from([0.0, 1e-5, 0.1, 0.5])),
        "cube-pruning-pop-limit": draw(st.integers(1, 12)),
    }
    return table, reordering or None, sentence, search


@settings(max_examples=60, deadline=None)
@given(systems())
def test_compiled_core_equals_the_python_search(tmp_path_factory, system):
    table, reordering, sentence, search = system
    extra = "".join(f"[{key}]\n{value}\n" for key, value in search.items())
    ini = write_moses_system(tmp_path_factory.mktemp("sys"), phrases=table, reordering=reordering, extra=extra)
    config = load_config(ini)
    for algorithm in ("normal", "cube"):
        python = Decoder(config, algorithm=algorithm, engine="python")
        compiled = Decoder(config, algorithm=algorithm)
        assert compiled.compiled is not None and python.compiled is None
        same_lists(nbest(python, sentence), nbest(compiled, sentence))
        for size in (1, 3):  # distinct lists: the core compares target strings as the Python search does
            same_lists(nbest(python, sentence, size, distinct=True), nbest(compiled, sentence, size, distinct=True))


def test_sentences_longer_than_64_words(tiny_system):
    config = load_config(tiny_system)
    line = " ".join("abcq"[(k * 7) % 4] for k in range(150))
    for algorithm in ("normal", "cube"):
        config = replace(config, search=replace(config.search, stack_size=20))
        python, compiled = Decoder(config, algorithm=algorithm, engine="python"), Decoder(config, algorithm=algorithm)
        same_lists(nbest(python, line, 5), nbest(compiled, line, 5))


@pytest.mark.parametrize("plugin", ["bigram", "batched-bigram"])
def test_plugin_features_are_called_back_with_the_same_results(tiny_system, fake_registry, plugin):
    config = load_config(tiny_system)
    for algorithm in ("normal", "cube"):
        for stack, round_size in ((3, 2), (200, 32)):
            search = replace(
                config.search, algorithm=algorithm, stack_size=stack, pops_per_round=round_size, pop_limit=7
            )
            python = Decoder(replace(config, search=search), [plugin], engine="python", missing_weight=0.6)
            compiled = Decoder(replace(config, search=search), [plugin], missing_weight=0.6)
            for line in ["a b c", "c b a q a", "a a b c c b"]:
                same_lists(nbest(python, line), nbest(compiled, line))


def test_plugin_features_with_a_huge_beam_find_the_exhaustive_best(tiny_system, fake_registry):
    from pysmt.testing import exhaustive_best, huge_beam

    config = load_config(tiny_system)
    for engine in ("auto", "python"):
        for algorithm in ("normal", "cube"):
            decoder = huge_beam(Decoder(config, ["batched-bigram"], engine=engine, missing_weight=0.6), algorithm)
            for line in ["a b c", "c a b"]:
                best = exhaustive_best(decoder, tuple(line.split()))
                assert decoder.translate(line).hypotheses[0].total == pytest.approx(best, abs=1e-9)


def reference_lists(path: Path, sentences: int) -> dict[int, list[tuple[str, list[float], float]]]:
    lists: dict[int, list] = {}
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            index, words, scores, total = line.rstrip("\n").split(" ||| ")
            if int(index) < sentences:
                values = [float(v) for v in scores.split() if not v.endswith("=")]
                lists.setdefault(int(index), []).append((words, values, float(total)))
    return lists


@pytest.mark.parametrize("algorithm, sentences", [("cube", 40), ("normal", 15)])
def test_moses_news_system_gives_the_recorded_nbest_lists(algorithm, sentences, shared_data):
    system = shared_data("moses-news", "model", "moses.ini")
    lines = shared_data("moses-news", "inputs", "newstest2013.first500.tok.true.en").read_text().splitlines()
    reference = reference_lists(REFERENCE / f"moses-news.first300.{algorithm}.nbest10.gz", sentences)
    decoder = Decoder(load_config(system), algorithm=algorithm)
    for index, line in enumerate(lines[:sentences]):
        same_lists(reference[index], nbest(decoder, line, 10), tolerance=1e-4)
