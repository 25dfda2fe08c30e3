"""Counting phrase pairs out of core: which machinery, measured (issue: bounded-memory training).

    python -m bench.pair_counting --extract RUN/model/extract.npz                 # news scale
    python -m bench.pair_counting --extract RUN/model/extract.npz --copies 4      # 4x, 4x distinct pairs
    python -m bench.pair_counting --extract ... --methods numpy-runs duckdb --memory 1G

(from the repository's folder, as a module: it measures memory with ``bench.train``'s ``tree_pss_mb``.)

Needs ``pip install duckdb polars`` for those two methods. The work is the heart of ``pysmt train``'s
score step: group the phrase-pair occurrences of ``extract.npz`` by (source, target) and give each
pair count(f,e), count(f), count(e), its six orientation counts and its most frequent alignment
(with a flag for ties, which the scorer settles on the alignments themselves). ``--copies K``
repeats the occurrences K times with each copy's phrases made distinct (their hashes mixed with the
copy number): K times the occurrences and K times the distinct pairs, as a corpus K times larger
whose copies share no word. Each method runs in a fresh process, reading the occurrences from
``.npy`` files written first (as extraction would spill them), and is timed from that point; its
memory is the peak PSS of its process tree (sampled every 0.1 s), the figure ``--memory`` bounds.
Every method's result is checked to equal the in-memory numpy one (today's code).

Methods:

* ``numpy``: today's ``count_pairs``: every occurrence in memory, one lexsort.
* ``numpy-runs``: the occurrences cut into buckets by source hash, each bucket counted in memory
  by the same code; count(e) from a second pass over the pairs, bucketed by target hash (Moses'
  extract | sort | score | consolidate, with hash buckets instead of a full sort).
* ``duckdb``: one SQL query over the occurrence files, DuckDB's ``memory_limit`` and temporary
  directory set from ``--memory`` (its out-of-core GROUP BY), multi-threaded.
* ``polars``: the same query as a lazy Polars plan, run by its streaming engine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from bench.train import tree_pss_mb

COLUMNS = ("src_hash", "tgt_hash", "align_hash", "prev", "next")
DTYPES = {"src_hash": np.int64, "tgt_hash": np.int64, "align_hash": np.int64, "prev": np.int8, "next": np.int8}
#: The share of the budget the out-of-core methods give their working sets (the rest: Python, numpy, buffers).
WORKING_SHARE = 0.6
METHODS = ("numpy", "numpy-runs", "duckdb", "polars")
MIX = np.int64(0x5DEECE66D)  # mixed into a copy's hashes: copies share no phrase


def size_bytes(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1].upper()]) if text[-1].upper() in units else int(text)


def write_occurrences(extract: Path, copies: int, folder: Path) -> int:
    """The occurrences' columns as ``.npy`` files in ``folder``, ``copies`` times; return their number."""
    with np.load(extract) as data:
        arrays = {name: data[name] for name in COLUMNS}
    for name, values in arrays.items():
        parts = []
        for k in range(copies):
            parts.append(values ^ (MIX * k) if name != "align_hash" and name.endswith("hash") else values)
        np.concatenate(parts).astype(DTYPES[name]).tofile(folder / f"{name}.bin")
    return len(arrays["src_hash"]) * copies


# -- the methods: each returns the pairs sorted by (source hash, target hash) ---------------------


