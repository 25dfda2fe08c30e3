"""`--xml-input` on the commands (Moses' -xml-input): decode's output and n-best list with markup, a malformed
tag as one error line naming its input line, markup read before a system's tokenizer, --threads, and tune
decoding a dev source with markup (serve's and the cluster's are with their tests: test_server.py, test_cluster.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from pysmt.testing import one_line_error, run_pysmt
from tests.helpers import raw_text_system, tune_command, write_moses_system

#: How the warning of a malformed tag ends.
AS_TEXT = "the line translated as text"
LINES = 'a b c\na <n translation="chat||dog" prob="0.5||0.1">b</n> c\n<np translation="w v">a b</np> <wall/> c\n'


def decode(system: Path, text: str, *options: str | Path) -> str:
    proc = run_pysmt("decode", "-c", system, "-q", *options, input=text)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_each_mode_on_the_toy_system(tiny_system, tmp_path):
    assert decode(tiny_system, LINES, "--xml-input", "exclusive") == "x y z\nx chat z\nw v z\n"
    assert decode(tiny_system, LINES, "--xml-input", "ignore") == "x y z\nx y z\nx y z\n"
    assert decode(tiny_system, LINES, "--xml-input", "exclusive", "--threads", "2") == "x y z\nx chat z\nw v z\n"
    default = decode(tiny_system, LINES)  # pass-through, as Moses: the tags are words
    assert default.splitlines()[1] == 'x <n translation="chat||dog" prob="0.5||0.1">b</n> z'


def test_the_nbest_list_shows_the_markup_options_scores(tiny_system, tmp_path):
    nbest = tmp_path / "nbest.txt"
    decode(tiny_system, LINES, "--xml-input", "inclusive", "--nbest", nbest, "--nbest-size", "50")
    entries = [line.split(" ||| ") for line in nbest.read_text().splitlines()]
    chat = [features.split() for index, text, features, _ in entries if (index, text) == ("1", "x chat z")]
    assert chat, "the markup option is in the list"
    at = chat[0].index("PhraseDictionaryMemory0=")
    table = [float(value) for value in chat[0][at + 1 : at + 3]]
    expected = math.log(0.5) + math.log(0.9) + math.log(0.5) / 2  # a -> x, c -> z, and the markup's prob 0.5
    assert all(abs(value - expected) < 1e-3 for value in table) and len(table) == 2


def test_with_xml_strict_a_malformed_tag_is_one_line_naming_its_input_line(tiny_system):
    text = 'a b c\na <n translation="w" prob="high">b</n> c\n'
    proc = run_pysmt("decode", "-c", tiny_system, "-q", "--xml-input", "exclusive", "--xml-strict", input=text)
    one_line_error(proc, "input line 2", "malformed markup", "prob 'high' is not a number")
    assert proc.stdout == "x y z\n"  # what came before is written
    proc = run_pysmt("decode", "-c", tiny_system, "-q", "--xml-input", "constraint", "--xml-strict", input="a <n>b c\n")
    one_line_error(proc, "input line 1", "<n> is never closed")


def test_a_malformed_tag_is_a_warning_and_its_line_is_translated_as_text(tiny_system):
    """As Moses does (Sentence.cpp: "Unable to parse XML in line"), the batch goes on: the line is read as it is,
    its tags as words (as pass-through reads them), with a warning naming the line, in input order."""
    text = 'a b c\na <n translation="w" prob="high">b</n> c\n<n translation="w">b</n> a\na <n>b c\n'
    for threads in ("1", "2"):
        proc = run_pysmt(
            "decode", "-c", tiny_system, "-q", "--xml-input", "exclusive", "--threads", threads, input=text
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == 'x y z\nx <n translation="w" prob="high">b</n> z\nw x\nx <n>b z\n'
        assert proc.stderr.splitlines() == [
            f"pysmt: warning: input line 2: malformed markup: <n>: prob 'high' is not a number; {AS_TEXT}",
            f"pysmt: warning: input line 4: malformed markup: <n> is never closed; {AS_TEXT}",
        ]


def test_a_span_no_reader_of_numbers_takes_or_beyond_the_line_is_malformed_markup(tiny_system):
    """span="²" (a digit int() refuses) and a zone beyond a three-word line were a ValueError and an IndexError
    traceback: now the line's warning (its exact words are markup.py's), or with --xml-strict its one error line."""
    text = 'a <n translation="x" span="²">b</n> c\n<zone span="0-50"/>a b c\na b c\n'
    proc = run_pysmt("decode", "-c", tiny_system, "-q", "--xml-input", "exclusive", input=text)
    assert (proc.returncode, proc.stdout.splitlines()[2]) == (0, "x y z"), proc.stderr
    assert proc.stderr.splitlines() == [
        f"""pysmt: warning: input line 1: malformed markup: <n>: span must be "i-j" or "i" (word positions from 0), """
        f"""not '²'; {AS_TEXT}""",
        f"pysmt: warning: input line 2: malformed markup: a span (0-50) ends after the line's 3 words; {AS_TEXT}",
    ]
    proc = run_pysmt("decode", "-c", tiny_system, "-q", "--xml-input", "exclusive", "--xml-strict", input=text)
    one_line_error(proc, """input line 1: malformed markup: <n>: span must be "i-j" or "i" """)


def test_a_malformed_tag_on_a_system_that_prepares_its_text_is_translated_as_text(tmp_path):
    system = raw_text_system(tmp_path / "raw")
    proc = run_pysmt("decode", "-c", system, "-q", "--xml-input", "exclusive", input="a, <n>b.\nb <wall/> a.\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1] == "y x."
    assert proc.stderr == f"pysmt: warning: input line 1: malformed markup: <n> is never closed; {AS_TEXT}\n"


def test_moses_ini_xml_input_is_read_and_the_command_line_wins(tmp_path):
    """moses.ini's [xml-input] (once a message and pass-through) sets the mode; --xml-input overrides it."""
    system = write_moses_system(tmp_path / "system", extra="\n[xml-input]\nexclusive\n")
    proc = run_pysmt("decode", "-c", system, "-q", input=LINES)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "x y z\nx chat z\nw v z\n", "")
    assert decode(system, LINES, "--xml-input", "ignore") == "x y z\nx y z\nx y z\n"
    bad = write_moses_system(tmp_path / "bad", extra="\n[xml-input]\nexclusiv\n")
    one_line_error(
        run_pysmt("decode", "-c", bad, "-q", input=LINES),
        f"{bad}, line 17: [xml-input] must be one of pass-through, ignore, exclusive, inclusive, constraint, "
        "not 'exclusiv'",
    )


