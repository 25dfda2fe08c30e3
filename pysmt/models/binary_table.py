"""Binarized phrase and reordering tables: a folder of memory-mapped numpy arrays (``pysmt binarize``):
the format, and loading it. Writing one, within a memory budget, is :mod:`pysmt.models.binary_writer`'s.

In the spirit of Moses' compact tables and KenLM's binary format: a table is parsed once, by the
text loaders (so scores are the very values a text table gives), and written as arrays that later
loads map into memory instead of parsing. Loading takes milliseconds whatever the table's size,
only the pages a lookup touches are read, and those pages are the operating system's file cache:
forked ``--threads`` workers (and several decoders on one machine) share one copy.

A binary table is a folder::

    header.json        {"format": "pysmt-binary-table", "version": 1, "kind": ..., "num_scores": ...,
                        "source": {"path", "size", "mtime_ns"}, "counts": {...}, "arrays": {name: dtype, shape}}
    NAME.npy           the arrays below (``np.load(mmap_mode="r")``)

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
version is reported as one line naming the folder.

Stored scores: a feature may store its scores of a binary phrase table's entries in the folder, so
the decoder reads them instead of computing them (``pysmt rnn score`` stores the RNN's):
``stored/NAME.npy`` (float32, entries x scores, NaN where an entry has none) beside
``stored/NAME.json`` (what made them: ``{"entries": ..., "scores": ..., "made_by": {...}}``, which the
feature checks against itself). They are written by :class:`pysmt.models.binary_writer.ScoreWriter`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from pysmt._core import StringIndex
from pysmt.errors import PysmtError

FORMAT = "pysmt-binary-table"
VERSION = 1
HEADER = "header.json"
STORED = "stored"
PHRASE_TABLE = "phrase-table"
REORDERING_TABLE = "reordering-table"

#: The arrays of each kind, with their dtypes and number of dimensions.
ARRAYS: dict[str, dict[str, tuple[str, int]]] = {
    PHRASE_TABLE: {
        "source_blob": ("|u1", 1), "source_offsets": ("<i8", 1), "source_slots": ("<u4", 1), "block_start": ("<i8", 1),
        "target_start": ("<i8", 1), "target_len": ("<i4", 1), "target_ids": ("<i4", 1),
        "vocab_blob": ("|u1", 1), "vocab_offsets": ("<i8", 1), "scores": ("<f4", 2), "alignment_id": ("<i4", 1),
        "alignment_blob": ("|u1", 1), "alignment_offsets": ("<i8", 1),
    },
    REORDERING_TABLE: {"key_blob": ("|u1", 1), "key_offsets": ("<i8", 1), "scores": ("<f8", 2)},
}


def stored_strings(arrays: dict[str, np.ndarray], prefix: str, slots: np.ndarray | None = None) -> StringIndex:
    """The strings ``PREFIX_blob``/``PREFIX_offsets`` of a table, found through ``slots`` (their hash index)
    or, without, by binary search (they are sorted): a view of the mapped arrays, nothing copied."""
    return StringIndex(blob=arrays[f"{prefix}_blob"], offsets=arrays[f"{prefix}_offsets"],
                       slots=np.zeros(0, np.uint32) if slots is None else slots)


def unusable(folder: Path, kind: str, reason: str) -> PysmtError:
    return PysmtError(f"{folder}: not a usable binary {kind} ({reason}); rebuild it with `pysmt binarize`")


def read_header(folder: Path) -> dict[str, Any]:
    """The header of a binary table folder (any kind), or an error naming the folder."""
    path = folder / HEADER
    try:
        header = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PysmtError(f"{folder}: a folder, but not a binary table (no {HEADER}); a table is a text or gzip "
                         "file or a folder written by `pysmt binarize`") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise unusable(folder, "table", f"{HEADER} is unreadable: {err}") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise unusable(folder, "table", f"{HEADER} is not a {FORMAT} header")
    return header


def open_table(folder: Path, kind: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Map a binary table's arrays (read-only, shared pages) after checking its header and their shapes."""
    header = read_header(folder)
    if header.get("version") != VERSION:
        raise unusable(folder, kind, f"format version {header.get('version')!r}, this pysmt reads version {VERSION}")
    if header.get("kind") != kind:
        raise unusable(folder, kind, f"it holds a {header.get('kind')!r}")
    recorded = header.get("arrays")
    if not isinstance(recorded, dict):
        raise unusable(folder, kind, f"{HEADER} lists no arrays")
    arrays = {}
    for name, (dtype, ndim) in ARRAYS[kind].items():
        path = folder / f"{name}.npy"
        if not path.is_file():
            raise unusable(folder, kind, f"{path.name} is missing")
        try:
            array = np.load(path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError, EOFError) as err:
            raise unusable(folder, kind, f"{path.name} is unreadable or truncated: {err}") from None
        expected = recorded.get(name, {})
        if array.dtype != np.dtype(dtype) or array.ndim != ndim or list(array.shape) != expected.get("shape"):
            raise unusable(folder, kind, f"{path.name} has dtype {array.dtype} and shape {list(array.shape)}, "
                                         f"the header says {expected.get('dtype')} {expected.get('shape')}")
        arrays[name] = np.asarray(array)  # a plain ndarray view of the map: cheaper to index than np.memmap
    return header, arrays


