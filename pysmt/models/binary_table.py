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
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pysmt.errors import PysmtError

FORMAT = "pysmt-binary-table"
VERSION = 1
HEADER = "header.json"
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


class StringArray(Sequence[str]):
    """Strings stored as one UTF-8 blob plus offsets, read from the (memory-mapped) arrays on demand."""

    def __init__(self, blob: np.ndarray, offsets: np.ndarray) -> None:
        # memoryviews index and slice in C: far cheaper per probe than numpy scalars, and still no copy.
        self._blob = blob.data
        self._offsets = offsets.data
        self._count = len(offsets) - 1

    def __len__(self) -> int:
        return self._count

    def encoded(self, index: int) -> bytes:
        offsets = self._offsets
        return self._blob[offsets[index]:offsets[index + 1]].tobytes()

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[k] for k in range(*index.indices(self._count))]
        index = int(index)
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        return self.encoded(index).decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        for index in range(self._count):
            yield self.encoded(index).decode("utf-8")


class SortedStrings(StringArray):
    """A :class:`StringArray` sorted by UTF-8 bytes: a read-only mapping from string to its index.

    It stands in for the ``dict[str, int]`` (source phrase to id) of the text tables: ``get``,
    ``in``, ``len`` and iteration (in sorted order) work alike. Also usable as a vocabulary: ``words``.
    With ``slots`` (see :func:`hash_slots`) ``get`` probes the hash index instead of searching.
    """

    def __init__(self, blob: np.ndarray, offsets: np.ndarray, slots: np.ndarray | None = None) -> None:
        super().__init__(blob, offsets)
        self._slots = None if slots is None else slots.data

    def search(self, target: bytes, low: int, high: int) -> int:
        """The first index in ``[low, high)`` whose string is not below ``target`` (bytes order)."""
        blob, offsets = self._blob, self._offsets
        while low < high:
            middle = (low + high) // 2
            if blob[offsets[middle]:offsets[middle + 1]].tobytes() < target:
                low = middle + 1
            else:
                high = middle
        return low

    def get(self, key: str, default: int | None = None) -> int | None:
        """The index of ``key``, or ``default``."""
        try:
            target = key.encode("utf-8")
        except UnicodeEncodeError:
            return default
        blob, offsets, slots = self._blob, self._offsets, self._slots
        if slots is None:
            index = self.search(target, 0, self._count)
            return index if index < self._count and self.encoded(index) == target else default
        size = len(slots)
        slot = zlib.crc32(target) % size
        for _ in range(size):  # (an empty slot always comes first, unless the file was damaged)
            index = slots[slot]
            if not index:
                break
            if blob[offsets[index - 1]:offsets[index]].tobytes() == target:
                return index - 1
            slot = slot + 1 if slot + 1 < size else 0
        return default

    def prefix_dict(self, prefix: str) -> dict[str, int]:
        """The strings that start with ``prefix`` (contiguous, being sorted), without it, mapped to their indices."""
        encoded = prefix.encode("utf-8", "surrogatepass")
        low = self.search(encoded, 0, self._count)
        high = self.search(encoded + b"\xff", low, self._count)  # no UTF-8 string holds the byte 0xff
        bounds = self._offsets[low:high + 1].tolist()
        if len(bounds) < 2:
            return {}
        base, skip = bounds[0], len(encoded)
        data = self._blob[base:bounds[-1]].tobytes()
        return {data[start - base + skip:end - base].decode("utf-8"): index
                for index, start, end in zip(range(low, high), bounds, bounds[1:])}

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    @property
    def words(self) -> SortedStrings:
        return self


class DecodedStrings(dict):
    """The strings of a :class:`StringArray` by index, decoded once, on first use (a list's ``[]`` and ``len``)."""

    def __init__(self, strings: StringArray) -> None:
        super().__init__()
        self.strings = strings

    def __missing__(self, index: int) -> str:
        value = self[index] = self.strings[index]
        return value

    def __len__(self) -> int:
        return len(self.strings)


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
    vocabulary = SortedStrings(arrays["vocab_blob"], arrays["vocab_offsets"])
    return {
        "num_scores": num_scores, "max_source_length": int(header.get("max_source_length", 0)),
        "sources": SortedStrings(arrays["source_blob"], arrays["source_offsets"], arrays["source_slots"]),
        "target_vocab": vocabulary, "target_words": DecodedStrings(vocabulary),
        "alignments": DecodedStrings(StringArray(arrays["alignment_blob"], arrays["alignment_offsets"])),
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
    return {"rows": SortedStrings(arrays["key_blob"], arrays["key_offsets"]), "scores": arrays["scores"],
            "header": header, "_pairs_of": (None, {})}
