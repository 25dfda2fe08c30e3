"""Training time and memory: wall time and peak resident memory of each ``pysmt train`` step.

    python bench/train.py --out /tmp/news                      # the news preset (issue figures)
    python bench/train.py --out /tmp/m30 --preset multi30k
    python bench/train.py --out /tmp/news --force              # redo steps already done
    python bench/train.py --out /tmp/news --memory 600M        # another budget
    python bench/train.py --out /tmp/news2 --alignment /tmp/news/model/aligned.grow-diag-final-and  # no eflomal
    python bench/train.py --out /tmp/big --corpus runs/scale/news-400   # a corpus of bench/scale_corpus.py

Each step runs in its own ``pysmt train --first-step S --last-step S`` process. Its peak memory is
the largest proportional set size (PSS) of the step's whole process tree (the step, eflomal,
lmplz, forked workers) sampled every 0.2 s: what the step needs of the machine, with pages that
forked workers share counted once.
A step already done in ``--out`` is skipped and reported from its marker, unless ``--force``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from pysmt.training.options import STEPS

ROOT = Path(__file__).resolve().parents[1]


def descendants(pid: int) -> list[int]:
    """``pid`` and every process below it, from /proc."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            for task in Path(f"/proc/{current}/task").iterdir():
                todo += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def tree_pss_mb(pid: int) -> float:
    """Proportional set size of a process tree in MB: shared pages (forked workers) counted once."""
    total = 0
    for member in descendants(pid):
        try:
            for line in Path(f"/proc/{member}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def run_step(step: str, args: argparse.Namespace) -> tuple[float, float]:
    """Run one step; return (wall seconds, peak MB of its whole process tree)."""
    corpus = ["--corpus", str(args.corpus)] if args.corpus else ["--preset", args.preset, "--data", str(args.data)]
    command = [
        sys.executable,
        "-m",
        "pysmt.cli",
        "train",
        *corpus,
        "--out",
        str(args.out),
        "--first-step",
        step,
        "--last-step",
        step,
        "--force",
        *(["--memory", args.memory] if args.memory else []),
        *(["--alignment", str(args.alignment)] if args.alignment else []),
    ]
    start = time.time()
    process = subprocess.Popen(command)
    tree_peak = 0.0
    while process.poll() is None:  # sample the tree's memory while it runs
        tree_peak = max(tree_peak, tree_pss_mb(process.pid))
        time.sleep(0.2)
    if process.returncode != 0:
        raise SystemExit(f"step {step} failed")
    return time.time() - start, tree_peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="news")
    parser.add_argument("--corpus", type=Path, help="a bitext prefix instead of --preset (bench/scale_corpus.py)")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--force", action="store_true", help="redo steps already done")
    parser.add_argument("--memory", help="pysmt train --memory (default: its default)")
    parser.add_argument("--alignment", type=Path, help="pysmt train --alignment: a reference run's alignment")
    args = parser.parse_args()
    rows = []
    print(f"\n{'step':<10} {'wall s':>8} {'peak MB':>9}   (peak: all processes of the step together, PSS)", flush=True)
    for step in STEPS:  # each row as soon as its step is done, so a failed step leaves the rows before it
        marker = args.out / "steps" / f"{step}.done"
        if marker.exists() and not args.force:
            rows.append((step, float(marker.read_text().split()[0]), float("nan")))
        else:
            rows.append((step, *run_step(step, args)))
        print(f"{step:<10} {rows[-1][1]:8.1f} {rows[-1][2]:9.0f}", flush=True)
    print(f"{'total':<10} {sum(r[1] for r in rows):8.1f} {max((r[2] for r in rows if r[2] == r[2]), default=0):9.0f}")


if __name__ == "__main__":
    main()