def counted(
    src: np.ndarray, tgt: np.ndarray, align: np.ndarray, prev: np.ndarray, nxt: np.ndarray
) -> dict[str, np.ndarray]:
    """Today's counting, in memory (count(e) left out: the caller knows whether it has every target)."""
    from pysmt.training.scoring import starts_of_runs

    order = np.lexsort((align, tgt, src))
    src, tgt, align = src[order], tgt[order], align[order]
    pair_start = starts_of_runs(src, tgt)
    pair_id = np.cumsum(pair_start) - 1
    n = int(pair_id[-1]) + 1 if len(pair_id) else 0
    count_fe = np.bincount(pair_id, minlength=n)
    src_group = np.cumsum(starts_of_runs(src)) - 1
    count_f = np.bincount(src_group)[src_group[pair_start]]
    run_index = np.flatnonzero(starts_of_runs(src, tgt, align))
    run_pair = pair_id[run_index]
    run_size = np.diff(np.append(run_index, len(order)))
    best = np.zeros(n, dtype=np.int64)
    np.maximum.at(best, run_pair, run_size)
    winners = run_size == best[run_pair]
    first = np.unique(run_pair[winners], return_index=True)[1]
    orient = [np.bincount(pair_id * 3 + values[order], minlength=n * 3).reshape(n, 3) for values in (prev, nxt)]
    return {
        "src": src[pair_start],
        "tgt": tgt[pair_start],
        "count_fe": count_fe,
        "count_f": count_f,
        "align": align[run_index[winners][first]],
        "tied": np.bincount(run_pair[winners], minlength=n) > 1,
        "prev": orient[0],
        "next": orient[1],
    }


