"""Text files the way models, inputs and outputs need them: plain or compressed, UTF-8 checked line by line,
damage named by file and line; outputs written atomically, or as streams where there is no file to replace.

This module is the one place that says what went wrong with a file: a missing, special or damaged
input (:func:`require_file`, :func:`raw_lines`) and a write that failed (:func:`failed_writes_reported`)
are one line naming the file, in the system's words.
"""

from __future__ import annotations

import bz2
import errno
import gzip
import itertools
import json
import lzma
import os
import shutil
import stat
import sys
import tempfile
import zlib
from collections.abc import Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, BinaryIO, Iterator, TextIO, cast

from pysmt.errors import PysmtError, at_line
from pysmt.files.progress import progress_bar

if TYPE_CHECKING:  # numpy is imported where an array is written: every command's start reads this module
    import numpy as np

#: Compressed formats read transparently, by their magic bytes (not their names): name, magic, opener.
COMPRESSED = (("gzip", b"\x1f\x8b", gzip.open), ("bzip2", b"BZh", bz2.open), ("xz", b"\xfd7zXZ\x00", lzma.open))
#: What the decompressors raise for a file cut short or damaged (bz2 raises OSError, gzip BadGzipFile).
DAMAGED_DATA = (EOFError, zlib.error, lzma.LZMAError, OSError)
#: The UTF-8 byte-order mark some editors put at the start of a file: not part of the first word.
BOM = b"\xef\xbb\xbf"
#: The files whose byte-order mark has been reported (once each).
_bom_reported: set[str] = set()


def require_file(path: str | Path, label: str = "", folder_ok: bool = False) -> Path:
    """``path``, if it names a regular file (through links; or, with ``folder_ok``, a folder); otherwise one
    line saying what it is.

    A named pipe or a device given as a model or input is refused rather than read: reading a FIFO
    that nobody writes to would hang, and a model read twice (counted, then loaded) needs a file.
    """
    path = Path(path)
    shown = f"{label} {path}" if label else str(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise PysmtError(f"{shown}: no such file{' or folder' if folder_ok else ''}") from None
    except OSError as err:
        raise PysmtError(f"{shown}: {err.strerror}") from None
    if stat.S_ISDIR(mode):
        if folder_ok:
            return path
        raise PysmtError(f"{shown}: is a folder, not a file")
    if not stat.S_ISREG(mode):
        kind = "a named pipe" if stat.S_ISFIFO(mode) else "a device or socket"
        raise PysmtError(f"{shown}: not a regular file ({kind}); give a file")
    return path


def compression_of(path: str | Path) -> str | None:
    """The compressed format of a file by its magic bytes ("gzip", "bzip2", "xz"), or None for plain."""
    with open(path, "rb") as probe:
        magic = probe.read(6)
    return next((name for name, start, _ in COMPRESSED if magic.startswith(start)), None)


def open_binary(path: str | Path) -> BinaryIO:
    """Open a plain, gzip, bzip2 or xz file (detected by its magic bytes, not its name) for binary reading."""
    path = require_file(path)
    kind = compression_of(path)
    for name, _, opener in COMPRESSED:
        if name == kind:
            return cast(BinaryIO, opener(path, "rb"))
    return open(path, "rb")


def raw_lines(handle: Iterable[bytes], path: str | Path) -> Iterator[tuple[int, bytes]]:
    """``(line_no, bytes)`` for each line of an open file; compressed data that is cut short or damaged
    is one line naming the file and the line reached, after every complete line before it."""
    line_no = 0
    try:
        for line_no, raw in enumerate(handle, start=1):
            yield line_no, raw
    except DAMAGED_DATA as err:
        if isinstance(err, OSError) and err.errno is not None:  # a real read error (EIO), not the data
            raise PysmtError(f"{path}, line {line_no + 1}: {err.strerror}") from None
        reason = str(err) or type(err).__name__
        raise at_line(path, line_no + 1, f"the compressed file is truncated or damaged ({reason})") from None


def without_bom(start: bytes, path: str | Path) -> bytes:
    """A file's first bytes without a UTF-8 byte-order mark; dropping one is said on stderr, once per file."""
    if not start.startswith(BOM):
        return start
    if str(path) not in _bom_reported:
        _bom_reported.add(str(path))
        print(f"pysmt: {path}: dropped the UTF-8 byte-order mark at its start", file=sys.stderr, flush=True)
    return start[len(BOM) :]


def decode_line(raw: bytes, path: str | Path, line_no: int) -> str:
    """Decode one line as UTF-8 without its line ending (LF or CRLF); invalid bytes name the line.

    A byte-order mark at the start of line 1 is dropped (said once per file on stderr): left in, it
    would be part of the first word, and the first line would translate differently, silently.
    """
    if line_no == 1:
        raw = without_bom(raw, path)
    try:
        return raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError as err:
        raise at_line(path, line_no, f"invalid UTF-8 ({err.reason} at byte {err.start})") from None


def read_lines(path: str | Path, progress: str | None = None) -> Iterator[tuple[int, str]]:
    """Yield ``(line_no, text)`` for every line of a plain or compressed UTF-8 file.

    With ``progress`` (a label), a progress bar over the file's bytes on disk goes to stderr once
    reading has taken more than a couple of seconds (a 5.5M-pair table takes a minute to load).
    """
    with open_binary(path) as handle:
        if progress is None:
            for line_no, raw in raw_lines(handle, path):
                yield line_no, decode_line(raw, path, line_no)
            return
        # the position in the bytes on disk: a gzip file's fileobj, a bz2 or xz file's _fp, a plain file itself
        raw_file = cast(IO[bytes], getattr(handle, "fileobj", None) or getattr(handle, "_fp", None) or handle)
        with progress_bar(
            total=Path(path).stat().st_size, desc=progress, unit="B", unit_scale=True, delay=2, leave=False
        ) as bar:
            for line_no, raw in raw_lines(handle, path):
                if line_no % 65536 == 0:
                    bar.update(raw_file.tell() - bar.n)
                yield line_no, decode_line(raw, path, line_no)


def read_json(path: Path) -> Any:
    """The JSON document in ``path`` (a record pysmt wrote: ``job.json``, a table's ``header.json``). One nested
    too deeply for Python's parser (edited by hand, or hostile) is a :class:`json.JSONDecodeError` like any
    other damage, which its reader reports in one line, not a ``RecursionError`` of thousands of lines."""
    text = path.read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, 0) from None


