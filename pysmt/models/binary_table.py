"""Binarized phrase and reordering tables: a folder of memory-mapped numpy arrays (``pysmt binarize``):
the format, and loading it. Writing one, within a memory budget, is :mod:`pysmt.models.binary_writer`'s.

In the spirit of Moses' compact tables and KenLM's binary format: a table is parsed once, by the
text loaders (so scores are the very values a text table gives), and written as arrays that later
loads map into memory instead of parsing. Loading takes milliseconds whatever the table's size,
only the pages a lookup touches are read, and those pages are the operating system's file cache:
forked ``--threads`` workers (and several decoders on one machine) share one copy.

A binary table is a folder::

    header.json        {"format": "pysmt-binary-table", "version": 1, "kind": ..., "num_scores": ...,
                        "source": {"path", "size", "mtime_ns"}, "counts": {...},
                        "arrays": {name: {"dtype", "shape", "crc32"}}, "header_crc32": ...}
    NAME.npy           the arrays below (``np.load(mmap_mode="r")``)

``crc32`` is the CRC-32 of the whole ``NAME.npy`` file, 8 hex digits. It was added without a new
format version: tables binarized before it are read as they were (with a warning that damage to them
cannot be detected), and earlier pysmts read the new ones (they ignore it). ``header_crc32`` is the
CRC-32 of the header's other fields (:func:`~pysmt.models.binary_checks.header_checksum`), so that no
setting or count changes unnoticed either; a header without it (an earlier pysmt's) is read as before, its
counts and ``max_source_length`` checked against the arrays as every header's are.

Strings are stored as one UTF-8 blob (``*_blob``, uint8) plus ``*_offsets`` (int64, count + 1).
Lookup keys (source phrases, reordering keys) and the target vocabulary are sorted by their UTF-8
bytes and found by binary search; the index in sorted order is the id. Source phrases also have a
hash index (``source_slots``: open addressing, CRC-32 of the UTF-8 bytes modulo the slot count,
linear probing, index + 1 per slot, 0 for empty; twice as many slots as sources), since most of a
sentence's n-grams are not in the table and a miss should cost no more than a dict's.

phrase-table (``kind = "phrase-table"``), entries grouped by source in sorted order, file order
within a source:
    source_blob/source_offsets  the distinct source phrases, sorted
    source_slots                uint32 (2 x sources, at least 1): their hash index
    block_start                 int64 (sources + 1): entries of source i are rows block_start[i]:block_start[i+1]
    target_start, target_len    int64/int32 per entry: its words in ``target_ids``
    target_ids                  int32 word ids into vocab_blob/vocab_offsets (sorted)
    scores                      float32 (entries x num_scores), already logged/floored as PhraseTable does
    alignment_id                int32 per entry, into alignment_blob/alignment_offsets (interned)

reordering-table (``kind = "reordering-table"``):
    key_blob/key_offsets        sorted keys, ``src ||| tgt`` (or ``src`` for source-only tables)
    scores                      float64 (keys x num_scores), logged as ReorderingTable does

A folder is written under a temporary name beside its final one and renamed when complete, so a
folder of the final name is always whole; a missing array, a truncated file or another format
version is reported as one line naming the folder. The compiled core follows the arrays' ids and
offsets unchecked, so a table is used only after its checksums and every id and offset in it have
been checked, on its first load (recorded: later loads only map it), by
:mod:`pysmt.models.binary_checks`; a table that fails is one line naming the folder and the array.

Stored scores: a feature may store its scores of a binary phrase table's entries in the folder, so
the decoder reads them instead of computing them (``pysmt rnn score`` stores the RNN's):
``stored/NAME.npy`` (float32, entries x scores, NaN where an entry has none) beside
``stored/NAME.json`` (what made them: ``{"entries": ..., "scores": ..., "made_by": {...}}``, which the
feature checks against itself). They are written by :class:`pysmt.models.binary_writer.ScoreWriter`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from pysmt.errors import PysmtError
from pysmt.files.textio import read_json
from pysmt.models.binary_checks import (
    check,
    check_checksums,
    check_header_checksum,
    check_phrase_arrays,
    check_reordering_arrays,
    checked_once,
    stored_strings,
    unusable,
)

FORMAT = "pysmt-binary-table"
VERSION = 1
HEADER = "header.json"
STORED = "stored"
PHRASE_TABLE = "phrase-table"
REORDERING_TABLE = "reordering-table"

#: The arrays of each kind, with their dtypes and number of dimensions.
ARRAYS: dict[str, dict[str, tuple[str, int]]] = {
    PHRASE_TABLE: {
        "source_blob": ("|u1", 1),
        "source_offsets": ("<i8", 1),
        "source_slots": ("<u4", 1),
        "block_start": ("<i8", 1),
        "target_start": ("<i8", 1),
        "target_len": ("<i4", 1),
        "target_ids": ("<i4", 1),
        "vocab_blob": ("|u1", 1),
        "vocab_offsets": ("<i8", 1),
        "scores": ("<f4", 2),
        "alignment_id": ("<i4", 1),
        "alignment_blob": ("|u1", 1),
        "alignment_offsets": ("<i8", 1),
    },
    REORDERING_TABLE: {"key_blob": ("|u1", 1), "key_offsets": ("<i8", 1), "scores": ("<f8", 2)},
}


def read_header(folder: Path) -> dict[str, Any]:
    """The header of a binary table folder (any kind), or an error naming the folder."""
    path = folder / HEADER
    try:
        header = read_json(path)
    except FileNotFoundError:
        raise PysmtError(
            f"{folder}: a folder, but not a binary table (no {HEADER}); a table is a text or gzip "
            "file or a folder written by `pysmt binarize`"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise unusable(folder, "table", f"{HEADER} is unreadable: {err}") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise unusable(folder, "table", f"{HEADER} is not a {FORMAT} header")
    return header


def npy_header(path: Path) -> tuple[tuple[int, ...], bool, np.dtype, int]:
    """The shape, Fortran order, dtype and data offset that an ``.npy`` file's header gives, parsed without
    making an array: numpy trusts them when it maps one (a negative shape of an empty dtype kills the process)."""
    with open(path, "rb") as handle:
        major, _ = np.lib.format.read_magic(handle)
        if major not in (1, 2):
            raise ValueError(f"npy format version {major}")
        read = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
        shape, fortran_order, dtype = read(handle)
        return shape, fortran_order, dtype, handle.tell()


def table_header(folder: Path, kind: str) -> dict[str, Any]:
    """The header of a binary table of ``kind`` in this format's version, or one line saying why not."""
    header = read_header(folder)
    if header.get("version") != VERSION:
        raise unusable(folder, kind, f"format version {header.get('version')!r}, this pysmt reads version {VERSION}")
    if header.get("kind") != kind:
        raise unusable(folder, kind, f"it holds a {header.get('kind')!r}")
    return header


