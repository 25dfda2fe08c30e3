"""Table loading: time and memory of a system's phrase and reordering tables, text against binarized.

    python bench/load.py -c SYSTEM/pysmt.toml                        # the text tables
    python bench/load.py -c SYSTEM/pysmt.toml --binarized BIN/       # and the binarized ones (BIN/pysmt.toml)
    python bench/load.py -c SYSTEM/moses.ini --binarize BIN/         # binarize first (timed), then both
    python bench/load.py -c ... --binarized BIN/ -i input.tok --lines 200 --workers 2

Each configuration loads in its own process, so peak memory is its own. Only the tables are loaded
(the phrase-table and lexical-reordering features, through their ``from_config``), not the LM.
Figures: wall and process seconds of loading, peak RSS, and after loading the process' anonymous
(private heap) and file-backed resident memory. With ``-i`` every n-gram of the input's first
``--lines`` lines is looked up in each table (as decoding does) and timed; with ``--workers N``
that happens in N forked workers too, which then run a full garbage collection (as a long-running
worker does sooner or later) and report their private memory and PSS: what a ``--threads N``
decoder pays per worker beyond the memory it shares with the parent.
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TABLE_TYPES = ("phrase-table", "lexical-reordering")

_tables: list[Any] = []
_phrases: list[str] = []


def memory() -> dict[str, float]:
    """This process' memory in MB from /proc/self/smaps_rollup (Linux), plus its peak RSS."""
    values = {"peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    try:
        for line in Path("/proc/self/smaps_rollup").read_text().splitlines()[1:]:
            key, _, rest = line.partition(":")
            values[key] = int(rest.split()[0]) / 1024
    except OSError:
        pass
    return values


def input_phrases(path: str, lines: int, max_length: int) -> list[str]:
    phrases = []
    for line in Path(path).read_text(encoding="utf-8").splitlines()[:lines]:
        words = line.split()
        for start in range(len(words)):
            for end in range(start + 1, min(len(words), start + max_length) + 1):
                phrases.append(" ".join(words[start:end]))
    return phrases


def look_up(features: list[Any], phrases: list[str]) -> int:
    """Look every phrase up in every phrase table, and every pair found in every reordering table."""
    found = 0
    tables = [f.table for f in features if hasattr(f.table, "sources")]
    reordering = [f.table for f in features if not hasattr(f.table, "sources")]
    for phrase in phrases:
        for table in tables:
            for entry in table.lookup(phrase):
                found += 1
                target = " ".join(entry.target)
                for other in reordering:
                    other.lookup(phrase, target)
    return found


def worker(_: int) -> dict[str, float]:
    look_up(_tables, _phrases)
    gc.collect()  # a long-running worker's full collection visits (and so copies) every tracked object
    mem = memory()
    return {"private_mb": mem.get("Private_Clean", 0) + mem.get("Private_Dirty", 0), "pss_mb": mem.get("Pss", 0)}


def measure(config_path: str, input_path: str | None, lines: int, workers: int) -> dict[str, Any]:
    """Load the tables of one config (in this fresh process) and report times and memory."""
    from pysmt.config_files import load_config
    from pysmt.features.registry import feature_class

    config = load_config(config_path)
    wall, cpu = time.perf_counter(), time.process_time()
    features = [
        feature_class(spec.type).from_config(spec.name, spec.params, config)
        for spec in config.features
        if spec.type in TABLE_TYPES
    ]
    result: dict[str, Any] = {
        "config": config_path,
        "load_wall_s": time.perf_counter() - wall,
        "load_process_s": time.process_time() - cpu,
    }
    mem = memory()
    result.update(
        peak_rss_mb=mem["peak_rss_mb"],
        anon_mb=mem.get("Anonymous", 0),
        file_rss_mb=mem.get("Rss", 0) - mem.get("Anonymous", 0),
        entries={f.name: len(f.table) for f in features},
    )
    if input_path:
        phrases = input_phrases(input_path, lines, config.search.max_phrase_length)
        wall = time.perf_counter()
        found = look_up(features, phrases)
        seconds = time.perf_counter() - wall
        result.update(lookups=len(phrases), entries_found=found, lookup_us=1e6 * seconds / max(len(phrases), 1))
        mem = memory()
        result.update(
            after_lookup_anon_mb=mem.get("Anonymous", 0),
            after_lookup_file_rss_mb=mem.get("Rss", 0) - mem.get("Anonymous", 0),
        )
        if workers:
            _tables[:] = features
            _phrases[:] = phrases
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                result["workers"] = pool.map(worker, range(workers))
    return result


def run_measure(config: str, args: argparse.Namespace) -> dict[str, Any]:
    command = [
        sys.executable,
        __file__,
        "--measure",
        config,
        "--lines",
        str(args.lines),
        "--workers",
        str(args.workers),
    ]
    if args.input:
        command += ["-i", args.input]
    done = subprocess.run(command, check=False, capture_output=True, text=True, cwd=ROOT)
    if done.returncode:
        raise SystemExit(f"measuring {config} failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def binarize(config: str, out_dir: str) -> dict[str, Any]:
    code = (
        "import json, resource, sys, time; from pysmt.config_files import load_config; "
        "from pysmt.binarize import binarize_system; t = time.perf_counter(); "
        "binarize_system(load_config(sys.argv[1]), sys.argv[2]); "
        "print(json.dumps({'wall_s': time.perf_counter() - t, "
        "'peak_rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, config, out_dir], check=False, capture_output=True, text=True, cwd=ROOT
    )
    if done.returncode:
        raise SystemExit(f"binarizing {config} failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def report(label: str, r: dict[str, Any]) -> None:
    print(f"{label}: {r['config']}")
    print(f"  entries: {', '.join(f'{name} {count:,}' for name, count in r['entries'].items())}")
    print(
        f"  load: {r['load_wall_s']:.3f} s wall, {r['load_process_s']:.3f} s process; "
        f"peak RSS {r['peak_rss_mb']:.0f} MB; after load: private heap {r['anon_mb']:.0f} MB, "
        f"file-backed (shareable) {r['file_rss_mb']:.0f} MB"
    )
    if "lookups" in r:
        print(
            f"  lookups: {r['lookups']:,} phrases ({r['entries_found']:,} entries), {r['lookup_us']:.1f} us each; "
            f"after: private heap {r['after_lookup_anon_mb']:.0f} MB, "
            f"file-backed {r['after_lookup_file_rss_mb']:.0f} MB"
        )
    for k, w in enumerate(r.get("workers", [])):
        print(f"  forked worker {k}: private {w['private_mb']:.0f} MB, PSS {w['pss_mb']:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-c", "--config", help="The system with text tables (pysmt.toml or moses.ini).")
    parser.add_argument("--binarized", help="A binarized system: its folder or its pysmt.toml.")
    parser.add_argument("--binarize", metavar="DIR", help="Binarize --config into DIR first (timed), then measure it.")
    parser.add_argument("-i", "--input", help="Look up every n-gram of this tokenized input after loading.")
    parser.add_argument("--lines", type=int, default=100, help="Input lines to look up (default 100).")
    parser.add_argument("--workers", type=int, default=0, help="Also look up in this many forked workers.")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.input, args.lines, args.workers)))
        return
    if not (args.config or args.binarized):
        parser.error("give -c CONFIG and/or --binarized DIR")
    binarized = args.binarized
    if args.binarize:
        if not args.config:
            parser.error("--binarize needs -c CONFIG")
        b = binarize(args.config, args.binarize)
        print(
            f"binarize: {args.config} -> {args.binarize}: {b['wall_s']:.1f} s wall, peak RSS {b['peak_rss_mb']:.0f} MB"
        )
        binarized = args.binarize
    if args.config:
        report("text", run_measure(args.config, args))
    if binarized:
        path = Path(binarized)
        report("binarized", run_measure(str(path / "pysmt.toml" if path.is_dir() else path), args))


if __name__ == "__main__":
    main()
