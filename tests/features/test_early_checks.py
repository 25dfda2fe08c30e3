"""A model of the wrong kind is one line naming the feature and the file, found before any table loads.

Every case gives a system whose tables would fail to load (a ``nan`` on their second line): the error
the test expects comes from the features' checks (:func:`pysmt.features.registry.check_features`, a
table's first line or a model's first bytes), so nothing was loaded when it came.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pysmt.config_files import load_config
from pysmt.decoder import Decoder
from pysmt.errors import PysmtError
from pysmt.testing import TOY_PHRASES, TOY_REORDERING, one_line_error, run_pysmt, write_toy_system

#: Second lines that make each table fail to load, should anything load it.
DAMAGED_PHRASES = TOY_PHRASES.replace("a ||| y ||| 0.25 0.25", "a ||| y ||| nan 0.25")
DAMAGED_REORDERING = TOY_REORDERING.replace("b ||| y ||| 0.4 0.4", "b ||| y ||| nan 0.4")


def damaged_system(folder: Path, old: str, new: str) -> Path:
    """The toy system with tables that fail to load and its moses.ini's ``old`` replaced by ``new``."""
    ini = write_toy_system(folder, phrases=DAMAGED_PHRASES, reordering=DAMAGED_REORDERING)
    ini.write_text(ini.read_text().replace(old, new))
    return ini


def error_of(ini: Path) -> str:
    with pytest.raises(PysmtError) as failure:
        Decoder(load_config(ini))
    return str(failure.value)


def test_a_reordering_table_given_as_the_phrase_table(tmp_path):
    ini = damaged_system(tmp_path, "path=phrases.txt num-features=2", "path=reordering.txt num-features=2")
    assert error_of(ini) == (
        f"{ini}: feature PhraseDictionaryMemory0: num-features=2 but {tmp_path / 'reordering.txt'} has 6 scores"
    )


def test_a_phrase_table_given_as_the_reordering_table(tmp_path):
    ini = damaged_system(tmp_path, "num-features=6 path=reordering.txt", "num-features=6 path=phrases.txt")
    assert error_of(ini) == (
        f"{ini}: feature LexicalReordering0: {tmp_path / 'phrases.txt'}: its first line has 2 scores in field 3, "
        "but the feature's model needs 6 per phrase pair: not this model's reordering table"
    )


def test_a_language_model_given_as_the_phrase_table(tmp_path):
    ini = damaged_system(tmp_path, "path=phrases.txt", "path=lm.arpa")
    assert error_of(ini) == (
        f"{ini}: feature PhraseDictionaryMemory0: {tmp_path / 'lm.arpa'}, line 1: expected at least 3 "
        "'|||'-separated fields, found 1"
    )


def test_the_command_line_says_it_in_one_line(tmp_path):
    ini = damaged_system(tmp_path, "num-features=6 path=reordering.txt", "num-features=6 path=phrases.txt")
    proc = run_pysmt("decode", "-c", ini, input="a b\n")
    one_line_error(proc, f"Error: {ini}: feature LexicalReordering0: {tmp_path / 'phrases.txt'}: its first line")


def test_tables_of_the_right_kind_still_load_and_their_damage_is_found(tmp_path):
    """The early checks read the first line only: the damage on the second is the loader's to find, by line."""
    ini = write_toy_system(tmp_path, phrases=DAMAGED_PHRASES)
    assert error_of(ini) == f"{tmp_path / 'phrases.txt'}, line 2: score 1 is nan: scores must be finite numbers"