def test_markup_is_read_before_the_systems_tokenizer(tmp_path):
    system = raw_text_system(tmp_path / "raw")
    text = 'a, <n translation="chat">b</n>.\nb <wall/> a.\n'
    assert decode(system, text, "--xml-input", "exclusive") == "x, chat.\ny x.\n"
    tokens = decode(system, text, "--xml-input", "exclusive", "--report-segmentation")
    assert tokens.splitlines()[0] == "x , |0-1| chat |2-2| . |3-3|"  # the tag's words counted, not its text


@pytest.mark.slow  # a whole tune, train or several decodes: seconds (the fast tier stays under 2 minutes)
def test_tune_decodes_a_dev_source_with_markup(tiny_system, tmp_path):
    src, ref = tmp_path / "dev.src", tmp_path / "dev.ref"
    src.write_text('a <n translation="y">b</n> c\nc b a\n<zone>b c</zone>\n')
    ref.write_text("x y z\nz y x\ny z\n")
    out = tmp_path / "tune"
    proc = run_pysmt(*tune_command(tiny_system, src, ref, out, "--xml-input", "exclusive", "--quiet"))
    assert proc.returncode == 0, proc.stderr
    assert (out / "run1" / "output.txt").read_text().splitlines()[0] == "x y z"
    assert json.loads((out / "job.json").read_text())["options"]["xml_input"] == "exclusive"
    bad = tmp_path / "bad.src"
    bad.write_text("a b c\nc <n translation=x>b</n>\nb c\n")
    proc = run_pysmt(*tune_command(tiny_system, bad, ref, tmp_path / "bad", "--xml-input", "exclusive"))
    one_line_error(proc, "input line 2", "malformed attributes")


@pytest.mark.slow  # a whole tune, train or several decodes: seconds (the fast tier stays under 2 minutes)
def test_tune_reads_a_moses_ini_xml_input(tmp_path):
    """tune decodes the dev source as moses.ini's [xml-input] says when not given --xml-input."""
    system = write_moses_system(tmp_path / "system", extra="\n[xml-input]\nexclusive\n")
    src, ref = tmp_path / "dev.src", tmp_path / "dev.ref"
    src.write_text('a <n translation="y">b</n> c\nc b a\nb c\n')
    ref.write_text("x y z\nz y x\ny z\n")
    proc = run_pysmt(*tune_command(system, src, ref, tmp_path / "tune", "--quiet"))
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "tune" / "run1" / "output.txt").read_text().splitlines()[0] == "x y z"
