"""The ``rnn`` feature's ``mode = "column"``: the scores ``pysmt rnn score`` stored with a binary phrase table
are the table's extra column (Moses' semantics), ranked by the table limit with the feature's weight; under
the default ``mode = "search"`` they enter after the table limit, as before. Both engines agree; a pair
without a stored score gets the network's; a column that does not exist is a one-line error.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from pysmt.decoder import Decoder
from pysmt.plugin import PysmtError, ScoreWriter, Sentence
from pysmt.plugin.systems import PhraseTable
from pysmt.search.model import weighted_sum
from pysmt.testing import configure_system, one_line_error, run_pysmt, write_toy_system
from rnn_feature.scoring import score_phrases
from rnn_feature.store import stored_by
from rnn_feature.training import TrainingLimits, train
from rnn_testing import TINY, toy_table

# "three" has two translations; the table prefers "trois" (0.5 against 0.4 in each of its 4 scores), the RNN's
# stored scores prefer "tres" (-1 against -3). Table limit 1 keeps one.
PHRASES = """three ||| trois ||| 0.5 0.5 0.5 0.5 ||| 0-0
three ||| tres ||| 0.4 0.4 0.4 0.4 ||| 0-0
six ||| six ||| 0.5 0.5 0.5 0.5 ||| 0-0
"""
STORED = {("three", "trois"): -3.0, ("three", "tres"): -1.0, ("six", "six"): math.nan}  # six: none stored
RNN_WEIGHT = 0.5


@pytest.fixture(scope="module")
def column_system(tmp_path_factory) -> tuple[Path, Path]:
    """A binary toy system with table limit 1 (the LM weighted 0: the ranking is the table's and the RNN's), a
    tiny RNN model, and STORED stored with the table as that model's scores."""
    from pysmt.binarize import binarize_system

    tmp = tmp_path_factory.mktemp("column")
    model = tmp / "rnn"
    limits = TrainingLimits(max_updates=2, valid_every=2)
    train(toy_table(tmp / "pt.gz", n=40), model, TINY, torch.device("cpu"), limits)
    ini = write_toy_system(tmp / "text", phrases=PHRASES, reordering=None, weights={"KENLM0": "0"})
    ini.write_text(ini.read_text().replace("table-limit=20", "table-limit=1"))
    config = binarize_system(configure_system(ini), tmp / "bin")
    folder = next((tmp / "bin").glob("*phrase-table*"))
    table = PhraseTable(folder)
    values = np.full((len(table), 1), np.nan, dtype=np.float32)
    for source in ("three", "six"):
        for entry in table.lookup(source):
            values[entry.row, 0] = STORED[(source, entry.target[0])]
    writer = ScoreWriter(folder, "rnn", 1, stored_by(model))
    writer.write(values)
    writer.finish()
    return config, model


def decoders(config: Path, model: Path, mode: str | None) -> dict[str, Decoder]:
    params = [f"rnn.model={model}", "rnn.device=cpu"] + ([f"rnn.mode={mode}"] if mode else [])
    return {
        engine: Decoder(
            configure_system(config, ["rnn"], params).with_weights({"RNN0": [RNN_WEIGHT]}, "test"), engine=engine
        )
        for engine in ("python", "auto")
    }


def options_of(decoder: Decoder, line: str) -> dict[tuple[int, int], list]:
    """A line's options as the decoder builds them (either engine): (target, unweighted scores, isolation, future)."""
    sentence = Sentence(tuple(line.split()))
    if decoder.compiled_options is None:
        built = decoder.options.build(sentence)
    else:
        made, objects = decoder.compiled_options.build(sentence)
        built = objects or decoder.compiled_options.materialize(made, sentence)
    decoder.model.end_sentence()
    return {
        span: [(o.target, o.scores.tolist(), o.isolation, o.future) for o in opts]
        for span, opts in sorted(built.by_span.items())
    }