def phrase_table_header(folder: Path, log_scores: bool) -> dict[str, Any]:
    """A binary phrase table's header, if the table was made with the feature's ``log_scores``: what a phrase
    table feature checks before any table loads (milliseconds), and again when it loads."""
    header = table_header(folder, PHRASE_TABLE)
    if bool(header.get("log_scores")) != log_scores:
        made = "true" if header.get("log_scores") else "false"
        raise PysmtError(
            f"{folder}: binarized with log-scores = {made}, but the feature says "
            f"log-scores = {str(log_scores).lower()}; binarize the text table again with this setting"
        )
    return header


def reordering_table_header(folder: Path, num_scores: int, source_only: bool) -> dict[str, Any]:
    """A binary reordering table's header, if it holds what the feature's model needs (as
    :func:`phrase_table_header`)."""
    header = table_header(folder, REORDERING_TABLE)
    made = (header.get("num_scores"), bool(header.get("source_only")))
    if made != (num_scores, source_only):

        def describe(n: Any, f: bool) -> str:
            return f"{n} scores keyed by {'source phrase' if f else 'phrase pair'}"

        raise PysmtError(
            f"{folder}: a binary reordering table of {describe(*made)}, but the feature's model needs "
            f"{describe(num_scores, source_only)}"
        )
    return header


def open_table(folder: Path, kind: str, header: dict[str, Any]) -> dict[str, np.ndarray]:
    """Map a binary table's arrays (read-only, shared pages) after checking each array's ``.npy`` header against
    the table's ``header`` (dtype, shape, the file's size)."""
    recorded = header.get("arrays")
    if not isinstance(recorded, dict):
        raise unusable(folder, kind, f"{HEADER} lists no arrays")
    arrays = {}
    for name, (dtype, ndim) in ARRAYS[kind].items():
        path = folder / f"{name}.npy"
        if not path.is_file():
            raise unusable(folder, kind, f"{path.name} is missing")
        expected = recorded.get(name)
        if not isinstance(expected, dict):
            raise unusable(folder, kind, f"{HEADER} does not list {path.name}")
        try:
            shape, fortran_order, found, offset = npy_header(path)
        except Exception as err:  # numpy parses a damaged header with ast and tokenize: whatever they raise
            raise unusable(folder, kind, f"{path.name} is unreadable or truncated: {err}") from None
        if (
            found != np.dtype(dtype)
            or fortran_order
            or len(shape) != ndim
            or min(shape, default=0) < 0
            or list(shape) != expected.get("shape")
        ):
            raise unusable(
                folder,
                kind,
                f"{path.name} has dtype {found} and shape {list(shape)}, "
                f"the header says {expected.get('dtype')} {expected.get('shape')}",
            )
        if offset + math.prod(shape) * found.itemsize != path.stat().st_size:
            raise unusable(
                folder,
                kind,
                f"{path.name} is unreadable or truncated: {path.stat().st_size} bytes, "
                f"not the {offset + math.prod(shape) * found.itemsize} of its shape",
            )
        try:
            array = np.load(path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError) as err:
            raise unusable(folder, kind, f"{path.name} is unreadable: {err}") from None
        arrays[name] = np.asarray(array)  # a plain ndarray view of the map: cheaper to index than np.memmap
    return arrays


