"""Training time and memory: wall time and peak resident memory of each ``pysmt train`` step.

    python bench/train.py --out /tmp/news                      # the news preset (issue figures)
    python bench/train.py --out /tmp/m30 --preset multi30k
    python bench/train.py --out /tmp/news --force              # redo steps already done

Each step runs in its own ``pysmt train --first-step S --last-step S`` process, so its peak memory
(the largest resident set of the step's process or any of its children: eflomal, lmplz, workers)
is its own.
A step already done in ``--out`` is skipped and reported from its marker, unless ``--force``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pysmt.training.pipeline import STEPS  # noqa: E402


def run_step(step: str, args: argparse.Namespace) -> tuple[float, float]:
    """Run one step; return (wall seconds, peak MB over the step's process tree)."""
    command = [sys.executable, "-m", "pysmt.cli", "train", "--preset", args.preset, "--data", str(args.data),
               "--out", str(args.out), "--first-step", step, "--last-step", step, "--force"]
    start = time.time()
    process = subprocess.Popen(command)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.time() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"step {step} failed")
    # wait4's ru_maxrss is the largest resident set of any one process in the step's tree (the step
    # itself, eflomal, lmplz, or a forked worker); forked workers share their parent's pages.
    return wall, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="news")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--force", action="store_true", help="redo steps already done")
    args = parser.parse_args()
    rows = []
    for step in STEPS:
        marker = args.out / "steps" / f"{step}.done"
        if marker.exists() and not args.force:
            rows.append((step, float(marker.read_text().split()[0]), float("nan")))
            continue
        wall, peak = run_step(step, args)
        rows.append((step, wall, peak))
    print(f"\n{'step':<10} {'wall s':>8} {'peak MB':>9}")
    for step, wall, peak in rows:
        print(f"{step:<10} {wall:8.1f} {peak:9.0f}")
    print(f"{'total':<10} {sum(r[1] for r in rows):8.1f} {max((r[2] for r in rows if r[2] == r[2]), default=0):9.0f}")


if __name__ == "__main__":
    main()
