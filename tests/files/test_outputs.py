"""Where a command may write (pysmt/files/outputs.py): no output may be an input or another output, outputs
are checked before any work, and a decode's streamed n-best list survives full disks, failures,
symbolic links and FIFOs.

User mistakes never destroy data and end in one line, not a traceback: each case asserts the exit
status, that the message is a single line naming the problem, and that the inputs survive.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from pysmt.files.textio import TEMP_MARK
from pysmt.testing import one_line_error, run_pysmt, start_pysmt
from tests.helpers import limited_file_size, long_input, raw_text_system, slow_cases, tune_command

# -- no output may be an input; nothing is truncated before the run has started -----------------


@pytest.mark.parametrize("option", ["--nbest", "--alignment"])
def test_output_equal_to_the_input_is_refused_and_the_input_survives(tiny_system, source, option):
    before = source.read_bytes()
    one_line_error(
        run_pysmt("decode", "-c", tiny_system, "-i", source, option, source), option, "is also the input --input"
    )
    assert source.read_bytes() == before


def test_output_equal_to_a_model_file_is_refused(tiny_system, source):
    table = tiny_system.parent / "phrases.txt"
    before = table.read_bytes()
    one_line_error(
        run_pysmt("decode", "-c", tiny_system, "-i", source, "--nbest", table),
        "--nbest",
        "PhraseDictionaryMemory0 path",
    )
    assert table.read_bytes() == before


def test_two_outputs_on_one_file_are_refused(tiny_system, source, tmp_path):
    out = tmp_path / "out.txt"
    one_line_error(
        run_pysmt("decode", "-c", tiny_system, "-i", source, "--nbest", out, "--alignment", out),
        "--nbest and --alignment are the same file",
    )


def test_an_earlier_output_survives_a_run_that_fails_to_start(tiny_system, source, tmp_path):
    nbest = tmp_path / "nbest.txt"
    nbest.write_text("precious\n")
    one_line_error(
        run_pysmt("decode", "-c", tiny_system, "-i", source, "--nbest", nbest, "--features", "nope"),
        "unknown feature 'nope'",
    )
    assert nbest.read_text() == "precious\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left


@pytest.mark.parametrize("folder", ["/no/such/folder", "/proc"])
def test_outputs_in_a_missing_or_unwritable_folder_fail_before_loading(tiny_system, source, folder):
    proc = run_pysmt("decode", "-c", tiny_system, "-i", source, "--nbest", f"{folder}/nbest.txt")
    one_line_error(proc, "--nbest", f"in {folder}")


def test_tune_out_in_the_system_folder_is_refused(tmp_path, dev):
    toml = raw_text_system(tmp_path / "system")
    before = toml.read_bytes()
    one_line_error(run_pysmt(*tune_command(toml, *dev, toml.parent)), "is also the input --config")
    assert toml.read_bytes() == before


# -- streamed outputs: full disks, failures, links and devices -------------------------------------


def test_a_full_disk_keeps_the_earlier_nbest_and_names_the_file(tiny_system, tmp_path):
    nbest = tmp_path / "nbest.txt"
    nbest.write_text("an earlier, complete n-best list\n")
    source = long_input(tmp_path / "in.txt", lines=300)
    proc = run_pysmt("decode", "-c", tiny_system, "-i", source, "--nbest", nbest, preexec_fn=limited_file_size(20_000))
    one_line_error(proc, f"writing {nbest}", "File too large", "incomplete file was removed")
    assert nbest.read_text() == "an earlier, complete n-best list\n"
    assert not list(tmp_path.glob(f".*{TEMP_MARK}*"))


def test_a_run_that_fails_keeps_an_earlier_complete_nbest(tiny_system, tmp_path):
    nbest = tmp_path / "nbest.txt"
    source = tmp_path / "in.txt"
    source.write_bytes(b"a b c\n" * 9 + b"\xff\n")  # line 10 is not UTF-8
    proc = run_pysmt("decode", "-c", tiny_system, "-i", source, "--nbest", nbest)
    one_line_error(proc, "line 10")
    partial = nbest.read_text()  # no earlier file: the 9 lines translated are kept
    assert {line.split(" ||| ")[0] for line in partial.splitlines()} == {str(i) for i in range(9)}
    nbest.write_text("complete\n")
    one_line_error(run_pysmt("decode", "-c", tiny_system, "-i", source, "--nbest", nbest), "line 10")
    assert nbest.read_text() == "complete\n"


def test_a_symlinked_nbest_writes_its_target_and_keeps_the_link(tiny_system, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("a b c\n")
    target, link = tmp_path / "lists" / "target.txt", tmp_path / "link.txt"
    target.parent.mkdir()
    target.write_text("old\n")
    link.symlink_to(target)
    assert run_pysmt("decode", "-c", tiny_system, "-i", source, "--nbest", link).returncode == 0
    assert link.is_symlink() and target.read_text().startswith("0 ||| ")


def test_a_fifo_nbest_is_written_as_a_stream_not_replaced(tiny_system, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("a b c\nc b a\n")
    fifo = tmp_path / "nbest.fifo"
    os.mkfifo(fifo)
    proc = start_pysmt(
        "decode", "-c", tiny_system, "-i", source, "--nbest", fifo, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    with open(fifo, encoding="utf-8") as reader:
        lines = reader.read().splitlines()
    assert proc.wait(timeout=60) == 0, proc.stderr.read().decode()
    assert {line.split(" ||| ")[0] for line in lines} == {"0", "1"}
    assert fifo.is_fifo()


# -- every channel: stdin's and stdout's files are an input and an output like any other -------------


@pytest.mark.parametrize("option", ["--nbest", "--alignment"])
def test_an_output_that_is_the_file_on_stdin_is_refused_and_survives(tiny_system, tmp_path, option):
    x = tmp_path / "x"
    x.write_text("a b c\nc b a\n")
    with open(x, "rb") as stdin:
        proc = run_pysmt("decode", "-c", tiny_system, option, x, stdin=stdin, timeout=120)
    one_line_error(proc, f"{option} {x} is also the input stdin")
    assert x.read_text() == "a b c\nc b a\n"


def test_a_stdout_appending_to_the_input_is_refused_and_the_input_survives(tiny_system, tmp_path):
    x = tmp_path / "x"
    x.write_text("a b c\n")
    with open(x, "ab") as stdout:
        proc = run_pysmt("decode", "-c", tiny_system, "-i", x, stdout=stdout, timeout=120)
    one_line_error(proc, f"stdout {x} is also the input --input")
    assert x.read_text() == "a b c\n"


def test_a_stdout_appending_to_a_model_file_is_refused(tiny_system, source):
    table = tiny_system.parent / "phrases.txt"
    before = table.read_bytes()
    with open(table, "ab") as stdout:
        proc = run_pysmt("decode", "-c", tiny_system, "-i", source, stdout=stdout, timeout=120)
    one_line_error(proc, "stdout", "PhraseDictionaryMemory0 path")
    assert table.read_bytes() == before


@pytest.mark.parametrize("model", ["phrases.txt", "moses.ini"])
def test_a_stderr_appending_to_a_model_file_is_refused_and_nothing_reaches_it(tiny_system, source, model):
    """`2>> phrase-table.gz` appended KenLM's loading lines and pysmt's own error to the table: stderr is an
    output, so it is checked against every input; the error cannot be told there, so stderr is silenced."""
    table = tiny_system.parent / model
    before = table.read_bytes()
    with open(table, "ab") as stderr:
        proc = run_pysmt("decode", "-c", tiny_system, "-i", source, stderr=stderr, timeout=120)
    assert proc.returncode == 1 and proc.stdout == ""
    assert table.read_bytes() == before


def test_serve_with_its_log_on_a_model_file_is_refused(tiny_system):
    table = tiny_system.parent / "phrases.txt"
    before = table.read_bytes()
    with open(table, "ab") as stderr:
        proc = run_pysmt("serve", "-c", tiny_system, "--port", "0", stderr=stderr, timeout=60)
    assert proc.returncode == 1 and table.read_bytes() == before


def test_evaluate_with_stderr_on_its_reference_is_refused(tmp_path):
    ref = tmp_path / "ref.txt"
    ref.write_text("a b\n")
    with open(ref, "ab") as stderr:
        proc = run_pysmt("evaluate", "-r", ref, ref, stderr=stderr, timeout=120)
    assert proc.returncode == 1 and proc.stdout == "" and ref.read_text() == "a b\n"


def test_a_stderr_to_another_file_is_allowed(tiny_system, source, tmp_path):
    log = tmp_path / "log.txt"
    with open(log, "ab") as stderr:
        proc = run_pysmt("decode", "-c", tiny_system, "-i", source, stderr=stderr, timeout=120)
    assert proc.returncode == 0 and proc.stdout.count("\n") == 2


def interleaved(lines: list[str], sentences: int, nbest: bool, alignment: bool) -> None:
    """Each sentence's translation, then its n-best entries (all of that sentence), then its alignment line."""
    k = 0
    for index in range(sentences):
        best = lines[k]
        assert " ||| " not in best and "-" not in best, lines
        k += 1
        if nbest:
            entries = []
            while k < len(lines) and lines[k].startswith(f"{index} ||| "):
                entries.append(lines[k])
                k += 1
            assert entries and entries[0].split(" ||| ")[1] == best, lines
        if alignment:
            assert lines[k] and all(len(point.split("-")) == 2 for point in lines[k].split()), lines
            k += 1
    assert k == len(lines), lines


