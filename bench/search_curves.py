"""Model score against decoding time: cube pruning over pop limits, normal search over stack sizes,
for this checkout and, beside it, another one (the code before a change).

    python -m bench.search_curves                                    # moses-news, 500 lines, this code
    python -m bench.search_curves --before /work/old --out docs/curves.png
    python -m bench.search_curves --lines 200 --pop-limits 100,1000 --stack-sizes 50,200

Each point is one ``bench/decode.py`` run in its own process (process time of decoding, loading
excluded, one core): the mean model score of the best translations (higher is better: the same
weights, so fewer search errors) against source words per second. ``--before DIR`` runs the same
measurement with DIR's pysmt (a checkout with its compiled core built in place, e.g. a
``git worktree`` of an older commit: ``python setup.py build_ext --inplace`` there) put first on
``PYTHONPATH``. Prints a table and, with ``--out``, draws the curves as a PNG.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "moses-news"
POP_LIMITS = "100,200,500,1000,2000,5000"
STACK_SIZES = "50,100,200,500,1000"


def point(tree: Path | None, config: str, input_path: str, lines: int, algorithm: str, limit: str, value: int) -> dict:
    """One bench/decode.py measurement, with ``tree``'s pysmt first on the path (None: this checkout's)."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree), env.get("PYTHONPATH", "")])
    cmd = [
        sys.executable,
        str(ROOT / "bench" / "decode.py"),
        "--one",
        algorithm,
        "-c",
        config,
        "-i",
        input_path,
        "--lines",
        str(lines),
        f"--{limit}={value}",
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def draw(results: dict[str, list[dict]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, algorithm, limit in ((axes[0], "cube", "pop_limit"), (axes[1], "normal", "stack_size")):
        for label, points in results.items():
            mine = [p for p in points if p["algorithm"] == algorithm]
            ax.plot([p["words_per_s"] for p in mine], [p["model_score"] for p in mine], marker="o", label=label)
            for p in mine:
                ax.annotate(
                    str(p[limit]),
                    (p["words_per_s"], p["model_score"]),
                    fontsize=7,
                    textcoords="offset points",
                    xytext=(3, 3),
                )
        ax.set_xscale("log")
        ax.set_xlabel("source words per second (one core, loading excluded)")
        ax.set_ylabel("mean model score of the best translations")
        ax.set_title(f"{algorithm} ({limit.replace('_', ' ')} at each point)")
        ax.legend()
        ax.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-c", "--config", default=str(SHARED / "model" / "moses.ini"))
    parser.add_argument("-i", "--input", default=str(SHARED / "inputs" / "newstest2013.first500.tok.true.en"))
    parser.add_argument("--lines", type=int, default=500)
    parser.add_argument("--pop-limits", default=POP_LIMITS)
    parser.add_argument("--stack-sizes", default=STACK_SIZES)
    parser.add_argument("--before", type=Path, help="another checkout to measure beside this one")
    parser.add_argument("--out", type=Path, help="draw the curves into this PNG")
    args = parser.parse_args()
    trees: dict[str, Path | None] = {"this code": None}
    if args.before:
        trees = {f"before ({args.before.name})": args.before, **trees}
    runs = [("cube", "pop-limit", int(v)) for v in args.pop_limits.split(",")] + [
        ("normal", "stack-size", int(v)) for v in args.stack_sizes.split(",")
    ]
    results: dict[str, list[dict]] = {label: [] for label in trees}
    print(
        f"{'code':24} {'search':7} {'limit':>6} {'words/s':>9} {'ms/sent':>8} {'model score':>12} {'hyps/s':>11} "
        f"{'peak MB':>8}"
    )
    for algorithm, limit, value in runs:
        for label, tree in trees.items():
            r = point(tree, args.config, args.input, args.lines, algorithm, limit, value)
            results[label].append(r)
            hyps = f"{r['hypotheses_per_s']:11,d}" if r.get("hypotheses_per_s") else f"{'n/a':>11}"
            print(
                f"{label:24} {algorithm:7} {value:6d} {r['words_per_s']:9.1f} {r['ms_per_sentence']:8.2f} "
                f"{r['model_score']:12.4f} {hyps} {r['peak_rss_mb']:8.1f}",
                flush=True,
            )
    if args.out:
        draw(results, args.out)
        print(f"curves drawn in {args.out}")


if __name__ == "__main__":
    main()
