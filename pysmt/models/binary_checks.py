"""Checking a binary table (:mod:`pysmt.models.binary_table`) before the compiled core reads it: its
arrays' checksums and every id and offset the core follows, once per table, recorded.

Why: the compiled core reads a table's arrays through raw pointers and follows the ids and offsets
they hold without checking them (``_strings.hpp``, ``_phrase_table.hpp``, ``_reordering_table.hpp``
say what they rely on). A table damaged on disk (a bad block, a partial copy, a region written over)
would crash the decoder (an offset past its blob) or silently change its translations (a changed
byte of a word); a table written by a buggy or hostile program can hold ids outside its arrays under
checksums that match. So a table is used only when

* each array's ``.npy`` file has the CRC-32 that ``pysmt binarize`` wrote beside its dtype and shape
  in ``header.json`` (``"crc32"``, 8 hex digits). CRC-32 (zlib) because what it is for is damage,
  not forgery, and it is the fastest digest the standard library has: 1.2-3.1 GB/s on the
  development machine (shared, two cores), against 0.15-0.35 GB/s for SHA-256 and 0.25-0.6 GB/s for
  BLAKE2b (``python bench/binary_checks.py``); and
* every string offset runs from 0 to its blob's size without decreasing, every hash slot is at most
  the number of strings, every entry's target words lie inside ``target_ids``, every id is inside
  what it indexes (:func:`check_phrase_arrays`, :func:`check_reordering_arrays`: numpy, vectorised);
  with these no bytes in any array of a table whose header is valid make the core read outside the
  arrays. So that no bytes make the decoder fail later either (a traceback in the middle of a run),
  strings must be UTF-8 (Python reads them), alignments pairs of word positions, scores finite.

Both read every page of the table, where mapping it reads none: on the moses-news tables (68 MB of
arrays) about 80-110 ms against 3 ms for mapping; extrapolated, 1-1.5 s for the full news system's
918 MB (more from a cold disk), beside the 0.009 s its load takes. Checking each array lazily, when
first used, would save nothing: a decoder's first sentence uses them all. So the check is made on a
table's first load and recorded (:func:`checked_once`) in the user's cache,
``$XDG_CACHE_HOME/pysmt/checked-tables/`` (``~/.cache`` by default), never in the table's folder,
which may be read-only or shared: a small file per table folder holding the identity of each of its
files (device, inode, size, modification and change times in nanoseconds). Later loads find it and
only map the table (moses-news: 5-9 ms). Writing to a file changes its change time, which no
program can set back, so a table changed after its check (damaged, rebinarized, copied) is checked
again; a table whose files changed less than :data:`RECENT_NS` before its check is not recorded,
since a write within the file system's timestamp granularity could leave the times as they were
(git's "racily clean" files). Where the cache cannot be written, every load checks.

A table binarized before checksums were written (format version 1 without ``"crc32"``) is still
read, its ids and offsets checked, with a warning, once per table and process, that damage to it
cannot be detected.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import sys
import time
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from pysmt._core import StringIndex
from pysmt.errors import PysmtError
from pysmt.files.formats import ALIGNMENT
from pysmt.files.textio import atomic_writer, read_json

#: The checksum written beside each array in the header.
CHECKSUM = "crc32"
#: The checksum of the header's own fields, written in the header: what is not an array is covered too.
HEADER_CHECKSUM = "header_crc32"
#: What the checks verify, in a number: a record made by other checks is not trusted (raise it when they change).
CHECKS = 2
#: Source phrases counted at a time when finding the longest (bounds the memory the count takes).
PHRASES_PER_CHUNK = 1 << 20
#: Files changed this recently (nanoseconds) before their check are not recorded as checked.
RECENT_NS = 2_000_000_000

_warned: set[Path] = set()


def unusable(folder: Path, kind: str, reason: str) -> PysmtError:
    return PysmtError(f"{folder}: not a usable binary {kind} ({reason}); rebuild it with `pysmt binarize`")


def check(folder: Path, kind: str, condition: bool, reason: str) -> None:
    if not condition:
        raise unusable(folder, kind, reason)


def file_checksum(path: Path) -> str:
    """The CRC-32 of a (non-empty) file's bytes as 8 hex digits, read through a memory map (no copy; zlib
    releases the GIL)."""
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return f"{zlib.crc32(data):08x}"


def check_checksums(folder: Path, kind: str, arrays: dict[str, dict[str, Any]]) -> None:
    """Refuse a table whose ``NAME.npy`` files do not have the checksums its header gives (``arrays``:
    the header's entry per array); warn, once per table and process, when the header gives none."""
    if not any(CHECKSUM in entry for entry in arrays.values()):
        if folder.resolve() not in _warned:
            _warned.add(folder.resolve())
            print(
                f"pysmt: warning: {folder}: binarized without checksums (by an earlier pysmt), so damage to its "
                "arrays cannot be detected; binarize it again",
                file=sys.stderr,
            )
        return
    for name, entry in arrays.items():
        if file_checksum(folder / f"{name}.npy") != entry.get(CHECKSUM):
            raise unusable(folder, kind, f"{name}.npy does not match its checksum: damaged?")


def header_checksum(header: dict[str, Any]) -> str:
    """The CRC-32 of a header's fields other than this checksum (canonical JSON: keys sorted, no spaces), as 8
    hex digits. Settings such as ``log_scores`` cannot be checked against the arrays; this covers them."""
    fields = {key: value for key, value in header.items() if key != HEADER_CHECKSUM}
    return f"{zlib.crc32(json.dumps(fields, sort_keys=True, separators=(',', ':')).encode()):08x}"


def check_header_checksum(folder: Path, kind: str, header: dict[str, Any], name: str) -> None:
    """Refuse a header whose fields do not have the checksum it gives. A header written before it had one
    (by an earlier pysmt) is read as before: its counts and ``max_source_length`` are checked against the
    arrays, the settings that cannot be are trusted."""
    if HEADER_CHECKSUM in header:
        check(folder, kind, header[HEADER_CHECKSUM] == header_checksum(header), f"{name} does not match its checksum")


def longest_phrase(blob: np.ndarray, offsets: np.ndarray) -> int:
    """The most words (spaces + 1) of the strings in ``blob`` (checked ``offsets``), 0 for none: what a
    phrase table's ``max_source_length`` must say. Counted a chunk of strings at a time, so that the
    positions of the spaces never take more than a chunk's worth of memory."""
    longest = 0
    for first in range(0, len(offsets) - 1, PHRASES_PER_CHUNK):
        bounds = offsets[first : first + PHRASES_PER_CHUNK + 1]
        start = int(bounds[0])
        spaces = np.flatnonzero(blob[start : int(bounds[-1])] == ord(" "))
        per_string = np.diff(np.searchsorted(spaces, bounds - start))
        longest = max(longest, int(per_string.max()) + 1)
    return longest


def stored_strings(arrays: dict[str, np.ndarray], prefix: str, slots: np.ndarray | None = None) -> StringIndex:
    """The strings ``PREFIX_blob``/``PREFIX_offsets`` of a table, found through ``slots`` (their hash index)
    or, without, by binary search (they are sorted): a view of the mapped arrays, nothing copied."""
    return StringIndex(
        blob=arrays[f"{prefix}_blob"],
        offsets=arrays[f"{prefix}_offsets"],
        slots=np.zeros(0, np.uint32) if slots is None else slots,
    )


def check_strings(
    folder: Path, kind: str, arrays: dict[str, np.ndarray], prefix: str, count: int, slots: np.ndarray | None = None
) -> StringIndex:
    """The offsets of the ``count`` strings ``PREFIX_*`` run from 0 to their blob's size and never decrease,
    each string is UTF-8 (Python reads them), and their hash ``slots`` (if any) hold at most ``count``.
    Return the strings."""
    blob, offsets = arrays[f"{prefix}_blob"], arrays[f"{prefix}_offsets"]
    check(
        folder,
        kind,
        count >= 0 and len(offsets) == count + 1 and offsets[0] == 0 and offsets[-1] == len(blob),
        f"{prefix}_offsets.npy does not run from 0 to the size of {prefix}_blob.npy",
    )
    check(folder, kind, bool((offsets[1:] >= offsets[:-1]).all()), f"{prefix}_offsets.npy decreases")
    strings = stored_strings(arrays, prefix)
    bad = strings.first_not_utf8()
    check(folder, kind, bad < 0, f"string {bad} of {prefix}_blob.npy is not UTF-8")
    if slots is not None:
        check(folder, kind, len(slots) == max(2 * count, 1), f"{prefix}_slots.npy has the wrong size")
        check(
            folder,
            kind,
            int(slots.max()) <= count,
            f"{prefix}_slots.npy holds {int(slots.max())}, past the {count} strings",
        )
    return strings


def check_values(folder: Path, kind: str, arrays: dict[str, np.ndarray], id_limits: dict[str, int]) -> None:
    """Refuse non-finite scores and ids outside ``0..limit - 1``."""
    check(folder, kind, bool(np.isfinite(arrays["scores"]).all()), "scores.npy holds nan or infinite values")
    for name, limit in id_limits.items():
        values = arrays[name]
        if len(values):
            low, high = int(values.min()), int(values.max())
            check(
                folder,
                kind,
                0 <= low and high < limit,
                f"{name}.npy holds ids from {low} to {high}, outside 0..{limit - 1}",
            )


def check_phrase_arrays(
    folder: Path,
    kind: str,
    arrays: dict[str, np.ndarray],
    counts: dict[str, int],
    num_scores: int,
    max_source_length: object,
) -> None:
    """A phrase table's arrays agree with its header's ``counts`` and ``max_source_length`` (the decoder looks
    up no longer source phrase: a smaller one silently changes translations), and every id and offset in
    them is inside what it indexes: what :class:`pysmt._core.PhraseTableView` and the option builder rely on."""
    entries = counts["entries"]
    check_strings(folder, kind, arrays, "source", counts["sources"], arrays["source_slots"])
    longest = longest_phrase(arrays["source_blob"], arrays["source_offsets"])
    check(
        folder,
        kind,
        type(max_source_length) is int and max_source_length == longest,
        f"header.json gives max_source_length {json.dumps(max_source_length)}, "
        f"but its longest source phrase has {longest} word{'s' if longest != 1 else ''}",
    )
    check_strings(folder, kind, arrays, "vocab", counts["vocabulary"])
    alignments = check_strings(folder, kind, arrays, "alignment", counts["alignments"])
    bad = next((k for k, text in enumerate(alignments) if not ALIGNMENT.fullmatch(text)), -1)
    check(folder, kind, bad < 0, f"alignment {bad} of alignment_blob.npy is not a list of word pairs (0-0 1-2 ...)")
    block_start = arrays["block_start"]
    check(
        folder,
        kind,
        len(block_start) == counts["sources"] + 1
        and block_start[0] == 0
        and block_start[-1] == entries
        and bool((block_start[1:] >= block_start[:-1]).all()),
        f"block_start.npy does not run from 0 to the {entries} entries in order",
    )
    for name in ("target_start", "target_len", "alignment_id"):
        check(folder, kind, len(arrays[name]) == entries, f"{name}.npy has {len(arrays[name])} rows, not {entries}")
    check(folder, kind, arrays["scores"].shape == (entries, max(num_scores, 1)), "scores.npy has the wrong shape")
    starts, lengths, words = arrays["target_start"], arrays["target_len"], len(arrays["target_ids"])
    if entries:  # bounds first: start + length cannot overflow once both are within target_ids
        check(
            folder,
            kind,
            int(starts.min()) >= 0
            and int(starts.max()) <= words
            and int(lengths.min()) >= 0
            and int((starts + lengths).max()) <= words
            and int(starts[-1]) + int(lengths[-1]) == words,
            "target_start.npy or target_len.npy points outside target_ids.npy",
        )
    check_values(folder, kind, arrays, {"target_ids": counts["vocabulary"], "alignment_id": counts["alignments"]})


def check_reordering_arrays(folder: Path, kind: str, arrays: dict[str, np.ndarray], keys: int, num_scores: int) -> None:
    """A reordering table's keys and scores: what :class:`pysmt._core.ReorderingTableView` relies on."""
    check_strings(folder, kind, arrays, "key", keys)
    check(folder, kind, arrays["scores"].shape == (keys, num_scores), "scores.npy has the wrong shape")
    check_values(folder, kind, arrays, {})


def file_identity(path: Path) -> list[int]:
    info = os.stat(path)
    return [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]


def record_path(folder: Path) -> Path | None:
    """Where the check of the table in ``folder`` is recorded (None without a home to keep a cache in)."""
    cache = os.environ.get("XDG_CACHE_HOME", "")
    try:
        base = Path(cache) if os.path.isabs(cache) else Path.home() / ".cache"  # the XDG spec: relative is unset
    except RuntimeError:
        return None
    name = hashlib.sha256(os.fsencode(folder.resolve())).hexdigest()[:32]
    return base / "pysmt" / "checked-tables" / f"{name}.json"


def checked_once(folder: Path, files: Iterable[str], checks: Callable[[], None]) -> None:
    """Run ``checks`` on the table in ``folder`` unless they passed on these very ``files`` of it before.

    A pass is recorded (see the module's docstring) when no file changed in the last :data:`RECENT_NS`;
    a record that cannot be read or written counts as none.
    """
    identities = {name: file_identity(folder / name) for name in files}
    identity = {"folder": str(folder.resolve()), "checks": CHECKS, "files": identities}
    record = record_path(folder)
    try:
        if record is not None and read_json(record) == identity:
            return
    except (OSError, ValueError):
        pass
    started = time.time_ns()
    checks()
    if record is None or max(info[4] for info in identities.values()) > started - RECENT_NS:
        return
    try:
        with atomic_writer(record) as out:
            out.write(json.dumps(identity) + "\n")
    except (OSError, PysmtError):  # a read-only or full home: the next load checks again
        pass