@pytest.mark.parametrize("named", [["--nbest", "--alignment"], *slow_cases(["--nbest"], ["--alignment"])])
@pytest.mark.parametrize("channel", ["file", "pipe"])
def test_outputs_named_as_stdout_are_written_through_it_in_order(tiny_system, source, tmp_path, named, channel):
    """`--nbest /dev/stdout > out.txt` lost every translation (the n-best file replaced out.txt), and through a
    pipe it failed looking for a temporary file beside /proc/PID/fd/pipe:[N]."""
    args = ["decode", "-c", tiny_system, "-i", source]
    for option in named:
        args += [option, "/dev/stdout"]
    if channel == "file":
        out = tmp_path / "out.txt"
        with open(out, "wb") as stdout:
            proc = run_pysmt(*args, stdout=stdout, timeout=120)
        text = out.read_text()
    else:
        proc = run_pysmt(*args, timeout=120)
        text = proc.stdout
    assert proc.returncode == 0, proc.stderr
    assert not list(tmp_path.glob(f".*{TEMP_MARK}*"))
    interleaved(text.splitlines(), 2, "--nbest" in named, "--alignment" in named)


def test_an_nbest_named_as_the_file_behind_stdout_is_written_through_it(tiny_system, source, tmp_path):
    out = tmp_path / "out.txt"
    with open(out, "wb") as stdout:
        proc = run_pysmt("decode", "-c", tiny_system, "-i", source, "--nbest", out, stdout=stdout, timeout=120)
    assert proc.returncode == 0, proc.stderr
    interleaved(out.read_text().splitlines(), 2, nbest=True, alignment=False)


