"""Binarizing a text table within a memory budget (``pysmt binarize --memory``): an external sort.

The binary format (:mod:`pysmt.models.binary_table`) stores entries sorted by key, so binarizing is
sorting. The text table is read once: each entry becomes a record ``KEY \\0 NUMBER \\t PAYLOAD``
(the key is the source phrase or the reordering key; the zero-padded entry number keeps a key's
entries in file order), records are sorted in runs that fit the budget, runs spilled to disk are
merged (as Moses' ``sort -S``, and ``pysmt train``'s scoring, do), and the merged stream is
written as the table's arrays a chunk at a time. What the format needs whole stays in memory: the
target vocabulary and the interned alignments (ids given in file order, as the text loader gives
them), and the sources' hash index (8 bytes a source). The arrays are the ones the text loader's
values give, so lookups score bit for bit as the text table does.
"""

from __future__ import annotations

import errno
import heapq
import json
import os
import shutil
import tempfile
import zlib
from array import array
from binascii import unhexlify
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from pysmt.errors import PysmtError, at_line
from pysmt.files.progress import progress_bar
from pysmt.files.textio import (
    atomic_writer,
    current_umask,
    failed_writes_reported,
    read_json,
    scratch_folder,
    temporary_folder,
    write_array,
)
from pysmt.models.binary_checks import CHECKSUM, HEADER_CHECKSUM, file_checksum, header_checksum
from pysmt.models.binary_table import (
    ARRAYS,
    FORMAT,
    HEADER,
    PHRASE_TABLE,
    REORDERING_TABLE,
    STORED,
    VERSION,
    read_header,
)
from pysmt.models.phrase_table import phrase_entries
from pysmt.models.reordering_table import reordering_entries
from pysmt.models.scores import log_probabilities
from pysmt.models.vocabulary import Vocabulary

#: What a record costs in memory beyond its bytes (the bytes object and its list slot), measured.
RECORD_OVERHEAD = 80
#: The share of the budget the records of one run take (the rest: vocabulary, hash index, buffers).
RUN_SHARE = 0.5
#: Values an array buffers before writing them.
BUFFER = 1 << 16


class SortedRuns:
    """Byte records sorted in runs of at most ``budget`` bytes, spilled to files in ``folder``, merged in order."""

    def __init__(self, folder: Path, budget: int) -> None:
        self.folder, self.budget = folder, budget
        self.records: list[bytes] = []
        self.size = 0
        self.runs: list[Path] = []
        self.count = 0

    def add(self, record: bytes) -> None:
        self.records.append(record)
        self.size += len(record) + RECORD_OVERHEAD
        self.count += 1
        if self.size > self.budget:
            self.spill()

    def spill(self) -> None:
        self.records.sort()
        path = self.folder / f"run{len(self.runs)}"
        with open(path, "wb") as out:
            out.writelines(self.records)
        self.runs.append(path)
        self.records, self.size = [], 0

    def merged(self) -> Iterator[bytes]:
        """Every record, in byte order (records end in a newline)."""
        if not self.runs:
            self.records.sort()
            yield from self.records
            return
        if self.records:
            self.spill()
        handles = [open(path, "rb") for path in self.runs]
        try:
            yield from heapq.merge(*handles)
        finally:
            for handle in handles:
                handle.close()