def check(folder: Path, kind: str, condition: bool, reason: str) -> None:
    if not condition:
        raise unusable(folder, kind, reason)


def check_strings(folder: Path, kind: str, arrays: dict[str, np.ndarray], prefix: str, count: int) -> None:
    blob, offsets = arrays[f"{prefix}_blob"], arrays[f"{prefix}_offsets"]
    check(folder, kind, len(offsets) == count + 1 and offsets[0] == 0 and offsets[-1] == len(blob),
          f"{prefix}_offsets do not match {prefix}_blob")


def check_values(folder: Path, kind: str, arrays: dict[str, np.ndarray], id_limits: dict[str, int]) -> None:
    """Refuse a table whose scores are not all finite or whose ids reach outside what they index.

    A damaged file (a bad disk, a partial copy) would otherwise give empty translations or an
    IndexError deep in the search. The checks read each array once (tens of milliseconds for a
    news-sized table).
    """
    check(folder, kind, bool(np.isfinite(arrays["scores"]).all()),
          "scores.npy holds nan or infinite values (damaged? binarize the text table again)")
    for name, limit in id_limits.items():
        values = arrays[name]
        if len(values):
            low, high = int(values.min()), int(values.max())
            check(folder, kind, 0 <= low and high < limit,
                  f"{name}.npy holds ids from {low} to {high}, outside 0..{limit - 1} (damaged? binarize the "
                  "text table again)")