def header_counts(folder: Path, kind: str, header: dict[str, Any], names: tuple[str, ...]) -> dict[str, int]:
    counts: Any = header.get("counts")
    check(
        folder,
        kind,
        isinstance(counts, dict) and all(isinstance(counts.get(n), int) for n in names),
        f"{HEADER} lacks counts",
    )
    return {name: counts[name] for name in names}


def checked(folder: Path, kind: str, header: dict[str, Any], check_arrays: Callable[[], None]) -> None:
    """The table's checksums, then ``check_arrays`` (sizes, ids, offsets), on its first load only: see
    :mod:`pysmt.models.binary_checks`."""

    def checks() -> None:
        check_checksums(folder, kind, {name: header["arrays"][name] for name in ARRAYS[kind]})
        check_arrays()
        check_header_checksum(folder, kind, header, HEADER)  # after the arrays: they name a field they contradict

    checked_once(folder, [HEADER, *(f"{name}.npy" for name in ARRAYS[kind])], checks)


def load_phrase_table(folder: Path, log_scores: bool) -> dict[str, Any]:
    """The attributes of a :class:`~pysmt.models.phrase_table.PhraseTable` read from a binary folder."""
    header = phrase_table_header(folder, log_scores)
    arrays = open_table(folder, PHRASE_TABLE, header)
    counts = header_counts(folder, PHRASE_TABLE, header, ("sources", "entries", "vocabulary", "alignments"))
    num_scores = header.get("num_scores")
    if not isinstance(num_scores, int):
        raise unusable(folder, PHRASE_TABLE, f"{HEADER} lacks num_scores")
    max_source_length = header.get("max_source_length")
    checked(
        folder,
        PHRASE_TABLE,
        header,
        lambda: check_phrase_arrays(folder, PHRASE_TABLE, arrays, counts, num_scores, max_source_length),
    )
    return {
        "num_scores": num_scores,
        "max_source_length": max_source_length,
        "sources": stored_strings(arrays, "source", arrays["source_slots"]),
        "vocabulary": stored_strings(arrays, "vocab"),
        "alignments": stored_strings(arrays, "alignment"),
        "target_ids": arrays["target_ids"],
        "scores": arrays["scores"],
        "target_start": arrays["target_start"],
        "target_len": arrays["target_len"],
        "alignment_id": arrays["alignment_id"],
        "block_start": arrays["block_start"],
        "header": header,
    }


def load_reordering_table(folder: Path, num_scores: int, source_only: bool) -> dict[str, Any]:
    """The attributes of a :class:`~pysmt.models.reordering_table.ReorderingTable` read from a binary folder."""
    header = reordering_table_header(folder, num_scores, source_only)
    arrays = open_table(folder, REORDERING_TABLE, header)
    keys = header_counts(folder, REORDERING_TABLE, header, ("keys",))["keys"]
    checked(
        folder,
        REORDERING_TABLE,
        header,
        lambda: check_reordering_arrays(folder, REORDERING_TABLE, arrays, keys, num_scores),
    )
    return {"rows": stored_strings(arrays, "key"), "scores": arrays["scores"], "header": header}


def target_vocabulary(folder: Path) -> set[str] | None:
    """The target words of a binary phrase table, from its two vocabulary arrays alone (None where they cannot
    be read: loading the table will say why). Read in Python, so an unchecked table cannot crash this, in
    milliseconds: what a neural model's vocabulary is compared with before any table loads."""
    try:
        blob = bytes(np.load(folder / "vocab_blob.npy", mmap_mode="r", allow_pickle=False))
        offsets = np.load(folder / "vocab_offsets.npy", mmap_mode="r", allow_pickle=False).tolist()
    except (OSError, ValueError):
        return None
    return {blob[start:end].decode("utf-8", errors="replace") for start, end in zip(offsets, offsets[1:])}


def stored_scores(folder: Path) -> dict[str, tuple[np.ndarray, dict[str, Any]]]:
    """The scores stored with a binary phrase table, by name: (memory-mapped array, its record). Nothing for
    a text table; a stored file that does not fit the table is an error naming it."""
    found: dict[str, tuple[np.ndarray, dict[str, Any]]] = {}
    stored = Path(folder) / STORED
    if not stored.is_dir():
        return found
    entries = read_header(Path(folder)).get("counts", {}).get("entries")
    for record_path in sorted(stored.glob("[!.]*.json")):  # not the hidden files of scores being written
        array_path = record_path.with_suffix(".npy")
        try:
            record = read_json(record_path)
            values = np.load(array_path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError, EOFError, UnicodeDecodeError) as err:
            raise PysmtError(f"{array_path}: unreadable stored scores ({err}); store them again") from None
        if (
            not isinstance(record, dict)
            or values.dtype != np.float32
            or values.ndim != 2
            or values.shape != (entries, record.get("scores"))
        ):
            raise PysmtError(
                f"{array_path}: stored scores of shape {list(values.shape)} and type {values.dtype}, "
                f"but the table has {entries} entries (its record says {record.get('scores')!r} "
                "scores each); store them again"
            )
        found[record_path.stem] = (np.asarray(values), record)
    return found
