"""Reading and atomic writing (pysmt/textio.py): written files get the umask's permissions, a failed write
leaves the old file, a full disk is one line, and reading with progress gives the same lines."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap

import pytest

from pysmt.textio import atomic_path, atomic_writer, read_lines
from tests.helpers import limited_file_size


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


def test_a_full_disk_while_saving_a_torch_checkpoint_is_one_line(tmp_path):
    pytest.importorskip("torch")
    code = textwrap.dedent(f"""
        import torch
        from pysmt.errors import PysmtError
        from pysmt.textio import atomic_path
        try:
            with atomic_path({str(tmp_path / 'last.pt')!r}) as tmp:
                torch.save(torch.zeros(100_000), tmp)
        except PysmtError as err:
            print(err)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          preexec_fn=limited_file_size(50_000))
    assert proc.stdout.startswith(f"writing {tmp_path / 'last.pt'}: the write failed (is the disk full?)"), proc
    assert list(tmp_path.iterdir()) == []


def test_reading_with_progress_gives_the_same_lines(tmp_path):
    import gzip
    path = tmp_path / "t.gz"
    with gzip.open(path, "wt") as out:
        out.write("".join(f"line {k}\n" for k in range(70_000)))
    assert list(read_lines(path, progress="load")) == list(read_lines(path))