def with_count_e(pairs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    unique, inverse = np.unique(pairs["tgt"], return_inverse=True)
    pairs["count_e"] = np.bincount(inverse, weights=pairs["count_fe"]).astype(np.int64)[inverse]
    return pairs


def read_column(folder: Path, name: str, start: int = 0, count: int = -1) -> np.ndarray:
    """A column's values ``start`` to ``start + count`` (read, not memory-mapped: mapped file pages count
    in a process's PSS, and so in the figure the budget bounds)."""
    itemsize = np.dtype(DTYPES[name]).itemsize
    return np.fromfile(folder / f"{name}.bin", dtype=DTYPES[name], count=count, offset=start * itemsize)


def occurrences(folder: Path) -> int:
    return (folder / "src_hash.bin").stat().st_size // 8


def method_numpy(folder: Path, budget: int, out: Path) -> None:
    pairs = with_count_e(counted(*(read_column(folder, name) for name in COLUMNS)))
    np.savez(out / "pairs.npz", **pairs)


def method_numpy_runs(folder: Path, budget: int, out: Path) -> None:
    """Source-hash buckets counted one at a time; count(e) from target-hash buckets of the pairs."""
    n = occurrences(folder)
    per_occurrence = 160  # bytes counting one occurrence takes in memory (sorts, copies, masks; measured)
    buckets = max(1, -(-n * per_occurrence // int(WORKING_SHARE * budget)))
    spill = folder / "buckets"
    spill.mkdir(exist_ok=True)
    handles = [[open(spill / f"{b}.{name}", "wb") for name in COLUMNS] for b in range(buckets)]
    for lo in range(0, n, STEP):  # one pass: each chunk's occurrences appended to their bucket
        chunk = [read_column(folder, name, lo, STEP) for name in COLUMNS]
        bucket = (chunk[0].view(np.uint64) % np.uint64(buckets)).astype(np.int64)
        order = np.argsort(bucket, kind="stable")
        bounds = np.searchsorted(bucket[order], np.arange(buckets + 1))
        for b in range(buckets):
            for handle, values in zip(handles[b], chunk):
                values[order[bounds[b] : bounds[b + 1]]].tofile(handle)
    for row in handles:
        for handle in row:
            handle.close()
    dtypes = [DTYPES[name] for name in COLUMNS]
    targets = [open(spill / f"t{b}", "wb") for b in range(buckets)]  # (target hash, count(f,e)) per pair
    for b in range(buckets):
        columns = [np.fromfile(spill / f"{b}.{name}", dtype=dtype) for name, dtype in zip(COLUMNS, dtypes)]
        pairs = counted(*columns)
        np.savez(spill / f"pairs{b}.npz", **pairs)
        tb = (pairs["tgt"].view(np.uint64) % np.uint64(buckets)).astype(np.int64)
        for t in range(buckets):
            np.stack([pairs["tgt"][tb == t], pairs["count_fe"][tb == t]], axis=1).tofile(targets[t])
    for handle in targets:
        handle.close()
    count_e: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for t in range(buckets):  # count(e) of each target: the sum of its pairs' count(f,e)
        rows = np.fromfile(spill / f"t{t}", dtype=np.int64).reshape(-1, 2)
        unique, inverse = np.unique(rows[:, 0], return_inverse=True)
        count_e[t] = (unique, np.bincount(inverse, weights=rows[:, 1]).astype(np.int64))
    for b in range(buckets):  # each bucket's pairs get their count(e) by target bucket
        with np.load(spill / f"pairs{b}.npz") as data:
            pairs = {key: data[key] for key in data.files}
        tb = (pairs["tgt"].view(np.uint64) % np.uint64(buckets)).astype(np.int64)
        pairs["count_e"] = np.zeros(len(tb), dtype=np.int64)
        for t in range(buckets):
            unique, counts = count_e[t]
            chosen = tb == t
            pairs["count_e"][chosen] = counts[np.searchsorted(unique, pairs["tgt"][chosen])]
        np.savez(out / f"pairs{b}.npz", **pairs)


SQL = """
WITH runs AS (
    SELECT src_hash, tgt_hash, align_hash, count(*) AS n,
           count_if(prev = 0) AS p0, count_if(prev = 1) AS p1, count_if(prev = 2) AS p2,
           count_if(next = 0) AS n0, count_if(next = 1) AS n1, count_if(next = 2) AS n2
    FROM occurrences GROUP BY ALL),
ranked AS (SELECT *, max(n) OVER (PARTITION BY src_hash, tgt_hash) AS best FROM runs),
pairs AS (
    SELECT src_hash, tgt_hash, sum(n) AS count_fe, min(align_hash) FILTER (WHERE n = best) AS align,
           count_if(n = best) > 1 AS tied, sum(p0) AS p0, sum(p1) AS p1, sum(p2) AS p2,
           sum(n0) AS n0, sum(n1) AS n1, sum(n2) AS n2
    FROM ranked GROUP BY ALL)
SELECT *, sum(count_fe) OVER (PARTITION BY src_hash) AS count_f, sum(count_fe) OVER (PARTITION BY tgt_hash) AS count_e
FROM pairs ORDER BY src_hash, tgt_hash
"""
STEP = 1 << 22  # occurrences per chunk written or read at once


def chunks(folder: Path) -> Iterator[dict[str, np.ndarray]]:
    """The occurrence files, read in chunks of STEP (what extraction would spill, chunk by chunk)."""
    for lo in range(0, occurrences(folder), STEP):
        yield {name: read_column(folder, name, lo, STEP) for name in COLUMNS}


def as_pairs(table: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {
        "src": table["src_hash"],
        "tgt": table["tgt_hash"],
        "count_fe": table["count_fe"],
        "count_f": table["count_f"],
        "count_e": table["count_e"],
        "align": table["align"],
        "tied": table["tied"],
        "prev": np.stack([table[k] for k in ("p0", "p1", "p2")], axis=1),
        "next": np.stack([table[k] for k in ("n0", "n1", "n2")], axis=1),
    }


def method_duckdb(folder: Path, budget: int, out: Path) -> None:
    import duckdb

    con = duckdb.connect(
        str(folder / "occurrences.duckdb"),
        config={
            "memory_limit": f"{int(WORKING_SHARE * budget) // (1 << 20)}MB",
            "temp_directory": str(folder / "duck"),
            "threads": os.cpu_count() or 1,
            "preserve_insertion_order": False,
        },
    )
    con.execute(
        "CREATE TABLE occurrences (src_hash BIGINT, tgt_hash BIGINT, align_hash BIGINT, prev TINYINT, next TINYINT)"
    )
    for chunk in chunks(folder):  # noqa: B007 - DuckDB reads the dict of arrays by its name
        con.execute("INSERT INTO occurrences SELECT * FROM chunk")
    con.execute(f"COPY ({SQL}) TO '{out / 'pairs.parquet'}' (FORMAT parquet)")


def method_polars(folder: Path, budget: int, out: Path) -> None:
    import polars as pl

    spilled = folder / "ipc"
    spilled.mkdir(exist_ok=True)
    for k, chunk in enumerate(chunks(folder)):
        pl.DataFrame(chunk).write_ipc(spilled / f"{k:05d}.arrow")
    frame = pl.scan_ipc(spilled / "*.arrow")
    runs = frame.group_by("src_hash", "tgt_hash", "align_hash").agg(
        pl.len().alias("n"),
        *[(pl.col(side) == k).sum().alias(f"{side[0]}{k}") for side in ("prev", "next") for k in range(3)],
    )
    runs = runs.with_columns(pl.col("n").max().over("src_hash", "tgt_hash").alias("best"))
    pairs = runs.group_by("src_hash", "tgt_hash").agg(
        pl.col("n").sum().alias("count_fe"),
        pl.col("align_hash").filter(pl.col("n") == pl.col("best")).min().alias("align"),
        ((pl.col("n") == pl.col("best")).sum() > 1).alias("tied"),
        *[pl.col(f"{side}{k}").sum() for side in "pn" for k in range(3)],
    )
    pairs.with_columns(
        pl.col("count_fe").sum().over("src_hash").alias("count_f"),
        pl.col("count_fe").sum().over("tgt_hash").alias("count_e"),
    ).sort("src_hash", "tgt_hash").sink_parquet(out / "pairs.parquet")


def run_method(name: str, folder: Path, budget: int, out: Path) -> None:
    """In this (child) process: run one method, its result written into ``out`` as it goes."""
    out.mkdir()
    start = time.time()
    {"numpy": method_numpy, "numpy-runs": method_numpy_runs, "duckdb": method_duckdb, "polars": method_polars}[name](
        folder, budget, out
    )
    print(json.dumps({"seconds": time.time() - start}))


def load_result(out: Path) -> dict[str, np.ndarray]:
    """A method's pairs, whatever files it wrote, sorted by (source hash, target hash) (here, not measured)."""
    if (out / "pairs.parquet").exists():
        import polars as pl

        table = pl.read_parquet(out / "pairs.parquet")
        pairs = as_pairs({name: table[name].to_numpy() for name in table.columns})
    else:
        parts = []
        for path in sorted(out.glob("*.npz")):
            with np.load(path) as data:
                parts.append({key: data[key] for key in data.files})
        pairs = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
    order = np.lexsort((pairs["tgt"], pairs["src"]))
    return {key: values[order].astype(np.int64) for key, values in pairs.items()}


def measure(name: str, folder: Path, budget: int) -> tuple[float, float, Path]:
    out = folder / f"{name}.result"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bench.pair_counting",
            "--child",
            name,
            "--folder",
            str(folder),
            "--budget",
            str(budget),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    peak = 0.0
    while process.poll() is None:
        peak = max(peak, tree_pss_mb(process.pid))
        time.sleep(0.1)
    stdout = process.stdout.read() if process.stdout else ""
    if process.returncode != 0:
        raise SystemExit(f"{name} failed ({process.returncode})")
    return json.loads(stdout.strip().splitlines()[-1])["seconds"], peak, out


def same(a: Path, b: Path) -> str:
    x, y = load_result(a), load_result(b)
    wrong = [key for key in x if not np.array_equal(x[key], y[key])]
    return f"same as {a.name.split('.')[0]}" if not wrong else f"DIFFERS: {', '.join(wrong)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--extract", type=Path)
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--memory", default="1G", help="the budget the out-of-core methods are given")
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    parser.add_argument("--child", choices=METHODS)
    parser.add_argument("--folder", type=Path)
    parser.add_argument("--budget", type=int)
    args = parser.parse_args()
    if args.child:
        run_method(args.child, args.folder, args.budget, args.folder / f"{args.child}.result")
        return
    budget = size_bytes(args.memory)
    with tempfile.TemporaryDirectory(dir=args.extract.parent) as tmp:
        folder = Path(tmp)
        n = write_occurrences(args.extract, args.copies, folder)
        print(f"{n:,} occurrences ({args.copies} cop{'y' if args.copies == 1 else 'ies'}); budget {args.memory}")
        reference = None
        for name in args.methods:
            seconds, peak, result = measure(name, folder, budget)
            check = "" if reference is None else same(reference, result)
            reference = reference or result
            print(f"{name:>10}: {seconds:6.1f} s, peak {peak:6,.0f} MB (PSS) {check}")


if __name__ == "__main__":
    main()
