"""Reading text files the way models and inputs need: gzip or plain, UTF-8 checked line by line."""

from __future__ import annotations

import gzip
import os
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


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed into place (with umask permissions) on success.

    Every file pysmt writes goes through here (text through :func:`atomic_writer`, binary outputs such
    as checkpoints and arrays directly), so an interrupted job never leaves a half-written file under
    the final name, a rerun can trust that an existing output is complete, and every output gets the
    same permissions (``mkstemp``'s 0600 would surprise users sharing a system).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp" + "".join(path.suffixes[-1:]))
    os.close(fd)
    tmp = Path(name)
    try:
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
            handle: TextIO = gzip.open(tmp, "wt", encoding="utf-8", compresslevel=6)  # type: ignore[assignment]
        else:
            handle = open(tmp, "w", encoding="utf-8")
        with handle:
            yield handle
