"""Reading and atomic writing (pysmt/files/textio.py): written files get the umask's permissions, a failed write
leaves the old file, a full disk is one line, and reading with progress gives the same lines."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import stat
import subprocess
import sys
import textwrap

import pytest

from pysmt.errors import PysmtError
from pysmt.files.textio import atomic_path, atomic_writer, read_lines
from pysmt.testing import one_line_error, run_pysmt
from tests.helpers import limited_file_size, write_moses_system


def test_every_written_file_gets_umask_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        with atomic_writer(tmp_path / "a.txt") as out:
            out.write("x\n")
        with atomic_path(tmp_path / "b.bin") as path:
            path.write_bytes(b"x")
        from pysmt.training.preparation import train_truecaser

        train_truecaser(["The cat", "the dog"], tmp_path / "truecase.en")
    finally:
        os.umask(old)
    for name in ("a.txt", "b.bin", "truecase.en"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644, name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.bin", "truecase.en"]


def test_a_failed_atomic_write_leaves_the_old_file(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("old\n")
    with pytest.raises(RuntimeError):
        with atomic_writer(path) as out:
            out.write("new\n")
            raise RuntimeError
    assert path.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["a.txt"]


@pytest.mark.slow  # torch in a fresh process
def test_a_full_disk_while_saving_a_torch_checkpoint_is_one_line(tmp_path):
    pytest.importorskip("torch")
    code = textwrap.dedent(f"""
        import torch
        from pysmt.errors import PysmtError
        from pysmt.files.textio import atomic_path
        try:
            with atomic_path({str(tmp_path / "last.pt")!r}) as tmp:
                torch.save(torch.zeros(100_000), tmp)
        except PysmtError as err:
            print(err)
    """)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, preexec_fn=limited_file_size(50_000)
    )
    assert proc.stdout.startswith(f"writing {tmp_path / 'last.pt'}: the write failed (is the disk full?)"), proc
    assert list(tmp_path.iterdir()) == []


def test_reading_with_progress_gives_the_same_lines(tmp_path):
    import gzip

    path = tmp_path / "t.gz"
    with gzip.open(path, "wt") as out:
        out.write("".join(f"line {k}\n" for k in range(70_000)))
    assert list(read_lines(path, progress="load")) == list(read_lines(path))


# -- compressed files cut short, special files, byte-order marks -----------------------------------

LINES = "".join(f"source {k} ||| target {k} ||| 0.5 0.5 ||| 0-0\n" for k in range(20_000))


def compressed(path, opener):
    with opener(path, "wt", encoding="utf-8") as out:
        out.write(LINES)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # a copy cut short
    return path


@pytest.mark.parametrize("suffix, opener", [(".gz", gzip.open), (".bz2", bz2.open), (".xz", lzma.open)])
def test_a_compressed_file_cut_short_is_one_error_naming_the_file_and_line(tmp_path, suffix, opener):
    path = compressed(tmp_path / f"t{suffix}", opener)
    lines = []
    with pytest.raises(PysmtError) as failure:
        for line_no, text in read_lines(path):
            lines.append(text)
    assert str(failure.value).startswith(f"{path}, line {len(lines) + 1}: the compressed file is truncated or damaged")
    assert len(lines) < 20_000 and lines == LINES.splitlines()[: len(lines)]  # the complete lines before it


def test_compressed_files_are_read_whole(tmp_path):
    for suffix, opener in ((".gz", gzip.open), (".bz2", bz2.open), (".xz", lzma.open)):
        path = tmp_path / f"t{suffix}"
        with opener(path, "wt", encoding="utf-8") as out:
            out.write(LINES)
        assert [text for _, text in read_lines(path)] == LINES.splitlines()


@pytest.mark.parametrize("command", ["decode", "binarize"])
def test_a_truncated_gzip_table_is_one_line_naming_it(tmp_path, source, command):
    """decode and binarize ended with click's bare `Aborted!` (an uncaught EOFError)."""
    ini = write_moses_system(tmp_path / "system", phrases=LINES.replace("source", "a").replace("target", "x"))
    table = tmp_path / "system" / "phrases.txt"
    compressed(table.with_suffix(".gz"), gzip.open)
    table.unlink()
    ini.write_text(ini.read_text().replace("phrases.txt", "phrases.gz"))
    args = ["-i", str(source)] if command == "decode" else ["-o", str(tmp_path / "bin")]
    one_line_error(
        run_pysmt(command, "-c", ini, *args),
        f"{table.with_suffix('.gz')}, line ",
        "the compressed file is truncated or damaged",
    )


def test_a_truncated_gzip_input_fails_before_any_decoding(tiny_system, tmp_path):
    path = tmp_path / "in.gz"
    with gzip.open(path, "wt") as out:
        out.write("a b c\n" * 5000)
    path.write_bytes(path.read_bytes()[:-12])
    proc = run_pysmt("decode", "-c", tiny_system, "-i", path)
    one_line_error(proc, f"{path}, line ", "truncated or damaged")
    assert proc.stdout == ""  # found when the lines are counted (for the progress bar), before any work


def test_a_fifo_given_as_a_table_is_not_a_regular_file(tmp_path, source):
    ini = write_moses_system(tmp_path / "system")
    table = tmp_path / "system" / "phrases.txt"
    table.unlink()
    os.mkfifo(table)
    one_line_error(
        run_pysmt("decode", "-c", ini, "-i", source, timeout=60), f"{table}: not a regular file (a named pipe)"
    )


def test_a_byte_order_mark_is_dropped_and_said_once(tiny_system, tmp_path):
    """Kept, the mark was part of the first word: line 1 translated differently, silently."""
    plain, marked = tmp_path / "plain.txt", tmp_path / "marked.txt"
    plain.write_text("a b c\nc b a\n")
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    expected = run_pysmt("decode", "-c", tiny_system, "-i", plain, "--nbest", tmp_path / "p.nbest")
    got = run_pysmt("decode", "-c", tiny_system, "-i", marked, "--nbest", tmp_path / "m.nbest")
    assert got.returncode == 0 and got.stdout == expected.stdout
    assert (tmp_path / "m.nbest").read_text() == (tmp_path / "p.nbest").read_text()
    assert got.stderr.count(f"{marked}: dropped the UTF-8 byte-order mark") == 1
    with open(marked, "rb") as stdin:
        from_stdin = run_pysmt("decode", "-c", tiny_system, stdin=stdin)
    assert from_stdin.stdout == expected.stdout and "<stdin>: dropped the UTF-8 byte-order mark" in from_stdin.stderr
    assert [text for _, text in read_lines(marked)] == ["a b c", "c b a"]


def test_a_toml_config_with_a_byte_order_mark_loads(tmp_path):
    from pysmt.config_files import load_config
    from tests.helpers import raw_text_system

    toml = raw_text_system(tmp_path / "system")
    expected = load_config(toml)
    toml.write_bytes(b"\xef\xbb\xbf" + toml.read_bytes())
    assert load_config(toml) == expected


def test_arrays_written_to_a_full_disk_fail_with_the_system_error():
    """numpy's tofile said only "272710 requested and 237568 written", which the CLI labelled "writing output"."""
    code = textwrap.dedent("""
        import errno, sys, tempfile
        import numpy as np
        from pysmt.files.textio import write_array
        with tempfile.TemporaryFile() as handle:
            try:
                write_array(np.zeros(100_000), handle)
            except OSError as err:
                print(errno.errorcode[err.errno])
    """)
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, preexec_fn=limited_file_size(50_000)
    )
    assert proc.stdout.strip() == "EFBIG", proc