class ArrayWriter:
    """One array of a table, written as it is produced: values to a side file, then as ``NAME.npy``.

    Values arrive as Python numbers or raw machine bytes of type ``source`` (an ``array`` type code:
    ``q`` int64, ``i`` int32, ``d`` float64, ``B`` bytes) and are written, in rows of ``width`` if
    given, as ``dtype`` after ``convert`` (applied to a whole buffer at once).
    """

    def __init__(
        self,
        folder: Path,
        name: str,
        dtype: str,
        source: str = "q",
        width: int = 0,
        convert: Callable[[np.ndarray], np.ndarray] | None = None,
    ) -> None:
        self.path, self.raw_path = folder / f"{name}.npy", folder / f"{name}.raw"
        self.dtype, self.source, self.width, self.convert = np.dtype(dtype), source, width, convert
        self.raw: BinaryIO = open(self.raw_path, "wb")
        self.buffer = array(source)
        self.count = 0

    def append(self, value: Any) -> None:
        self.buffer.append(value)
        if len(self.buffer) >= BUFFER:
            self.flush()

    def extend_raw(self, data: bytes) -> None:
        """Append values given as their machine bytes (of type ``source``)."""
        self.buffer.frombytes(data)
        if len(self.buffer) >= BUFFER:
            self.flush()

    def flush(self) -> None:
        values = np.frombuffer(self.buffer, dtype=self.buffer.typecode) if self.buffer else np.zeros(0, self.source)
        if self.width:
            values = values.reshape(-1, self.width)
        values = (self.convert(values) if self.convert else values).astype(self.dtype)
        write_array(values, self.raw)
        self.count += len(values)
        self.buffer = array(self.source)

    def finish(self) -> None:
        """Write ``NAME.npy`` (header, then the values) and remove the side file."""
        self.flush()
        self.raw.close()
        shape = (self.count, self.width) if self.width else (self.count,)
        with open(self.path, "wb") as out, open(self.raw_path, "rb") as raw:
            np.lib.format.write_array_header_1_0(out, {"descr": self.dtype.str, "fortran_order": False, "shape": shape})
            shutil.copyfileobj(raw, out, 1 << 20)
        self.raw_path.unlink()


def write_strings(folder: Path, prefix: str, strings: Iterable[bytes]) -> int:
    """``PREFIX_blob.npy`` and ``PREFIX_offsets.npy`` of ``strings`` in the given order; return their count."""
    blob, offsets = ArrayWriter(folder, f"{prefix}_blob", "|u1", "B"), ArrayWriter(folder, f"{prefix}_offsets", "<i8")
    end = 0
    offsets.append(0)
    for data in strings:
        blob.extend_raw(data)
        end += len(data)
        offsets.append(end)
    blob.finish()
    offsets.finish()
    return offsets.count - 1


def stored_strings(folder: Path, prefix: str) -> Iterator[bytes]:
    """The strings :func:`write_strings` stored, read back a chunk at a time (with reads, not a memory
    map, whose pages would stay counted in this process's memory)."""
    with open(folder / f"{prefix}_offsets.npy", "rb") as offsets, open(folder / f"{prefix}_blob.npy", "rb") as blob:
        for handle in (offsets, blob):  # past the headers ArrayWriter wrote (version 1.0)
            np.lib.format.read_magic(handle)
            np.lib.format.read_array_header_1_0(handle)
        start = 0
        np.fromfile(offsets, dtype="<i8", count=1)  # the leading 0
        while ends := np.fromfile(offsets, dtype="<i8", count=BUFFER).tolist():
            data = blob.read(ends[-1] - start)
            base = start
            for end in ends:
                yield data[start - base : end - base]
                start = end


def record_key(key: str, number: int, path: Path, line_no: int) -> bytes:
    if "\0" in key:
        raise at_line(path, line_no, "a NUL character in a phrase")
    return key.encode("utf-8") + b"\0" + b"%012d" % number + b"\t"


def merged_fields(runs: SortedRuns, description: str) -> Iterator[tuple[bytes, list[bytes]]]:
    """``(key, payload fields)`` of each record in key order, with a progress bar."""
    for record in progress_bar(runs.merged(), total=runs.count, desc=description, unit=" entries", delay=2):
        key, _, rest = record.partition(b"\0")
        yield key, rest[:-1].split(b"\t")[1:]


