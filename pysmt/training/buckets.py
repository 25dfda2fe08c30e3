"""Scoring phrase pairs within a memory budget: occurrences cut into buckets by source phrase.

The extract step writes every occurrence to disk as it is found (:data:`OCCURRENCE` records, in
corpus order). The score step reads them back a chunk at a time and appends each to one of B bucket
files chosen by its source phrase's hash, with B such that one bucket can be counted in the budget;
then it counts and scores one bucket at a time with the in-memory code (:func:`count_pairs`,
:func:`write_runs`), which needs all the occurrences of a source phrase together (for count(f) and
each pair's counts and alignment) but only a table of target phrases for count(e), made during the
first pass. Each bucket's table lines are sorted in runs, and all runs are merged at the end, as
Moses' ``extract | sort | score | consolidate`` does on disk. Occurrences keep their corpus order
inside a bucket, so every choice the counting makes (a pair's representative alignment) is the one
it makes in memory, and the tables are byte-identical at any budget.

Measured (``bench/pair_counting.py``, the news preset's 9.36 M occurrences and 4 times that): hash
buckets counted with numpy 7.5 s / 753 MB and 31.7 s / 1,100 MB, DuckDB 9.2 s / 752 MB and 46.2 s /
905 MB, Polars' streaming engine 3.3 s / 1,625 MB and 16.1 s / 4,189 MB, numpy in memory 7.0 s /
1,436 MB and 28.1 s / 5,709 MB (docs/results.md): buckets keep today's counting code, its speed and
its results, with no new dependency.
"""

from __future__ import annotations

import ctypes
import math
import shutil
import sys
from pathlib import Path

import numpy as np
from tqdm import tqdm

from pysmt.textio import temporary_folder
from pysmt.training.corpus import AlignedCorpus
from pysmt.training.extraction import OCCURRENCE, PhraseInstances
from pysmt.training.lexical import LexicalTables
from pysmt.training.scoring import RUN_SIZE, TargetCounts, count_pairs, merge_runs, write_runs

#: Memory counting one occurrence takes (its record, the lexsort, sorted copies, masks), measured.
COUNTING_BYTES = 200
#: The share of the budget a bucket's counting may take; the rest holds the corpus, the lexical
#: tables, the target counts and the workers that format table lines.
BUCKET_SHARE = 0.35
#: Memory formatting and sorting one pair's table lines takes in a worker, measured.
FORMATTING_BYTES = 800
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


def merged(counts: list[TargetCounts]) -> TargetCounts:
    """Several (target hash, count) tables as one, counts added."""
    unique, inverse = np.unique(np.concatenate([hashes for hashes, _ in counts]), return_inverse=True)
    return unique, np.bincount(inverse, weights=np.concatenate([n for _, n in counts])).astype(np.int64)


def spill_buckets(occurrences: Path, buckets: int, folder: Path) -> tuple[list[Path], TargetCounts]:
    """Cut the records of ``occurrences`` into ``buckets`` files in ``folder`` by source hash, keeping
    their order; return the files and every target phrase's count."""
    paths = [folder / f"bucket{b}" for b in range(buckets)]
    handles = [open(path, "wb") for path in paths]
    targets: list[TargetCounts] = []
    try:
        with open(occurrences, "rb") as source:
            while (records := np.fromfile(source, dtype=OCCURRENCE, count=CHUNK)).size:
                bucket = records["src_hash"].astype(np.uint64) % np.uint64(buckets)
                order = np.argsort(bucket, kind="stable")
                bounds = np.searchsorted(bucket[order], np.arange(buckets + 1, dtype=np.uint64))
                for b, handle in enumerate(handles):
                    records[order[bounds[b]:bounds[b + 1]]].tofile(handle)
                targets.append(np.unique(records["tgt_hash"], return_counts=True))
                if len(targets) >= 8:  # keep a few tables, not one per chunk
                    targets = [merged(targets)]
    finally:
        for handle in handles:
            handle.close()
    return paths, merged(targets) if targets else (np.zeros(0, np.int64), np.zeros(0, np.int64))


def score_occurrences(occurrences: Path, corpus: AlignedCorpus, lexical: LexicalTables, phrase_table: Path,
                      reordering_table: Path | None, budget: int, processes: int = 2,
                      progress: tqdm | None = None) -> int:
    """Write the phrase and reordering tables of the occurrence file ``occurrences`` within ``budget``
    bytes; return the number of distinct pairs. ``lexical`` is keyed by the corpus's word ids
    (:meth:`LexicalTables.encode`: a third of the memory of the tables keyed by words). Temporary
    files go beside the phrase table."""
    total = occurrences.stat().st_size // OCCURRENCE.itemsize
    folder = temporary_folder(phrase_table)
    try:
        paths, targets = spill_buckets(occurrences, bucket_count(total, budget), folder)
        runs, pairs = [], 0
        for b, path in enumerate(paths):
            instances = PhraseInstances.from_records(np.fromfile(path, dtype=OCCURRENCE))
            path.unlink()
            counted = count_pairs(instances, corpus, targets)
            give_back_freed_memory()
            runs += write_runs(instances, corpus, counted, lexical, folder / f"bucket{b}", processes, progress,
                               run_size(budget, processes))
            pairs += len(counted)
            del instances, counted
            give_back_freed_memory()
        merge_runs(runs, phrase_table, reordering_table)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return pairs