@pytest.mark.parametrize("mode", [None, "search", "column"])
def test_the_column_takes_part_in_the_table_limit_and_search_mode_does_not(column_system, mode):
    config, model = column_system
    found = {engine: options_of(d, "three six zebra") for engine, d in decoders(config, model, mode).items()}
    assert found["python"] == found["auto"]  # both engines, to the last bit
    options = found["auto"]
    rnn = decoders(config, model, mode)["auto"].features[-1]
    (three,), (six,), (zebra,) = options[(0, 1)], options[(1, 2)], options[(2, 3)]
    # by hand: the table's 4 weights of 0.2 make "trois" better by 0.8 * log(0.5 / 0.4) = 0.18; the RNN's
    # weight 0.5 makes "tres" better by 0.5 * (-1 - -3) = 1: only the column sees it before the limit
    assert three[0] == (("tres",) if mode == "column" else ("trois",))
    assert three[1][-1] == (-1.0 if mode == "column" else -3.0)  # the stored score, either way
    weights = decoders(config, model, mode)["auto"].model.weights.tolist()
    if mode == "column":  # a table column: in the weighted sum from the left, as the table's own scores
        assert three[2] == weighted_sum(weights, three[1])
    # no stored score ("six": NaN) and unknown words: the network's, in the search
    network = score_phrases(rnn.model, rnn.source, rnn.target, [(["six"], ["six"]), (["zebra"], ["zebra"])])
    assert [six[1][-1], zebra[1][-1]] == pytest.approx(network.tolist(), abs=1e-6)
    assert rnn.stored_columns("PhraseDictionaryMemory0") is (
        rnn.stored["PhraseDictionaryMemory0"] if mode == "column" else None
    )


def test_the_column_and_search_modes_decode_alike_but_for_the_limit(column_system):
    """Whole decodes, n-best lists with RNN0= scores, both engines alike in each mode."""
    config, model = column_system
    for mode, best in (("search", "trois six"), ("column", "tres six")):
        found = {
            engine: [(c.words, c.scores.tolist(), c.total) for c in d.translate("three six", nbest_size=3).hypotheses]
            for engine, d in decoders(config, model, mode).items()
        }
        assert found["python"] == found["auto"]
        assert " ".join(found["auto"][0][0]) == best


def test_a_column_that_does_not_exist_is_a_one_line_error(column_system, tmp_path):
    config, model = column_system
    text = config.parent.parent / "text" / "moses.ini"
    with pytest.raises(PysmtError, match=r"mode = column needs the scores of .* is a text table .* pysmt rnn score"):
        decoders(text, model, "column")
    other = tmp_path / "other"  # another model's scores are not this one's column
    train(
        toy_table(tmp_path / "pt.gz", n=40, seed=1),
        other,
        TINY,
        torch.device("cpu"),
        TrainingLimits(max_updates=2, valid_every=2),
    )
    with pytest.raises(PysmtError, match=r"stores another model's: store them with pysmt rnn score --model"):
        decoders(config, other, "column")
    with pytest.raises(PysmtError, match=r"mode must be search or column, not 'columns'"):
        decoders(config, model, "columns")
    (tmp_path / "w.txt").write_text(f"RNN0= {RNN_WEIGHT}\n")
    line = one_line_error(
        run_pysmt(
            "decode",
            "-c",
            text,
            "--features",
            "rnn",
            "--param",
            f"rnn.model={model}",
            "--param",
            "rnn.mode=column",
            "--weights",
            tmp_path / "w.txt",
            input="three\n",
        ),
        "feature RNN0: mode = column",
        str(text.parent / "phrases.txt"),
        f"pysmt rnn score --model {model} --phrase-table SYSTEM-bin/TABLE",
    )
    assert "Traceback" not in line


@pytest.mark.parametrize("mode", ["search", "column"])
def test_a_markup_translation_gets_the_networks_score_never_a_stored_one(column_system, mode):
    """A markup translation (--xml-input) has no table entry: the network scores it (not the stored -1 of the
    table's "three -> tres"), alike in both engines."""
    config, model = column_system
    line = '<n translation="tres">three</n> six'
    found = {}
    for engine, decoder in decoders(config, model, mode).items():
        decoder.xml_input = "exclusive"
        found[engine] = [
            (c.words, c.scores.tolist(), c.total) for c in decoder.translate(line, nbest_size=3).hypotheses
        ]
    assert found["python"] == found["auto"]
    words, scores, _ = found["auto"][0]
    rnn = decoders(config, model, mode)["auto"].features[-1]
    network = score_phrases(rnn.model, rnn.source, rnn.target, [(["three"], ["tres"]), (["six"], ["six"])])
    assert words == ["tres", "six"] and scores[-1] == pytest.approx(float(network.sum()), abs=1e-6)
