"""The compiled option builder against the Python one (pysmt/search/options.py, the specification):
the same spans, the same options in the same order, with the same scores to the last bit, on random
systems with one or two phrase tables, table limits, unknown words, and plugin features scored from
Python (context-free and per-sentence, some forbidding pairs; a per-sentence one with stored columns of
the first table, ranked by its table limit), sentence after sentence (the ranked pairs are kept across
sentences, and forgotten with new weights).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pysmt.config_files import load_config
from pysmt.decoder import Decoder
from pysmt.features.base import Feature, StoredColumns
from pysmt.models.phrase_table import PhraseTable
from pysmt.phrases import Sentence, SentenceOptions
from pysmt.testing import registered, write_toy_system

SRC, TGT = ["a", "b", "c", "d"], ["x", "y", "z", "w"]


class TargetLetters(Feature):
    """Context-free, from Python: a score and an estimate from the target's letters; pairs whose target
    starts with ``w`` are forbidden (-inf) when ``forbid`` is set."""

    default_label = "Letters"
    forbid = False

    @classmethod
    def from_config(cls, name, params, system):
        return cls(name, 2)

    def default_weights(self):
        return [0.7, -0.2]

    def evaluate_in_isolation(self, phrases):
        scores = np.array([[len(p.target) * 0.37, sum(w == "x" for w in p.target) - 0.5] for p in phrases])
        if self.forbid:
            scores[[p.target[0] == "w" for p in phrases], 0] = -math.inf
        return scores, np.array([[0.11 * len(p.source), 0.0] for p in phrases])


class SpanPosition(Feature):
    """Per sentence, from Python: a score from where the option lies in the sentence."""

    default_label = "Position"

    @classmethod
    def from_config(cls, name, params, system):
        return cls(name, 1)

    def default_weights(self):
        return [0.3]

    def evaluate_with_source_context(self, options):
        return np.array([[0.13 * option.start - 0.05 * option.end] for option in options]), None


class StoredColumn(Feature):
    """Per sentence, with stored columns of the first phrase table (:class:`StoredColumns`, as the RNN's ``mode =
    "column"``): a value per entry, NaN (none) for every fourth; the other options are scored per sentence, with
    an estimate. Its hook is never asked about an option its column covers."""

    default_label = "Column"

    def __init__(self, name, entries):
        super().__init__(name, 1)
        rows = np.arange(entries)
        self.values = np.where(rows % 4 == 3, np.nan, -0.3 * ((rows * 7) % 5) - 0.1).astype(np.float32)[:, None]

    @classmethod
    def from_config(cls, name, params, system):
        table = next(spec for spec in system.features if spec.type == "phrase-table")
        return cls(name, len(PhraseTable(table.params["path"])))

    def default_weights(self):
        return [0.45]

    def stored_columns(self, table):
        return self.values if table == "PhraseDictionaryMemory0" else None

    def evaluate_with_source_context(self, options):
        for option in options:
            pair = option.pair
            covered = pair.table == "PhraseDictionaryMemory0" and pair.entry >= 0  # -1: a markup pair, no entry
            assert not covered or np.isnan(self.values[pair.entry, 0]), "covered"
        return (
            np.array([[0.17 * len(option.target) - 0.02 * option.start] for option in options]),
            np.array([[0.05 * len(option.target)] for option in options]),
        )


def test_a_feature_with_stored_columns_declares_them():
    assert isinstance(StoredColumn("Column0", 3), StoredColumns)


def table_text(draw, pairs_count: int) -> str:
    pairs = sorted(
        {
            (
                " ".join(draw(st.lists(st.sampled_from(SRC), min_size=1, max_size=3))),
                " ".join(draw(st.lists(st.sampled_from(TGT), min_size=1, max_size=3))),
            )
            for _ in range(pairs_count)
        }
    )
    return "".join(
        f"{s} ||| {t} ||| {draw(st.sampled_from([0.05, 0.2, 0.3, 0.5, 0.9]))} "
        f"{draw(st.sampled_from([0.1, 0.5, 1.0]))} ||| {draw(st.sampled_from(['0-0', '', '0-0 0-1']))}\n"
        for s, t in pairs
    )


@st.composite
def systems(draw):
    tables = [table_text(draw, draw(st.integers(4, 14))) for _ in range(draw(st.integers(1, 2)))]
    limits = [draw(st.sampled_from([0, 1, 2, 3, 20])) for _ in tables]
    plugins = draw(
        st.sampled_from(
            [(), ("letters",), ("position",), ("letters", "position"), ("column",), ("letters", "column", "position")]
        )
    )
    sentences = [" ".join(draw(st.lists(st.sampled_from(SRC + ["q"]), min_size=1, max_size=7))) for _ in range(3)]
    return tables, limits, plugins, draw(st.booleans()), sentences


def same_options(python: SentenceOptions, compiled: SentenceOptions) -> None:
    def described(options: SentenceOptions) -> list:
        return [
            (
                span,
                [
                    (
                        o.index,
                        o.target,
                        o.pair.alignment,
                        o.pair.table,
                        o.pair.unknown,
                        o.isolation,
                        o.future,
                        o.scores.tolist(),
                    )
                    for o in opts
                ],
            )
            for span, opts in sorted(options.by_span.items())
        ]

    assert described(compiled) == described(python)


def write_random_system(directory: Path, tables: list[str], limits: list[int], plugins: list[str]) -> Path:
    """The moses.ini of a system that :func:`systems` drew: its one or two phrase tables with their limits, and
    its plugin features."""
    (directory / "more.txt").write_text(tables[-1], encoding="utf-8")
    more = [f"PhraseDictionaryMemory path=more.txt num-features=2 table-limit={limits[-1]}"] if len(tables) > 1 else []
    ini = write_toy_system(
        directory,
        phrases=tables[0],
        features=[*more, *plugins],
        weights={"PhraseDictionaryMemory1": "0.4 -0.1"} if more else None,
    )
    ini.write_text(ini.read_text().replace("table-limit=20", f"table-limit={limits[0]}", 1))
    return ini


@settings(max_examples=60, deadline=None)
@given(systems())
def test_the_compiled_builder_makes_the_python_builders_options(tmp_path_factory, system):
    tables, limits, plugins, forbid, sentences = system
    ini = write_random_system(tmp_path_factory.mktemp("sys"), tables, limits, plugins)
    TargetLetters.forbid = forbid
    with registered(letters=TargetLetters, position=SpanPosition, column=StoredColumn):
        python, compiled = (Decoder(load_config(ini), engine=engine) for engine in ("python", "auto"))
        assert compiled.compiled_options is not None
        for weights in (None, [[w * 1.5 for w in f] for f in python.weights]):  # new weights: ranked again
            if weights:
                python.set_weights(weights)
                compiled.set_weights(weights)
            for index, line in enumerate(sentences):
                sentence = Sentence(tuple(line.split()), index)
                expected = python.options.build(sentence)
                built, objects = compiled.compiled_options.build(sentence)
                made = objects or compiled.compiled_options.materialize(built, sentence)
                same_options(expected, made)
                assert len(built) == len(expected.options)
                python.model.end_sentence()
                compiled.model.end_sentence()
