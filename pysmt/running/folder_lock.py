"""One owner per output folder: a lock that every command writing a ``--out`` folder holds until it exits.

Two runs writing one folder corrupt each other's records (a tune run's ``job.json`` naming one seed
while its iterations hold another's results). The lock is ``flock`` on ``.pysmt.lock`` in the folder:
the kernel releases it when the holding process dies, however it dies (kill -9 included), so a
stale lock never needs cleaning up. The file records the holder's PID and command, which the
refusal names. Forked workers inherit the lock, so it is held until the last of them has exited.

While the lock is held, nothing else writes in the folder, so the hidden temporary files and folders
that a killed run left there (see :data:`pysmt.files.textio.TEMP_MARK`) are removed when the lock is taken.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pysmt.errors import PysmtError
from pysmt.files.textio import TEMP_MARK, current_umask

LOCK_FILE = ".pysmt.lock"
#: Lock files are not part of a folder's content (fingerprints, "is this folder empty" checks).
NOT_CONTENT = frozenset({LOCK_FILE})

_HELD: dict[Path, list[int]] = {}  # folder -> [descriptor, how many holders in this process]


def _holder(path: Path) -> str:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        return f"PID {record['pid']}, `{record['command']}`, since {record['started']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "a process that has not yet said which"


def lock_folder(folder: Path) -> None:
    """Hold ``folder``'s lock until :func:`release_folder` (or this process's end), creating the folder;
    refuse if another run holds it.

    Taking a lock this process already holds counts one more holder. Temporary files left by a
    killed run are removed once the lock is held.
    """
    folder = Path(folder).resolve()
    if folder in _HELD:
        _HELD[folder][1] += 1
        return
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666 & ~current_umask())
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise PysmtError(
            f"{folder} is in use by another run ({_holder(path)}): wait for it to end or stop it, or give another --out"
        ) from None
    record = {
        "pid": os.getpid(),
        "command": " ".join(["pysmt", *sys.argv[1:]]),
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    os.ftruncate(fd, 0)
    os.pwrite(fd, (json.dumps(record) + "\n").encode(), 0)
    _HELD[folder] = [fd, 1]
    remove_leftovers(folder)


def release_folder(folder: Path) -> None:
    """Give up one hold of ``folder``'s lock; the last one releases it (a library caller may then run a
    command on the folder). Forked workers still alive keep it held until they exit."""
    folder = Path(folder).resolve()
    held = _HELD.get(folder)
    if held is None:
        return
    held[1] -= 1
    if held[1] == 0:
        del _HELD[folder]
        os.close(held[0])


@contextmanager
def locked_folder(folder: Path) -> Iterator[None]:
    """Hold ``folder``'s lock for the block (see :func:`lock_folder`)."""
    lock_folder(folder)
    try:
        yield
    finally:
        release_folder(folder)


def remove_leftovers(folder: Path) -> None:
    """Remove the temporary files and folders (named with :data:`TEMP_MARK`) that a killed run left in ``folder``.

    Subfolders with a lock of their own (a child command's ``--out``) are left to their owner.
    """
    for root, dirs, files in os.walk(folder):
        here = Path(root)
        for name in [d for d in dirs if TEMP_MARK in d]:
            shutil.rmtree(here / name, ignore_errors=True)
        dirs[:] = [d for d in dirs if TEMP_MARK not in d and not (here / d / LOCK_FILE).exists()]
        for name in files:
            if TEMP_MARK in name:
                (here / name).unlink(missing_ok=True)