def count_lines(path: str | Path) -> int:
    """The lines of a plain or compressed file, as :func:`read_lines` reads them (damage named as there)."""
    with open_binary(path) as handle:
        return sum(1 for _ in raw_lines(handle, path))


@contextmanager
def writing(path: str | Path) -> Iterator[None]:
    """Inside, an ``OSError`` that names no file (a ``write`` that failed: a full disk) names ``path``, so that
    whoever reports it can say which file, in the system's words."""
    try:
        yield
    except OSError as err:
        if err.filename is None:
            err.filename = str(path)
        raise


def write_array(array: np.ndarray, handle: IO[bytes]) -> None:
    """Append an array's bytes to a binary file through the file's own ``write``, so that a failed write
    is an ``OSError`` with its errno and the file's name (``ndarray.tofile`` says only "N requested and M
    written")."""
    import numpy as np

    with writing(handle.name):
        handle.write(np.ascontiguousarray(array).view(np.uint8).data)


def current_umask() -> int:
    """The process' umask (reading it means setting it, so it is set straight back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: In the name of every temporary file and folder pysmt makes beside an output. A run that holds an
#: output folder's lock removes those a killed run left there (:mod:`pysmt.running.folder_lock`).
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


def missing_folders(folder: Path) -> list[Path]:
    """``folder`` and those of its parents that do not exist yet, deepest first: what making it would make."""
    return list(itertools.takewhile(lambda path: not path.exists(), (folder, *folder.parents)))


def remove_made(made: list[Path]) -> None:
    """Remove the folders a command made (deepest first) that hold nothing; stop at the first that holds
    something (another run's files, or this run's work: never removed)."""
    for path in made:
        try:
            path.rmdir()
        except FileNotFoundError:
            continue
        except OSError:
            return


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


def write_failure(path: Path, err: BaseException, temporary: Path | None = None) -> PysmtError | None:
    """The one-line error for a write to ``path`` (through ``temporary``) that failed, in the system's words,
    or None for an error that is not about this write (another file's, or not an ``OSError``).

    torch reports a failed write as a ``RuntimeError`` ("file write failed"), not an ``OSError``.
    """
    ours = (None, str(path), str(temporary) if temporary else None)
    if isinstance(err, OSError) and err.errno is not None and err.filename in ours:
        reason = err.strerror
    elif isinstance(err, RuntimeError) and any(word in str(err) for word in TORCH_WRITE_ERRORS):
        reason = "the write failed (is the disk full?)"
    else:
        return None
    return PysmtError(f"writing {path}: {reason}; the incomplete file was removed and nothing else was changed")


@contextmanager
def failed_writes_reported(path: Path, temporary: Path | None = None) -> Iterator[None]:
    """Inside, a write to ``path`` (a file, or a folder being filled; through ``temporary``) that fails is
    raised as its one-line error (:func:`write_failure`); any other error as it is."""
    try:
        yield
    except (OSError, RuntimeError) as err:
        failure = write_failure(path, err, temporary)
        if failure is None:
            raise
        raise failure from None


@dataclass(frozen=True)
class Destination:
    """Where writing to an output path leads, decided once for every kind of output.

    * ``stream``: the path is the file behind this process' stdout or stderr (``/dev/stdout``, or
      ``out.txt`` with ``> out.txt``): written through that stream, so that its lines keep their
      order among the others and nothing replaces the file the stream writes (which would lose them).
    * ``special``: a device, FIFO or socket: opened and written directly, as a stream; there is no
      file to replace, and no temporary sibling can be made beside ``/proc/PID/fd/pipe:[N]``.
    * otherwise a regular file (or a new name) at ``target`` (through symbolic links, as a shell's
      ``>`` writes): written to a temporary sibling that replaces it when complete.
    """

    path: Path
    target: Path
    stream: TextIO | None = None
    special: bool = False


def file_identity(fd: int) -> tuple[int, int] | None:
    """(device, inode) of an open descriptor, or None where there is none."""
    try:
        info = os.fstat(fd)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def stream_descriptor(stream: object) -> int | None:
    """The descriptor of a standard stream, or None (a test's in-memory stream has none)."""
    try:
        return int(stream.fileno())  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return None


def destination(path: str | Path) -> Destination:
    """Where an output path leads (:class:`Destination`): by device and inode, whatever its name."""
    path = Path(path)
    try:
        info = os.stat(path)  # through links, /dev/stdout and /proc/self/fd/N included
    except OSError:
        return Destination(path, Path(os.path.realpath(path)))
    for stream in (sys.stdout, sys.stderr):
        fd = stream_descriptor(stream)
        if fd is not None and file_identity(fd) == (info.st_dev, info.st_ino):
            return Destination(path, path, stream=stream)
    if not stat.S_ISREG(info.st_mode):
        return Destination(path, path, special=True)
    return Destination(path, Path(os.path.realpath(path)))


def standard_file(stream: object) -> Path | None:
    """The regular file behind a standard stream (``< in.txt``, ``> out.txt``), or None for a terminal,
    a pipe, a device or an in-memory stream: what an output must not overwrite, or an input not be."""
    fd = stream_descriptor(stream)
    if fd is None:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
    except OSError:
        return None
    link = Path(f"/proc/self/fd/{fd}")
    if link.exists():  # Linux: the file's name (os.stat through the link finds it even if renamed)
        named = Path(os.readlink(link))
        return named if named.exists() and os.path.samefile(named, link) else link
    return Path(f"/dev/fd/{fd}")


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed into place (with umask permissions) on success.

    Every file pysmt writes goes through here (text through :func:`atomic_writer`, binary outputs such
    as checkpoints and arrays directly), so an interrupted job never leaves a half-written file under
    the final name, a rerun can trust that an existing output is complete, and every output gets the
    same permissions (``mkstemp``'s 0600 would surprise users sharing a system). A write that fails
    (a full disk) is a one-line error naming the file (:func:`write_failure`). A device or FIFO is
    given as it is (written directly, as a stream); a path that is this command's stdout or stderr is
    refused (a binary output through the stream's file would overwrite what the stream wrote).
    """
    where = destination(path)
    if where.stream is not None:
        name = "stdout" if where.stream is sys.stdout else "stderr"
        raise PysmtError(f"{path} is this command's {name}: give this output a file name of its own")
    if where.special:
        yield where.path
        return
    target = where.target
    made = missing_folders(target.parent)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = temporary_file(target)
    except OSError as err:  # no room even for an empty file (a full disk, no inodes left), or no permission
        remove_made(made)
        raise PysmtError(f"writing {path}: {err.strerror or err}; nothing was changed") from None
    os.close(fd)
    try:
        with failed_writes_reported(Path(path), tmp):
            yield tmp
            os.chmod(tmp, 0o666 & ~current_umask())
            os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()
            remove_made(made)  # the write failed: the folders made for it go too


@contextmanager
def atomic_writer(path: str | Path, gzip_output: bool | None = None) -> Iterator[TextIO]:
    """Write a text file atomically (see :func:`atomic_path`); gzip when the name ends in ``.gz``.

    A path that is this command's stdout or stderr is written through that stream, in order with what
    else it carries (``rescore --out /dev/stdout``).
    """
    path = Path(path)
    where = destination(path)
    if where.stream is not None:
        yield where.stream
        where.stream.flush()
        return
    compress = path.suffix == ".gz" if gzip_output is None else gzip_output
    with atomic_path(path) as tmp:
        if compress:
            handle: TextIO = gzip.open(tmp, "wt", encoding="utf-8", compresslevel=6)
        else:
            handle = open(tmp, "w", encoding="utf-8")
        with handle:
            yield handle
