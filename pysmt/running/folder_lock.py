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

import errno
import fcntl
import json
import os
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pysmt.errors import PysmtError
from pysmt.files.textio import TEMP_MARK, current_umask, missing_folders, read_json, remove_made

LOCK_FILE = ".pysmt.lock"
#: Lock files are not part of a folder's content (fingerprints, "is this folder empty" checks).
NOT_CONTENT = frozenset({LOCK_FILE})


@dataclass
class Hold:
    """This process's hold of one folder's lock: the lock file's descriptor, how many holders in this process,
    and the folders that taking the lock made (deepest first; removed if the command fails at its start)."""

    fd: int
    holders: int
    made: list[Path]


_HELD: dict[Path, Hold] = {}


def _holder(path: Path) -> str:
    try:
        record = read_json(path)
        return f"PID {record['pid']}, `{record['command']}`, since {record['started']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "a process that has not yet said which"


def lock_folder(folder: Path) -> None:
    """Hold ``folder``'s lock until :func:`release_folder` (or this process's end), creating the folder;
    refuse if another run holds it.

    Taking a lock this process already holds counts one more holder. Temporary files left by a
    killed run are removed once the lock is held. A lock that cannot be written (a full disk) is one
    line naming the lock file, and the folders made for it are removed again: a command that could
    not start leaves nothing behind.
    """
    folder = Path(folder).resolve()
    if folder in _HELD:
        _HELD[folder].holders += 1
        return
    made = missing_folders(folder)
    path = folder / LOCK_FILE
    new_lock = not path.exists()
    fd = open_lock_file(path, made)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise PysmtError(
            f"{folder} is in use by another run ({_holder(path)}): wait for it to end or stop it, or give another --out"
        ) from None
    _HELD[folder] = Hold(fd, 1, made)
    try:
        write_holder(fd)
    except OSError as err:
        if new_lock:
            path.unlink(missing_ok=True)  # while still held: nobody else has it
        release_folder(folder, failed=True)
        raise lock_failure(path, err) from None
    remove_leftovers(folder)


def open_lock_file(path: Path, made: list[Path]) -> int:
    """The lock file ``path`` open for writing, its folder made if missing (``made``: the folders that makes); a
    failure (a full disk) is one line naming what could not be made, with the folders made removed again."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666 & ~current_umask())
    except OSError as err:
        remove_made(made)
        raise lock_failure(Path(err.filename or path), err) from None


def write_holder(fd: int) -> None:
    """Say who holds the lock (PID, command, start), for the refusal a second run gets. The record is written
    before the file is cut to its length, so a write that fails keeps the previous holder's record whole."""
    record = {
        "pid": os.getpid(),
        "command": " ".join(["pysmt", *sys.argv[1:]]),
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    data = (json.dumps(record) + "\n").encode()
    if os.pwrite(fd, data, 0) != len(data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    os.ftruncate(fd, len(data))


def lock_failure(path: Path, err: OSError) -> PysmtError:
    """A lock that could not be taken for the system's reason (a full disk, a permission), as one line."""
    return PysmtError(f"writing {path}: {err.strerror or err}; the command did not start and left nothing behind")


def release_folder(folder: Path, *, failed: bool = False) -> None:
    """Give up one hold of ``folder``'s lock; the last one releases it (a library caller may then run a
    command on the folder). Forked workers still alive keep it held until they exit.

    ``failed``: the command stops before it has written anything there (its start failed: a full disk,
    a refusal). A folder the lock made and that holds nothing but the lock is then removed, lock and
    all, so that a command that could not start leaves no empty folders behind.
    """
    folder = Path(folder).resolve()
    held = _HELD.get(folder)
    if held is None:
        return
    held.holders -= 1
    if held.holders == 0:
        del _HELD[folder]
        if failed and held.made and {p.name for p in folder.iterdir()} <= {LOCK_FILE}:
            (folder / LOCK_FILE).unlink(missing_ok=True)  # while still held: no other run can have taken it
            remove_made(held.made)
        os.close(held.fd)


@contextmanager
def locked_folder(folder: Path) -> Iterator[None]:
    """Hold ``folder``'s lock for the block (see :func:`lock_folder`); a block that fails before writing
    anything there leaves no folder behind."""
    lock_folder(folder)
    try:
        yield
    except BaseException:
        release_folder(folder, failed=True)
        raise
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
