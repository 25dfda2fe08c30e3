"""System configs as data (pysmt/config.py): weights must be finite numbers, and values are checked
against the schema, each error naming the file, section and key."""

from __future__ import annotations

import pytest

from pysmt.config_files import load_config, write_toml
from pysmt.testing import one_line_error, run_pysmt
from tests.helpers import slow_cases


@pytest.mark.parametrize("weight", ["nan", *slow_cases("inf", "-inf")])
def test_non_finite_weights_are_refused(tiny_system, source, tmp_path, weight):
    weights = tmp_path / "w.txt"
    weights.write_text(f"WordPenalty0= {weight}\n")
    one_line_error(
        run_pysmt("decode", "-c", tiny_system, "-i", source, "--weights", weights),
        "w.txt, line 1: WordPenalty0: weight 1 must be a finite number",
    )
    tiny_system.write_text(tiny_system.read_text().replace("WordPenalty0= -1", f"WordPenalty0= {weight}"))
    one_line_error(run_pysmt("decode", "-c", tiny_system, "-i", source), "moses.ini, line", "finite number")


@pytest.mark.parametrize(
    "edit, words",
    [
        (lambda t: t.replace("stack-size = 200", 'stack-size = "big"'), ["[search] stack-size must be an integer"]),
        (
            lambda t: t.replace("table-limit = 20", "table-limt = 20"),
            ["feature PhraseDictionaryMemory0: unknown parameter 'table-limt'", "did you mean 'table-limit'"],
        ),
        (lambda t: t.replace("table-limit = 20", "table-limit = 2.5"), ["table-limit must be an integer, not 2.5"]),
        (lambda t: t.replace("table-limit = 20", "table-limit = -3"), ["table-limit must be 0 (keep all) or more"]),
        (lambda t: t.replace("-1.0,", "-1.0, nan,"), ["weight 2 must be a finite number"]),
        (lambda t: t.replace("beam-threshold = 1e-05", "beam-threshold = inf"), ["beam-threshold must be a finite"]),
    ],
)
def test_config_schema_errors_name_file_section_and_key(tiny_system, source, tmp_path, edit, words):
    toml = tmp_path / "pysmt.toml"
    write_toml(load_config(tiny_system), toml)
    toml.write_text(edit(toml.read_text()))
    one_line_error(run_pysmt("decode", "-c", toml, "-i", source), "pysmt.toml", *words)


def test_moses_ini_misspelled_parameter_names_the_file(tiny_system, source):
    tiny_system.write_text(tiny_system.read_text().replace("table-limit=20", "table-limt=20"))
    one_line_error(run_pysmt("decode", "-c", tiny_system, "-i", source), "moses.ini", "unknown parameter 'table-limt'")
