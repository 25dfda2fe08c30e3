"""The decode and filter commands end to end, including bad input."""

import pytest

from pysmt.config_files import load_config
from pysmt.testing import one_line_error, run_pysmt
from tests.helpers import write_moses_system


def run(*args, input: str = "") -> str:
    """The output of a ``pysmt`` command that must succeed."""
    proc = run_pysmt(*args, input=input)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_one_output_line_per_input_line(tiny_system):
    lines = ["a b c", "", "   ", "a | < & b", " ".join(["a", "b", "c", "q"] * 50), "c b a"]
    out = run("decode", "-c", tiny_system, input="\n".join(lines) + "\n")
    outputs = out.split("\n")[:-1]
    assert len(outputs) == len(lines)
    assert outputs[1] == outputs[2] == ""
    assert outputs[3].split()[1:4] == ["|", "<", "&"]  # unknown words pass through unharmed
    assert len(outputs[4].split()) == 200


def test_threads_keep_input_order(tiny_system, tmp_path):
    lines = [" ".join("abcq"[(i * k) % 4] for k in range(1, 2 + i % 6)) for i in range(30)]
    source = tmp_path / "in.txt"
    source.write_text("\n".join(lines) + "\n")
    one = run("decode", "-c", tiny_system, "-i", source)
    two = run("decode", "-c", tiny_system, "-i", source, "--threads", "2")
    assert one == two and len(one.splitlines()) == 30


def test_nbest_and_alignment_files(tiny_system, tmp_path):
    nbest, alignment = tmp_path / "nbest.txt", tmp_path / "align.txt"
    out = run(
        "decode",
        "-c",
        tiny_system,
        "--nbest",
        nbest,
        "--nbest-size",
        "5",
        "--alignment",
        alignment,
        input="a b c\nc b a\n",
    ).splitlines()
    entries = [line.split(" ||| ") for line in nbest.read_text().splitlines()]
    assert [e[0] for e in entries] == ["0"] * 5 + ["1"] * 5
    assert entries[0][1] == out[0] and entries[5][1] == out[1]
    assert entries[0][2].startswith("KENLM0= ") and "LexicalReordering0= " in entries[0][2]
    totals = [float(e[3]) for e in entries[:5]]
    assert totals == sorted(totals, reverse=True)
    links = alignment.read_text().splitlines()
    assert len(links) == 2 and all("-" in pair for pair in links[0].split())


def test_invalid_utf8_names_the_line_after_writing_earlier_output(tiny_system):
    proc = run_pysmt("decode", "-c", tiny_system, input=b"a b\n\xff\xfe\nc\n", text=False)
    assert one_line_error(proc, "<stdin>, line 2: invalid UTF-8")
    assert proc.stdout.decode().splitlines() == ["x y"]


@pytest.mark.parametrize(
    "args, message, status",
    [
        (["--features", "nonexistent"], "unknown feature 'nonexistent'; available:", 1),
        (["--weights", "/no/such/weights"], "'/no/such/weights' does not exist", 2),
    ],
)
def test_user_errors_are_one_line(tiny_system, args, message, status):
    one_line_error(run_pysmt("decode", "-c", tiny_system, *args, input="a\n"), message, status=status)


def test_missing_model_file_names_the_path(tmp_path):
    ini = write_moses_system(tmp_path)
    (tmp_path / "lm.arpa").unlink()
    one_line_error(run_pysmt("decode", "-c", ini, input="a\n"), "lm.arpa: no such file")


def test_malformed_table_line_names_file_and_line(tmp_path):
    ini = write_moses_system(tmp_path, phrases="a ||| x ||| 0.5 0.5\nb ||| y\n")
    one_line_error(run_pysmt("decode", "-c", ini, input="a\n"), "phrases.txt, line 2:")


@pytest.mark.slow
def test_filter_keeps_only_usable_phrases_and_decodes_the_same(tiny_system, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("a b\n")
    run("filter", "-c", tiny_system, "-i", source, "-o", tmp_path / "filtered")
    config = load_config(tmp_path / "filtered" / "pysmt.toml")
    from pysmt.models.phrase_table import PhraseTable

    table = PhraseTable(config.feature("PhraseDictionaryMemory0").params["path"])
    assert sorted(table.sources) == ["a", "a b", "b"]
    full = run("decode", "-c", tiny_system, "-i", source)
    filtered = run("decode", "-c", tmp_path / "filtered" / "pysmt.toml", "-i", source)
    assert full == filtered


def test_help_lists_commands():
    out = run("--help")
    assert "decode" in out and "filter" in out
    assert "--nbest-size" in run("decode", "--help")


def test_python_dash_m_pysmt_is_the_command():
    assert run("--help").startswith("Usage: pysmt ")  # (run_pysmt runs python -m pysmt)
