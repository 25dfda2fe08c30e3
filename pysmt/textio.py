"""Reading text files the way models and inputs need: gzip or plain, UTF-8 checked line by line."""

from __future__ import annotations

import errno
import gzip
import os
import shutil
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator, TextIO

from tqdm import tqdm

from pysmt.errors import PysmtError, at_line


def open_binary(path: str | Path) -> BinaryIO:
    """Open a plain or gzip file (detected by its magic bytes, not its name) for binary reading."""
    path = Path(path)
    if not path.is_file():
        raise PysmtError(f"{path}: no such file")
    with open(path, "rb") as probe:
        magic = probe.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


def decode_line(raw: bytes, path: str | Path, line_no: int) -> str:
    """Decode one line as UTF-8 without its line ending (LF or CRLF); invalid bytes name the line."""
    try:
        return raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError as err:
        raise at_line(path, line_no, f"invalid UTF-8 ({err.reason} at byte {err.start})") from None


def read_lines(path: str | Path, progress: str | None = None) -> Iterator[tuple[int, str]]:
    """Yield ``(line_no, text)`` for every line of a plain or gzip UTF-8 file.

    With ``progress`` (a label), a progress bar over the file's bytes on disk goes to stderr once
    reading has taken more than a couple of seconds (a 5.5M-pair table takes a minute to load).
    """
    with open_binary(path) as handle:
        if progress is None:
            for line_no, raw in enumerate(handle, start=1):
                yield line_no, decode_line(raw, path, line_no)
            return
        raw_file = getattr(handle, "fileobj", handle)  # a gzip file's position in the compressed bytes
        with tqdm(total=Path(path).stat().st_size, desc=progress, unit="B", unit_scale=True, delay=2,
                  file=sys.stderr, leave=False) as bar:
            for line_no, raw in enumerate(handle, start=1):
                if line_no % 65536 == 0:
                    bar.update(raw_file.tell() - bar.n)
                yield line_no, decode_line(raw, path, line_no)


def current_umask() -> int:
    """The process' umask (reading it means setting it, so it is set straight back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: In the name of every temporary file and folder pysmt makes beside an output. A run that holds an
#: output folder's lock removes those a killed run left there (:mod:`pysmt.folder_lock`).
TEMP_MARK = ".pysmt-tmp"
#: Errors of a write that ran out of room: the file is incomplete and must not take the final name.
NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO)
#: What torch's checkpoint writer says when a write fails (it raises RuntimeError, not OSError).
TORCH_WRITE_ERRORS = ("write failed", "inline_container.cc", "PytorchStreamWriter")


def temporary_file(path: Path) -> tuple[int, Path]:
    """A new hidden file beside ``path`` (``.NAME.XXXX.pysmt-tmp.EXT``), open for writing: (descriptor, path)."""
    suffix = TEMP_MARK + "".join(path.suffixes[-1:])
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=suffix)
    return fd, Path(name)


def temporary_folder(path: Path) -> Path:
    """A new hidden folder beside ``path`` (``.NAME.XXXX.pysmt-tmp``)."""
    return Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMP_MARK))


@contextmanager
def scratch_folder(beside: Path, temp_dir: Path | None = None) -> Iterator[Path]:
    """A new hidden folder for the temporary files of making ``beside``, in ``temp_dir`` (made if
    missing; ``--temp-dir``) or else beside it; removed with what it holds at the end, also on failure."""
    if temp_dir is not None:
        temp_dir.mkdir(parents=True, exist_ok=True)
    folder = temporary_folder((temp_dir or beside.parent) / beside.name)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def write_failure(path: Path, err: BaseException) -> PysmtError | None:
    """The one-line error for a write to ``path`` that failed for lack of room, or None for any other error.

    torch reports a failed write as a ``RuntimeError`` ("file write failed"), not an ``OSError``.
    """
    if isinstance(err, OSError) and err.errno in NO_ROOM:
        reason = err.strerror
    elif isinstance(err, RuntimeError) and any(word in str(err) for word in TORCH_WRITE_ERRORS):
        reason = "the write failed (is the disk full?)"
    else:
        return None
    return PysmtError(f"writing {path}: {reason}; the incomplete file was removed and nothing else was changed")


@contextmanager
def failed_writes_reported(path: Path) -> Iterator[None]:
    """Inside, a write to ``path`` (a file, or a folder being filled) that fails for lack of room is
    raised as its one-line error (:func:`write_failure`); any other error as it is."""
    try:
        yield
    except (OSError, RuntimeError) as err:
        failure = write_failure(path, err)
        if failure is None:
            raise
        raise failure from None


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed into place (with umask permissions) on success.

    Every file pysmt writes goes through here (text through :func:`atomic_writer`, binary outputs such
    as checkpoints and arrays directly), so an interrupted job never leaves a half-written file under
    the final name, a rerun can trust that an existing output is complete, and every output gets the
    same permissions (``mkstemp``'s 0600 would surprise users sharing a system). A write that runs
    out of room is a one-line error naming the file (:func:`write_failure`).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = temporary_file(path)
    os.close(fd)
    try:
        with failed_writes_reported(path):
            yield tmp
            os.chmod(tmp, 0o666 & ~current_umask())
            os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


@contextmanager
def atomic_writer(path: str | Path, gzip_output: bool | None = None) -> Iterator[TextIO]:
    """Write a text file atomically (see :func:`atomic_path`); gzip when the name ends in ``.gz``."""
    path = Path(path)
    compress = path.suffix == ".gz" if gzip_output is None else gzip_output
    with atomic_path(path) as tmp:
        if compress:
            handle: TextIO = gzip.open(tmp, "wt", encoding="utf-8", compresslevel=6)
        else:
            handle = open(tmp, "w", encoding="utf-8")
        with handle:
            yield handle
