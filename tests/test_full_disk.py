"""A full disk at a command's start (issue 48): taking the output folder's lock, making the folder, writing
``job.json``. Each is one line naming the file, and the folders the command made are gone again.

No small file system can be mounted here, so the ``pysmt`` process is given a ``sitecustomize`` module
(through ``PYTHONPATH``) that makes one system call fail with ENOSPC, as a full disk makes it fail: the command
runs as a user runs it, only that call answers as on a full disk.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pysmt.running.folder_lock import LOCK_FILE
from pysmt.testing import one_line_error, run_pysmt
from tests.helpers import tune_command

#: The ``sitecustomize`` module: ``PYSMT_TEST_FULL_DISK=CALL:PATH`` makes CALL fail with ENOSPC on PATH
#: (``pwrite``: a write to the open file PATH; ``mkdir``: making the folder PATH; ``create``: creating a
#: file whose path starts with PATH, as a temporary sibling's does). Real system calls fail the same way:
#: ``mkdir`` and ``open`` name their path, a write to a descriptor names none.
FULL_DISK = """
import errno, os

_call, _, _where = os.environ["PYSMT_TEST_FULL_DISK"].partition(":")


def _full(*path):
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), *path)


if _call == "pwrite":
    _pwrite = os.pwrite

    def pwrite(fd, data, offset):
        if os.readlink(f"/proc/self/fd/{fd}") == _where:
            raise _full()
        return _pwrite(fd, data, offset)

    os.pwrite = pwrite
elif _call == "mkdir":
    _mkdir = os.mkdir

    def mkdir(path, *args, **kwargs):
        if os.path.abspath(path) == _where:
            raise _full(os.fspath(path))
        return _mkdir(path, *args, **kwargs)

    os.mkdir = mkdir
elif _call == "create":
    _open = os.open

    def open(path, flags, *args, **kwargs):
        if flags & os.O_CREAT and os.path.abspath(path).startswith(_where):
            raise _full(os.fspath(path))
        return _open(path, flags, *args, **kwargs)

    os.open = open
"""


def run_on_a_full_disk(tmp_path: Path, call: str, where: Path, *args: str | Path):
    """Run ``pysmt ARGS`` with ``call`` failing on ``where`` as on a full disk."""
    hook = tmp_path / "full-disk-hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(FULL_DISK)
    path = os.pathsep.join(p for p in (str(hook), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path, "PYSMT_TEST_FULL_DISK": f"{call}:{where}"}
    return run_pysmt(*args, env=env)


def command(name: str, tiny_system: Path, dev: tuple[Path, Path], out: Path) -> list[str | Path]:
    if name == "binarize":
        return ["binarize", "-c", tiny_system, "-o", out]
    return tune_command(tiny_system, *dev, out)


@pytest.mark.parametrize("name", ["binarize", "tune"])
def test_a_full_disk_taking_the_lock_is_one_line_and_leaves_no_folder(tiny_system, dev, tmp_path, name):
    """The issue's case: the lock file is made, its record cannot be written (an OSError naming no file)."""
    out = tmp_path / "runs" / "new" / "out"
    lock = out / LOCK_FILE
    proc = run_on_a_full_disk(tmp_path, "pwrite", lock, *command(name, tiny_system, dev, out))
    line = one_line_error(proc)
    assert line == (
        f"Error: writing {lock}: No space left on device; the command did not start and left nothing behind"
    )
    assert not (tmp_path / "runs").exists()


def test_a_full_disk_making_the_out_folder_removes_the_folders_made_before(tiny_system, tmp_path):
    out = tmp_path / "runs" / "new" / "out"
    proc = run_on_a_full_disk(tmp_path, "mkdir", out, "binarize", "-c", tiny_system, "-o", out)
    line = one_line_error(proc)
    assert line == (f"Error: writing {out}: No space left on device; the command did not start and left nothing behind")
    assert not (tmp_path / "runs").exists()  # runs/ and runs/new/ were made, then removed


def test_a_full_disk_writing_job_json_is_one_line_and_leaves_no_folder(tiny_system, dev, tmp_path):
    """The lock is held, the job's record cannot be created: its name, and the folder is gone again."""
    out = tmp_path / "runs" / "out"
    proc = run_on_a_full_disk(tmp_path, "create", out / ".job.json.", *tune_command(tiny_system, *dev, out))
    line = one_line_error(proc)
    assert line == f"Error: writing {out / 'job.json'}: No space left on device; nothing was changed"
    assert not (tmp_path / "runs").exists()


def test_a_full_disk_in_an_existing_folder_keeps_the_folder_and_what_it_holds(tiny_system, dev, tmp_path):
    """Only folders the command made are removed: an existing --out and its files stay."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n")
    lock = out / LOCK_FILE
    proc = run_on_a_full_disk(tmp_path, "pwrite", lock, *tune_command(tiny_system, *dev, out, "--force"))
    one_line_error(proc, f"writing {lock}: No space left on device")
    assert [p.name for p in out.iterdir()] == ["notes.txt"]  # the lock file it made is gone too
    assert (out / "notes.txt").read_text() == "mine\n"