def write_phrase_table(text_path: Path, folder: Path, log_scores: bool, budget: int, scratch: Path) -> dict[str, Any]:
    """The arrays of a phrase table in ``folder``; return the header's fields (counts and settings)."""
    vocabulary, alignments = Vocabulary(), Vocabulary()
    runs = SortedRuns(scratch, int(RUN_SHARE * budget))
    num_scores = max_source_length = 0
    for number, (line_no, source, words, alignment, values) in enumerate(phrase_entries(text_path, log_scores)):
        num_scores = len(values)
        max_source_length = max(max_source_length, source.count(" ") + 1)
        ids = array("i", [vocabulary.add(word) for word in words]).tobytes().hex()
        runs.add(
            record_key(source, number, text_path, line_no)
            + f"{ids}\t{alignments.add(alignment)}\t{array('d', values).tobytes().hex()}\n".encode()
        )
    words = vocabulary.words
    order = sorted(range(len(words)), key=words.__getitem__)  # code point order is UTF-8 byte order
    new_id = np.empty(len(words), dtype=np.int64)
    new_id[np.asarray(order, dtype=np.int64)] = np.arange(len(words))
    arrays = {
        name: ArrayWriter(folder, name, dtype)
        for name, dtype in (
            ("block_start", "<i8"),
            ("target_start", "<i8"),
            ("target_len", "<i4"),
            ("alignment_id", "<i4"),
        )
    }
    target_ids = ArrayWriter(folder, "target_ids", "<i4", "i", convert=new_id.__getitem__)
    scores = ArrayWriter(folder, "scores", "<f4", "d", max(num_scores, 1), None if log_scores else log_probabilities)
    start = entries = 0

    def distinct_sources() -> Iterator[bytes]:
        nonlocal start, entries
        last = None
        for key, (ids, alignment_id, values) in merged_fields(runs, f"sort {text_path.name}"):
            if key != last:
                arrays["block_start"].append(entries)
                last = key
                yield key
            length = len(ids) // 8  # hex digits of int32 ids
            arrays["target_start"].append(start)
            arrays["target_len"].append(length)
            target_ids.extend_raw(unhexlify(ids))
            arrays["alignment_id"].append(int(alignment_id))
            scores.extend_raw(unhexlify(values))
            start += length
            entries += 1

    count = write_strings(folder, "source", distinct_sources())
    arrays["block_start"].append(entries)
    for writer in (*arrays.values(), target_ids, scores):
        writer.finish()
    slots = hash_slots(stored_strings(folder, "source"), count)
    np.save(folder / "source_slots.npy", slots, allow_pickle=False)
    write_strings(folder, "vocab", (words[k].encode("utf-8") for k in order))
    write_strings(folder, "alignment", (a.encode("utf-8") for a in alignments.words))
    return {
        "num_scores": num_scores,
        "log_scores": log_scores,
        "max_source_length": max_source_length,
        "counts": {"sources": count, "entries": entries, "vocabulary": len(words), "alignments": len(alignments.words)},
    }


def write_reordering_table(
    text_path: Path, folder: Path, num_scores: int, source_only: bool, budget: int, scratch: Path
) -> dict[str, Any]:
    """The arrays of a reordering table in ``folder`` (a key given twice keeps its last line's scores,
    as the text loader does); return the header's fields."""
    runs = SortedRuns(scratch, int(RUN_SHARE * budget))
    for number, (line_no, key, values) in enumerate(reordering_entries(text_path, num_scores, source_only)):
        runs.add(record_key(key, number, text_path, line_no) + array("d", values).tobytes().hex().encode() + b"\n")
    scores = ArrayWriter(folder, "scores", "<f8", "d", num_scores, log_probabilities)

    def keys() -> Iterator[bytes]:
        for key, entries in groupby(merged_fields(runs, f"sort {text_path.name}"), key=itemgetter(0)):
            *_, (_, (values,)) = entries  # the key's last line in the file
            scores.extend_raw(unhexlify(values))
            yield key

    count = write_strings(folder, "key", keys())
    scores.finish()
    return {"num_scores": num_scores, "source_only": source_only, "counts": {"keys": count}}


def hash_slots(encoded: Iterable[bytes], count: int) -> np.ndarray:
    """The hash index of ``count`` distinct strings: ``max(2n, 1)`` uint32 slots holding index + 1 (0: empty).

    A string goes to slot ``crc32(bytes) % size`` or, if taken, the next free one (wrapping).
    """
    if count >= 2**32 - 1:
        raise PysmtError(f"{count:,} distinct phrases: more than the binary format's 2^32 - 2")
    size = max(2 * count, 1)
    slots = array("I", [0]) * size
    crc32 = zlib.crc32
    for index, data in enumerate(encoded, start=1):
        slot = crc32(data) % size
        while slots[slot]:
            slot = slot + 1 if slot + 1 < size else 0
        slots[slot] = index
    return np.frombuffer(slots, dtype=np.uint32)


