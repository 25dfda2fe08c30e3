"""The decode and filter commands end to end, including bad input."""

import subprocess
import sys

import pytest

from pysmt.config_files import load_config
from tests.helpers import write_moses_system


def run(args, stdin=b"", check=True):
    proc = subprocess.run([sys.executable, "-m", "pysmt.cli", *args], input=stdin, capture_output=True)
    if check:
        assert proc.returncode == 0, proc.stderr.decode()
    return proc


def test_one_output_line_per_input_line(tiny_system):
    lines = ["a b c", "", "   ", "a | < & b", " ".join(["a", "b", "c", "q"] * 50), "c b a"]
    out = run(["decode", "-c", str(tiny_system)], ("\n".join(lines) + "\n").encode()).stdout.decode()
    outputs = out.split("\n")[:-1]
    assert len(outputs) == len(lines)
    assert outputs[1] == outputs[2] == ""
    assert outputs[3].split()[1:4] == ["|", "<", "&"]  # unknown words pass through unharmed
    assert len(outputs[4].split()) == 200


def test_threads_keep_input_order(tiny_system, tmp_path):
    lines = [" ".join("abcq"[(i * k) % 4] for k in range(1, 2 + i % 6)) for i in range(30)]
    source = tmp_path / "in.txt"
    source.write_text("\n".join(lines) + "\n")
    one = run(["decode", "-c", str(tiny_system), "-i", str(source)]).stdout
    two = run(["decode", "-c", str(tiny_system), "-i", str(source), "--threads", "2"]).stdout
    assert one == two and len(one.decode().splitlines()) == 30


def test_nbest_and_alignment_files(tiny_system, tmp_path):
    nbest, alignment = tmp_path / "nbest.txt", tmp_path / "align.txt"
    out = run(["decode", "-c", str(tiny_system), "--nbest", str(nbest), "--nbest-size", "5",
               "--alignment", str(alignment)], b"a b c\nc b a\n").stdout.decode().splitlines()
    entries = [line.split(" ||| ") for line in nbest.read_text().splitlines()]
    assert [e[0] for e in entries] == ["0"] * 5 + ["1"] * 5
    assert entries[0][1] == out[0] and entries[5][1] == out[1]
    assert entries[0][2].startswith("KENLM0= ") and "LexicalReordering0= " in entries[0][2]
    totals = [float(e[3]) for e in entries[:5]]
    assert totals == sorted(totals, reverse=True)
    links = alignment.read_text().splitlines()
    assert len(links) == 2 and all("-" in pair for pair in links[0].split())


def test_invalid_utf8_names_the_line_after_writing_earlier_output(tiny_system):
    proc = run(["decode", "-c", str(tiny_system)], b"a b\n\xff\xfe\nc\n", check=False)
    assert proc.returncode == 1
    assert proc.stdout.decode().splitlines() == ["x y"]
    assert b"<stdin>, line 2: invalid UTF-8" in proc.stderr and b"Traceback" not in proc.stderr


@pytest.mark.parametrize("args, message, status", [
    (["--features", "nonexistent"], b"unknown feature 'nonexistent'; available:", 1),
    (["--weights", "/no/such/weights"], b"'/no/such/weights' does not exist", 2),
])
def test_user_errors_are_one_line(tiny_system, args, message, status):
    proc = run(["decode", "-c", str(tiny_system), *args], b"a\n", check=False)
    assert proc.returncode == status and message in proc.stderr and b"Traceback" not in proc.stderr


def test_missing_model_file_names_the_path(tmp_path):
    ini = write_moses_system(tmp_path)
    (tmp_path / "lm.arpa").unlink()
    proc = run(["decode", "-c", str(ini)], b"a\n", check=False)
    assert proc.returncode == 1 and b"lm.arpa: no such file" in proc.stderr


def test_malformed_table_line_names_file_and_line(tmp_path):
    ini = write_moses_system(tmp_path, phrases="a ||| x ||| 0.5 0.5\nb ||| y\n")
    proc = run(["decode", "-c", str(ini)], b"a\n", check=False)
    assert proc.returncode == 1 and b"phrases.txt, line 2:" in proc.stderr


def test_filter_keeps_only_usable_phrases_and_decodes_the_same(tiny_system, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("a b\n")
    run(["filter", "-c", str(tiny_system), "-i", str(source), "-o", str(tmp_path / "filtered")])
    config = load_config(tmp_path / "filtered" / "pysmt.toml")
    from pysmt.models.phrase_table import PhraseTable
    table = PhraseTable(config.feature("PhraseDictionaryMemory0").params["path"])
    assert sorted(table.sources) == ["a", "a b", "b"]
    full = run(["decode", "-c", str(tiny_system), "-i", str(source)]).stdout
    filtered = run(["decode", "-c", str(tmp_path / "filtered" / "pysmt.toml"), "-i", str(source)]).stdout
    assert full == filtered


def test_help_lists_commands():
    out = run(["--help"]).stdout.decode()
    assert "decode" in out and "filter" in out
    assert "--nbest-size" in run(["decode", "--help"]).stdout.decode()


def test_python_dash_m_pysmt_is_the_command():
    proc = subprocess.run([sys.executable, "-m", "pysmt", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.startswith("Usage: pysmt ") and "decode" in proc.stdout
