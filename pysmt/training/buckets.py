"""Scoring phrase pairs within a memory budget: occurrences cut into buckets on disk.

The extract step writes every occurrence to disk as it is found (:data:`OCCURRENCE` records, in
corpus order). The score step cuts them into B bucket files twice, a chunk at a time, with B such
that one bucket can be counted in the budget: first by target phrase hash, where each bucket, read
whole, gives every occurrence its target phrase's count, count(e); then, with that count attached
(:data:`BUCKETED` records), by source phrase hash. Each source bucket holds all the occurrences of
its source phrases, which is what counting needs (count(f), each pair's counts and alignment): it is
counted and scored with the in-memory code (:func:`count_pairs`, :func:`write_runs`), its table
lines sorted in runs, and all runs are merged at the end, as Moses' ``extract | sort | score |
consolidate`` does on disk. Nothing held grows with the corpus but the corpus itself (its word ids
and alignments) and the lexicon. Every choice counting makes depends on a pair's occurrences, not
their order, so the tables are byte-identical at any budget. The disk holds up to about 2.2 times
the occurrence file at once (36 bytes an occurrence, plus 44 in a bucket).

Measured (``bench/pair_counting.py``, the news preset's 9.36 M occurrences and 4 times that): hash
buckets counted with numpy 7.5 s / 753 MB and 31.7 s / 1,100 MB, DuckDB 9.2 s / 752 MB and 46.2 s /
905 MB, Polars' streaming engine 3.3 s / 1,625 MB and 16.1 s / 4,189 MB, numpy in memory 7.0 s /
1,436 MB and 28.1 s / 5,709 MB (docs/results.md): buckets keep today's counting code, its speed and
its results, with no new dependency.
"""

from __future__ import annotations

import ctypes
import math
import sys
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import BinaryIO

import numpy as np
from tqdm import tqdm

from pysmt.files.textio import scratch_folder, write_array
from pysmt.training.corpus import AlignedCorpus
from pysmt.training.extraction import OCCURRENCE, OCCURRENCE_FIELDS, PhraseInstances
from pysmt.training.lexical import Lexicon
from pysmt.training.scoring import RUN_SIZE, count_pairs, merge_runs, write_runs

#: Memory counting one occurrence takes (its record, the lexsort, sorted copies, masks), measured.
COUNTING_BYTES = 200
#: The share of the budget a bucket's counting may take; the rest holds the corpus, the lexicon and
#: the workers that format table lines.
BUCKET_SHARE = 0.35
#: Memory formatting and sorting one pair's table lines takes in a worker, measured.
FORMATTING_BYTES = 400
#: The share of the budget the workers formatting table lines take together.
FORMATTING_SHARE = 0.3
#: Records read at once while cutting the occurrences into buckets (36 MB).
CHUNK = 1 << 20


def bucket_count(occurrences: int, budget: int) -> int:
    return max(1, math.ceil(occurrences * COUNTING_BYTES / (BUCKET_SHARE * budget)))


def run_size(budget: int, processes: int) -> int:
    """Pairs per sorted run, so that ``processes`` workers formatting runs fit their share of ``budget``."""
    return max(1000, min(RUN_SIZE, int(FORMATTING_SHARE * budget / processes / FORMATTING_BYTES)))


def give_back_freed_memory() -> None:
    """Return the heap's free pages to the system: glibc keeps freed blocks of the sizes a bucket used
    (its mmap threshold grows with them), which the next bucket and the forked workers would carry."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).malloc_trim(0)


#: An occurrence in a source bucket: its record and its target phrase's count(e).
BUCKETED = np.dtype([*OCCURRENCE_FIELDS, ("count_e", "<i8")])


def chunks(path: Path, dtype: np.dtype) -> Iterator[np.ndarray]:
    """The records of a file, :data:`CHUNK` at a time."""
    with open(path, "rb") as source:
        while (records := np.fromfile(source, dtype=dtype, count=CHUNK)).size:
            yield records


def cut(records: np.ndarray, key: str, handles: Sequence[BinaryIO]) -> None:
    """Append each record to the file of its bucket, ``records[key] % len(handles)``, keeping their order."""
    bucket = records[key].astype(np.uint64) % np.uint64(len(handles))
    order = np.argsort(bucket, kind="stable")
    bounds = np.searchsorted(bucket[order], np.arange(len(handles) + 1, dtype=np.uint64))
    for b, handle in enumerate(handles):
        write_array(records[order[bounds[b] : bounds[b + 1]]], handle)


def spill_buckets(occurrences: Path, buckets: int, folder: Path) -> list[Path]:
    """Cut the records of ``occurrences`` into ``buckets`` files of :data:`BUCKETED` records in
    ``folder`` by source hash, each with its count(e) (found in ``buckets`` files by target hash)."""
    by_target = [folder / f"target{b}" for b in range(buckets)]
    with ExitStack() as stack:
        handles = [stack.enter_context(open(path, "wb")) for path in by_target]
        for records in chunks(occurrences, OCCURRENCE):
            cut(records, "tgt_hash", handles)
    by_source = [folder / f"source{b}" for b in range(buckets)]
    with ExitStack() as stack:
        handles = [stack.enter_context(open(path, "wb")) for path in by_source]
        for path in by_target:
            records = np.fromfile(path, dtype=OCCURRENCE)
            path.unlink()
            bucketed = np.empty(len(records), dtype=BUCKETED)
            for name, _ in OCCURRENCE_FIELDS:
                bucketed[name] = records[name]
            del records
            _, inverse, counts = np.unique(bucketed["tgt_hash"], return_inverse=True, return_counts=True)
            bucketed["count_e"] = counts[inverse]
            del inverse
            cut(bucketed, "src_hash", handles)
    return by_source


def score_occurrences(
    occurrences: Path,
    corpus: AlignedCorpus,
    lexicon: Lexicon,
    phrase_table: Path,
    reordering_table: Path | None,
    budget: int,
    processes: int = 2,
    progress: tqdm | None = None,
    temp_dir: Path | None = None,
) -> int:
    """Write the phrase and reordering tables of the occurrence file ``occurrences`` within ``budget``
    bytes; return the number of distinct pairs. Temporary files go in a hidden folder in ``temp_dir``
    (default: beside the phrase table), removed at the end, also after a failure."""
    total = occurrences.stat().st_size // OCCURRENCE.itemsize
    with scratch_folder(phrase_table, temp_dir) as folder:
        paths = spill_buckets(occurrences, bucket_count(total, budget), folder)
        runs, pairs = [], 0
        for b, path in enumerate(paths):
            records = np.fromfile(path, dtype=BUCKETED)
            path.unlink()
            instances = PhraseInstances.from_records(records)
            target_counts = np.ascontiguousarray(records["count_e"])
            del records
            counted = count_pairs(instances, corpus, target_counts)
            del target_counts
            give_back_freed_memory()
            runs += write_runs(
                instances,
                corpus,
                counted,
                lexicon,
                folder / f"bucket{b}",
                processes,
                progress,
                run_size(budget, processes),
            )
            pairs += len(counted)
            del instances, counted
            give_back_freed_memory()
        merge_runs(runs, phrase_table, reordering_table)
    return pairs