def test_rescore_out_on_stdout_holds_the_list_and_nothing_else(tiny_system, source, tmp_path):
    nbest = tmp_path / "in.nbest"
    assert run_pysmt("decode", "-c", tiny_system, "-i", source, "--nbest", nbest).returncode == 0
    with open(tmp_path / "out.nbest", "wb") as stdout:
        proc = run_pysmt(
            "rescore",
            "-c",
            tiny_system,
            "--features",
            "repeated-word",
            "--nbest",
            nbest,
            "--out",
            "/dev/stdout",
            stdout=stdout,
            timeout=120,
        )
    assert proc.returncode == 0, proc.stderr
    lines = (tmp_path / "out.nbest").read_text().splitlines()
    assert len(lines) == len(nbest.read_text().splitlines()) and all(" ||| " in line for line in lines)


def test_an_output_inside_a_binary_table_folder_is_refused(tiny_system, source, tmp_path):
    assert run_pysmt("binarize", "-c", tiny_system, "-o", tmp_path / "bin").returncode == 0
    table = next((tmp_path / "bin").glob("*.phrase-table.*.bin"))
    scores = table / "scores.npy"
    before = scores.read_bytes()
    one_line_error(
        run_pysmt("decode", "-c", tmp_path / "bin" / "pysmt.toml", "-i", source, "--nbest", scores),
        f"--nbest {scores} is inside the input PhraseDictionaryMemory0 path",
    )
    assert scores.read_bytes() == before
