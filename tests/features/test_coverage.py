"""A neural model's most frequent target words against the binary phrase tables' vocabularies, before any
table loads (pysmt/features/coverage.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pysmt.binarize import binarize_system
from pysmt.config_files import load_config
from pysmt.features.coverage import table_coverage_warnings
from pysmt.testing import write_toy_system

#: The toy table's target words: mot0 ... mot59.
TARGETS = [f"mot{k}" for k in range(60)]


@pytest.fixture(scope="module")
def systems(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(text config, binary config) of a toy system whose phrase table translates ``a`` into each of ``TARGETS``."""
    folder = tmp_path_factory.mktemp("coverage")
    phrases = "".join(f"a ||| {word} ||| 0.5 0.5 ||| 0-0\n" for word in TARGETS)
    ini = write_toy_system(folder / "text", phrases=phrases)
    return ini, binarize_system(load_config(ini), folder / "binary")


def test_a_model_of_the_systems_words_passes(systems):
    _, binary = systems
    assert table_coverage_warnings("RNN0", TARGETS, Path("rnn"), load_config(binary)) == []


def test_a_model_of_other_words_is_named_with_the_table(systems):
    _, binary = systems
    config = load_config(binary)
    shortlist = TARGETS[:20] + [f"word{k}" for k in range(40)]  # 20 of 60 known: 33%
    [table] = [spec.params["path"] for spec in config.features if spec.type == "phrase-table"]
    assert table_coverage_warnings("RNN0", shortlist, Path("/m/rnn"), config) == [
        f"pysmt: warning: feature RNN0: only 33% of the 60 most frequent target words of /m/rnn are in the target "
        f"vocabulary of {table}; was it trained on this system's languages, direction and tokenization?"
    ]


def test_only_the_most_frequent_words_count(systems):
    _, binary = systems
    shortlist = TARGETS * 9 + [f"word{k}" for k in range(1000)]  # the first 500 are all known
    assert table_coverage_warnings("CSLM0", shortlist, Path("cslm"), load_config(binary)) == []


def test_text_tables_and_small_shortlists_say_nothing(systems):
    text, binary = systems
    others = [f"word{k}" for k in range(60)]
    assert table_coverage_warnings("RNN0", others, Path("rnn"), load_config(text)) == []  # known only once loaded
    assert table_coverage_warnings("RNN0", others[:49], Path("rnn"), load_config(binary)) == []
