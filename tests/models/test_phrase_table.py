"""Moses phrase tables (pysmt/models/phrase_table.py): scores logged and floored, entries in file order,
errors naming the file and line."""

import gzip
import math

import numpy as np
import pytest

from pysmt.errors import PysmtError
from pysmt.models.phrase_table import PhraseTable
from pysmt.testing import TOY_PHRASES, TOY_REORDERING, one_line_error, run_pysmt, write_toy_system
from tests.helpers import slow_cases


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_probabilities_are_logged_and_floored(tmp_path):
    table = PhraseTable(write(tmp_path / "pt", "a b ||| x ||| 0.5 0 1 2.718 ||| 0-0 1-0 ||| 3 4 2\n"))
    (entry,) = table.lookup("a b")
    assert entry.target == ("x",)
    assert entry.scores == pytest.approx([math.log(0.5), -100.0, 0.0, math.log(2.718)], abs=1e-6)
    assert entry.alignment == "0-0 1-0"
    assert table.num_scores == 4 and table.max_source_length == 2


def test_entries_of_a_source_are_grouped_in_file_order(tmp_path):
    text = "a ||| x ||| 0.1\nb ||| y ||| 0.2\na ||| z w ||| 0.3\n"
    table = PhraseTable(write(tmp_path / "pt", text))
    assert [e.target for e in table.lookup("a")] == [("x",), ("z", "w")]
    assert [e.target for e in table.lookup("b")] == [("y",)]
    assert table.lookup("c") == [] and len(table) == 3


def test_gzip_and_crlf_and_log_scores(tmp_path):
    path = tmp_path / "pt.gz"
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.write("le  chat ||| the cat ||| -1.5\r\n")
    table = PhraseTable(path, log_scores=True)
    (entry,) = table.lookup("le chat")
    assert entry.target == ("the", "cat") and entry.scores == pytest.approx([-1.5])


@pytest.mark.parametrize(
    "text, message",
    [
        ("a ||| x ||| 0.5\nb ||| y\n", "line 2: expected at least 3"),
        ("a ||| x ||| 0.5\nb ||| y ||| 0.5 0.5\n", "line 2: 2 scores where earlier lines have 1"),
        ("a ||| x ||| half\n", "line 1: scores must be numbers"),
        ("a |||  ||| 0.5\n", "line 1: empty source or target"),
        ("a ||| x ||| -0.5\n", "line 1: negative probability"),
    ],
)
def test_malformed_lines_name_file_and_line(tmp_path, text, message):
    path = write(tmp_path / "pt", text)
    with pytest.raises(PysmtError, match=message) as err:
        PhraseTable(path)
    assert str(path) in str(err.value)


def test_invalid_utf8_and_missing_file(tmp_path):
    path = tmp_path / "pt"
    path.write_bytes(b"a ||| x ||| 0.5\n\xff ||| y ||| 0.5\n")
    with pytest.raises(PysmtError, match="line 2: invalid UTF-8"):
        PhraseTable(path)
    with pytest.raises(PysmtError, match="no such file"):
        PhraseTable(tmp_path / "missing")


def test_hansards_table_loads_with_log_scores(shared_data):
    table = PhraseTable(shared_data("fixtures", "jhu-hansards", "tm"), log_scores=True)
    assert len(table) == 12832 and table.num_scores == 1
    assert np.all(table.scores <= 0)


def test_moses_fixture_table_loads_compactly(shared_data):
    table = PhraseTable(shared_data("fixtures", "moses", "lexicalized-reordering", "phrase-table.0-0.gz"))
    assert len(table) == 41915 and table.num_scores == 5
    assert table.target_ids.dtype == np.int32 and table.scores.dtype == np.float32


# -- checked when loaded --------------------------------------------------------------------------


@pytest.fixture
def source(tmp_path):
    """One line (conftest's source has two): these cases were written with one."""
    path = tmp_path / "in.txt"
    path.write_text("a b c\n")
    return path


@pytest.mark.parametrize("value", ["nan", *slow_cases("inf", "-inf")])
@pytest.mark.parametrize("table", ["phrases", "reordering"])
def test_a_text_table_with_a_non_finite_score_names_file_and_line(tmp_path, source, value, table):
    phrases, reordering = TOY_PHRASES, TOY_REORDERING
    if table == "phrases":
        phrases = phrases.replace("b ||| y ||| 0.5 0.4", f"b ||| y ||| 0.5 {value}")
    else:
        reordering = reordering.replace("0.4 0.4 0.2 0.5", f"0.4 {value} 0.2 0.5")
    ini = write_toy_system(tmp_path / "system", phrases=phrases, reordering=reordering)
    name = "phrases.txt" if table == "phrases" else "reordering.txt"
    position = 2 if table == "phrases" else 2
    one_line_error(
        run_pysmt("decode", "-c", ini, "-i", source), f"{name}, line", f"score {position} is {value}", "finite"
    )


def test_a_damaged_alignment_names_the_file_and_line(tmp_path):
    """A bad alignment field loaded silently and was a ValueError traceback when the decoder described the pair."""
    table = tmp_path / "pt.txt"
    table.write_text("a ||| x ||| 0.5 ||| 0-0\nb ||| y ||| 0.5 ||| 0-0\nc ||| z ||| 0.5 ||| 0-\x01\n")
    with pytest.raises(PysmtError, match=r"pt.txt, line 3: alignment '0-\\x01' is not a list of word pairs"):
        PhraseTable(table)
    table.write_text("a ||| x ||| 0.5 ||| 0-0 \nb ||| y ||| 0.5\nc ||| z y ||| 0.5 ||| 0-0 0-1 ||| 1 1 1\n")
    assert len(PhraseTable(table)) == 3
