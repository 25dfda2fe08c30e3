"""A system's start-up: load time and first-sentence latency, text tables against binary ones.

    python bench/system_load.py --system news=text:TEXT.ini,binary:BIN/pysmt.toml --line news="a tokenized line" \\
        --system multi30k=text:SYS/text.toml,binary:SYS/pysmt.toml --line multi30k="A raw line." [--rounds 3]

Each ``--system`` names the configurations of one system to compare, as ``LABEL:CONFIG`` (text tables, binary
tables, binary tables and a KenLM binary LM...); ``--line`` gives the line it translates.

Each measurement is a fresh process, as each ``pysmt decode``, tuning iteration, ``serve`` worker or
``rnn train`` is: it imports pysmt, builds the decoder from the config's paths
(:meth:`pysmt.decoder.Decoder.from_paths`: every feature's check, then the tables, the LM and the other
models loaded) and translates the one line as ``decode`` does (prepared, translated, post-processed).
Printed per configuration: the medians over ``--rounds`` of the whole process' wall seconds (interpreter
start to exit), the load (``from_paths``) and the first sentence, and the peak RSS. The configurations run
alternately (round 1: every configuration once, round 2 the same...), so a machine busy with other work
slows all alike. A first, untimed round puts the files in the page cache and does a binary table's one-time
whole-table check (``pysmt/models/binary_checks.py``, recorded), so the figures are every later start-up's
on a machine that has read the system before.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: What the measured process runs: the config and the line come as arguments, the figures go out as JSON.
CHILD = """
import json, resource, sys, time
start = time.perf_counter()
from pysmt.decoder import Decoder
imported = time.perf_counter()
decoder = Decoder.from_paths(sys.argv[1])
loaded = time.perf_counter()
output = decoder.postprocess(decoder.translate(decoder.preprocess(sys.argv[2])).best)
done = time.perf_counter()
print(json.dumps({"import_s": imported - start, "load_s": loaded - imported, "first_s": done - loaded,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "output": output}))
"""


def measure(config: Path, line: str) -> dict[str, float | str]:
    """One fresh process's figures, and its wall seconds from start to exit."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(config), line], capture_output=True, text=True, cwd=ROOT, check=False
    )
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{config}: exit status {proc.returncode}\n{proc.stderr[-2000:]}")
    return {**json.loads(proc.stdout.splitlines()[-1]), "wall_s": wall}


def pairs(values: list[str], option: str) -> dict[str, str]:
    """``NAME=VALUE`` options as a dict."""
    found = {}
    for value in values:
        name, equals, rest = value.partition("=")
        if not equals:
            sys.exit(f"{option} {value!r}: expected NAME=VALUE")
        found[name] = rest
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--system", action="append", required=True, help="NAME=LABEL:CONFIG,LABEL:CONFIG...")
    parser.add_argument("--line", action="append", required=True, help="NAME=the line to translate")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    lines = pairs(args.line, "--line")
    configs = [
        (name, kind, Path(path))
        for name, value in pairs(args.system, "--system").items()
        for kind, _, path in (entry.partition(":") for entry in value.split(","))
    ]
    for name, _, path in configs:
        measure(path, lines[name])  # the page cache filled, a binary table's one-time check done and recorded
    results: dict[tuple[str, str], list[dict[str, float | str]]] = {(n, k): [] for n, k, _ in configs}
    for round_no in range(args.rounds):
        for name, kind, path in configs:
            results[name, kind].append(measure(path, lines[name]))
            last = results[name, kind][-1]
            print(
                f"round {round_no + 1} {name} {kind}: wall {last['wall_s']:.2f} s, load {last['load_s']:.2f} s, "
                f"first sentence {last['first_s']:.3f} s",
                file=sys.stderr,
                flush=True,
            )
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} CPUs")
    print("| system | models | process wall (s) | load (s) | first sentence (s) | peak RSS (MB) | output |")
    print("|---|---|---|---|---|---|---|")
    for (name, kind), runs in results.items():

        def median(key: str, runs: list[dict[str, float | str]] = runs) -> float:
            return statistics.median(float(run[key]) for run in runs)

        outputs = {str(run["output"]) for run in runs}
        print(
            f"| {name} | {kind} | {median('wall_s'):.2f} | {median('load_s'):.2f} | {median('first_s'):.3f} | "
            f"{median('peak_rss_mb'):.0f} | {' / '.join(sorted(outputs))} |"
        )


if __name__ == "__main__":
    main()