def source_stamp(path: Path) -> dict[str, Any]:
    """What a binary table was made from: the text file's path, size and modification time."""
    stat = path.stat()
    return {"path": str(path.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def write_table(
    out_dir: Path, header: dict[str, Any], write_arrays: Callable[[Path], dict[str, Any]]
) -> dict[str, Any]:
    """Write a binary table folder: ``write_arrays(folder)`` writes the arrays (``NAME.npy``) into a
    temporary folder beside ``out_dir`` and returns the header's other fields; the folder is renamed
    when complete. Return the header.

    An earlier binary table of that name is replaced (also while a decoder maps it: its pages stay
    valid until unmapped); any other existing folder or file is refused.
    """
    with table_folder(Path(out_dir)) as tmp:
        header = {**header, **write_arrays(tmp), "arrays": {}}
        for name, (dtype, ndim) in ARRAYS[header["kind"]].items():
            array = np.load(tmp / f"{name}.npy", mmap_mode="r", allow_pickle=False)
            assert array.dtype == np.dtype(dtype) and array.ndim == ndim, name
            header["arrays"][name] = {
                "dtype": array.dtype.str,
                "shape": list(array.shape),
                CHECKSUM: file_checksum(tmp / f"{name}.npy"),
            }
            del array
        header[HEADER_CHECKSUM] = header_checksum(header)  # the settings and counts, not only the arrays
        with atomic_writer(tmp / HEADER) as out:
            out.write(json.dumps(header, indent=2) + "\n")
        for path in tmp.glob("*.npy"):
            os.chmod(path, 0o666 & ~current_umask())
    return header


@contextmanager
def table_folder(out_dir: Path) -> Iterator[Path]:
    """A temporary folder beside ``out_dir`` to make a table in, renamed to ``out_dir`` when the block ends well
    (an earlier binary table there replaced whole, never half; any other existing folder or file refused
    before anything is made); on failure nothing of it stays."""
    check_replaceable(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_folder(out_dir)
    old: Path | None = None
    try:
        with failed_writes_reported(out_dir):
            yield tmp
            os.chmod(tmp, 0o777 & ~current_umask())
            old = install_folder(tmp, out_dir)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
        if old is not None:
            shutil.rmtree(old)


def install_folder(tmp: Path, out_dir: Path) -> Path | None:
    """Rename the complete table ``tmp`` to ``out_dir``; an earlier table there is moved aside first, into the
    hidden folder returned (for the caller to remove once it no longer needs it), so that nothing is ever half
    replaced."""
    old = None
    if out_dir.exists():
        old = Path(tempfile.mkdtemp(dir=out_dir.parent, prefix=f".{out_dir.name}.", suffix=".old"))
        os.replace(out_dir, old / "table")
    os.replace(tmp, out_dir)
    return old


def link_table(folder: Path, out_dir: Path) -> dict[str, Any]:
    """Put a binary table already made at ``out_dir`` too, as hard links to its files (copies where ``out_dir``
    is on another file system); return its header.

    No time and no room, and ``out_dir`` is a table of its own: scores stored with it later (``rnn score``,
    written beside the arrays, never into them) stay out of ``folder``, whose system is unchanged. Scores
    stored with ``folder`` come along; a partial one (a hidden file, written in place) does not.
    """
    folder, out_dir = Path(folder), Path(out_dir)
    header = read_header(folder)
    with table_folder(out_dir) as tmp:
        for path in sorted(folder.rglob("*")):
            relative = path.relative_to(folder)
            if not path.is_file() or any(part.startswith(".") for part in relative.parts):
                continue
            target = tmp / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(path, target)
            except OSError as err:
                if err.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK):
                    raise
                shutil.copy2(path, target)
    return header


def check_replaceable(out_dir: Path) -> None:
    """Refuse to write a binary table where something other than an earlier binary table is."""
    if not out_dir.exists():
        return
    if not out_dir.is_dir():
        raise PysmtError(f"{out_dir}: exists and is not a folder; a binary table is a folder, choose another path")
    if any(out_dir.iterdir()) and not (out_dir / HEADER).is_file():
        raise PysmtError(f"{out_dir}: exists and is not a binary table; it will not be replaced, choose another path")


def binarize_table(
    text_path: str | Path,
    out_dir: str | Path,
    kind: str,
    *,
    log_scores: bool = False,
    num_scores: int | None = None,
    source_only: bool = False,
    memory: int = 1 << 30,
    temp_dir: Path | None = None,
) -> dict[str, Any]:
    """Binarize one text or gzip table into the folder ``out_dir`` within ``memory`` bytes; return the header.

    The table is read by its text loader's parser (errors name file and line; scores are the
    loader's values, bit for bit) and sorted on disk (:mod:`pysmt.models.binary_writer`): sorted
    runs go to a hidden folder in ``temp_dir`` (default: beside ``out_dir``), removed at the end.
    ``kind`` is ``"phrase-table"`` (with ``log_scores``) or ``"reordering-table"`` (with
    ``num_scores`` and ``source_only``, as the feature's model says).
    """
    text_path, out_dir = Path(text_path), Path(out_dir)
    if text_path.is_dir():
        raise PysmtError(f"{text_path}: is a folder; binarize takes a text or gzip table")
    if kind not in ARRAYS:
        raise ValueError(f"unknown table kind {kind!r}")
    if kind == REORDERING_TABLE and num_scores is None:
        raise ValueError("a reordering table needs num_scores")
    check_replaceable(out_dir)
    header: dict[str, Any] = {"format": FORMAT, "version": VERSION, "kind": kind, "source": source_stamp(text_path)}

    def write_arrays(folder: Path) -> dict[str, Any]:
        with scratch_folder(out_dir, temp_dir) as scratch:
            if kind == PHRASE_TABLE:
                return write_phrase_table(text_path, folder, log_scores, memory, scratch)
            return write_reordering_table(text_path, folder, num_scores or 0, source_only, memory, scratch)

    return write_table(out_dir, header, write_arrays)


class ScoreWriter:
    """Stores a feature's scores of a binary phrase table's entries (see :mod:`pysmt.models.binary_table`),
    chunk by chunk in entry order, resumably.

    Rows go to ``stored/.NAME.partial.npy`` as they come, with ``.NAME.partial.json`` saying how many are
    done and what makes them (``made_by``); :meth:`finish` renames both into place. A writer started
    again with the same ``made_by`` continues where the last one stopped (:attr:`done`); with another,
    it starts again.
    """

    def __init__(self, folder: Path, name: str, scores: int, made_by: dict[str, Any]) -> None:
        header = read_header(folder)
        if header.get("kind") != PHRASE_TABLE:
            raise PysmtError(f"{folder}: not a binary phrase table, where scores are stored")
        self.entries = int(header["counts"]["entries"])
        self.stored = folder / STORED
        self.stored.mkdir(exist_ok=True)
        self.name, self.scores, self.made_by = name, scores, made_by
        self.partial = self.stored / f".{name}.partial.npy"
        self.progress = self.stored / f".{name}.partial.json"
        self.done = 0
        try:
            previous = read_json(self.progress)
            if previous.get("made_by") == made_by and previous.get("scores") == scores:
                self.done = int(previous["done"])
        except (OSError, ValueError, KeyError, TypeError):
            pass
        if not self.done:
            self.record_progress()  # before the rows of another run are written over
        with failed_writes_reported(self.partial):
            self.values = np.lib.format.open_memmap(
                self.partial, mode="r+" if self.done else "w+", dtype=np.float32, shape=(self.entries, scores)
            )

    def write(self, rows: np.ndarray) -> None:
        """The next rows (entries x scores), then a record of how many are done."""
        with failed_writes_reported(self.partial):
            self.values[self.done : self.done + len(rows)] = rows
            self.values.flush()
        self.done += len(rows)
        self.record_progress()

    def record_progress(self) -> None:
        with atomic_writer(self.progress) as out:
            out.write(json.dumps({"done": self.done, "scores": self.scores, "made_by": self.made_by}) + "\n")

    def finish(self) -> Path:
        """Move the stored scores into place (the array, then its record); their path."""
        if self.done != self.entries:
            raise PysmtError(f"{self.partial}: {self.done} of {self.entries} entries scored")
        del self.values
        final = self.stored / f"{self.name}.npy"
        final.with_suffix(".json").unlink(missing_ok=True)  # scores without their record are not read
        os.replace(self.partial, final)
        with atomic_writer(final.with_suffix(".json")) as out:
            out.write(
                json.dumps({"entries": self.entries, "scores": self.scores, "made_by": self.made_by}, indent=2) + "\n"
            )
        self.progress.unlink()
        return final