def load_phrase_table(folder: Path, log_scores: bool) -> dict[str, Any]:
    """The attributes of a :class:`~pysmt.models.phrase_table.PhraseTable` read from a binary folder."""
    header, arrays = open_table(folder, PHRASE_TABLE)
    if bool(header.get("log_scores")) != log_scores:
        made = "true" if header.get("log_scores") else "false"
        raise PysmtError(f"{folder}: binarized with log-scores = {made}, but the feature says "
                         f"log-scores = {str(log_scores).lower()}; binarize the text table again with this setting")
    counts = header.get("counts", {})
    sources, entries = counts.get("sources"), counts.get("entries")
    num_scores = header.get("num_scores")
    if not (isinstance(sources, int) and isinstance(entries, int) and isinstance(num_scores, int)):
        raise unusable(folder, PHRASE_TABLE, f"{HEADER} lacks counts or num_scores")
    check_strings(folder, PHRASE_TABLE, arrays, "source", sources)
    check(folder, PHRASE_TABLE, len(arrays["source_slots"]) == max(2 * sources, 1), "source_slots has the wrong size")
    check_strings(folder, PHRASE_TABLE, arrays, "vocab", counts.get("vocabulary", -1))
    check_strings(folder, PHRASE_TABLE, arrays, "alignment", counts.get("alignments", -1))
    block_start = arrays["block_start"]
    check(folder, PHRASE_TABLE, len(block_start) == sources + 1 and block_start[-1] == entries,
          "block_start is inconsistent")
    for name in ("target_start", "target_len", "alignment_id"):
        check(folder, PHRASE_TABLE, len(arrays[name]) == entries, f"{name} has {len(arrays[name])} rows, not {entries}")
    check(folder, PHRASE_TABLE, arrays["scores"].shape == (entries, max(num_scores, 1)), "scores has the wrong shape")
    if entries:
        end = int(arrays["target_start"][-1]) + int(arrays["target_len"][-1])
        check(folder, PHRASE_TABLE, end == len(arrays["target_ids"]), "target_ids is inconsistent")
    check_values(folder, PHRASE_TABLE, arrays, {"target_ids": counts.get("vocabulary", 0),
                                                "alignment_id": counts.get("alignments", 0),
                                                "block_start": entries + 1})
    if entries:
        ends = arrays["target_start"].astype(np.int64) + arrays["target_len"]
        check(folder, PHRASE_TABLE, int(arrays["target_start"].min()) >= 0 and int(ends.max()) <= end,
              "target_start.npy or target_len.npy points outside target_ids.npy")
    return {
        "num_scores": num_scores, "max_source_length": int(header.get("max_source_length", 0)),
        "sources": stored_strings(arrays, "source", arrays["source_slots"]),
        "vocabulary": stored_strings(arrays, "vocab"), "alignments": stored_strings(arrays, "alignment"),
        "target_ids": arrays["target_ids"], "scores": arrays["scores"], "target_start": arrays["target_start"],
        "target_len": arrays["target_len"], "alignment_id": arrays["alignment_id"], "block_start": block_start,
        "header": header,
    }


def load_reordering_table(folder: Path, num_scores: int, source_only: bool) -> dict[str, Any]:
    """The attributes of a :class:`~pysmt.models.reordering_table.ReorderingTable` read from a binary folder."""
    header, arrays = open_table(folder, REORDERING_TABLE)
    made = (header.get("num_scores"), bool(header.get("source_only")))
    if made != (num_scores, source_only):
        def describe(n: Any, f: bool) -> str:
            return f"{n} scores keyed by {'source phrase' if f else 'phrase pair'}"
        raise PysmtError(f"{folder}: a binary reordering table of {describe(*made)}, but the feature's model needs "
                         f"{describe(num_scores, source_only)}")
    count = header.get("counts", {}).get("keys")
    check(folder, REORDERING_TABLE, isinstance(count, int), f"{HEADER} lacks counts")
    check_strings(folder, REORDERING_TABLE, arrays, "key", count)
    check(folder, REORDERING_TABLE, arrays["scores"].shape == (count, num_scores), "scores has the wrong shape")
    check_values(folder, REORDERING_TABLE, arrays, {})
    return {"rows": stored_strings(arrays, "key"), "scores": arrays["scores"], "header": header}


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
            record = json.loads(record_path.read_text(encoding="utf-8"))
            values = np.load(array_path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError, EOFError, UnicodeDecodeError) as err:
            raise PysmtError(f"{array_path}: unreadable stored scores ({err}); store them again") from None
        if (not isinstance(record, dict) or values.dtype != np.float32 or values.ndim != 2
                or values.shape != (entries, record.get("scores"))):
            raise PysmtError(f"{array_path}: stored scores of shape {list(values.shape)} and type {values.dtype}, "
                             f"but the table has {entries} entries (its record says {record.get('scores')!r} "
                             "scores each); store them again")
        found[record_path.stem] = (np.asarray(values), record)
    return found
