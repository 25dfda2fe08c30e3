"""The optimizers side by side on real data: dev BLEU per iteration, its lowest point against the start,
and test BLEU, for each ``--optimizer`` and seed.

    python -m bench.tuning_optimizers --out ../runs/optimizers                       # Multi30k, 3 iterations
    python -m bench.tuning_optimizers --out ../runs/optimizers --iterations 10 --seeds 0,1,2
    python -m bench.tuning_optimizers --out ../runs/optimizers --optimizers mert --seeds 0
    python -m bench.tuning_optimizers --system news --out ../runs/optimizers-news --iterations 5
    python -m bench.tuning_optimizers --out ../runs/optimizers-neural --neural 10 --seeds 0,1

It trains the system once (in ``OUT/system``): Multi30k (``pysmt train --corpus multi30k/raw/train``;
dev: the first ``--dev-lines``, 300, lines of ``val``; test: ``test_2016_flickr``) or the paper's
news system (``pysmt train --preset news``; dev: newstest2012, all of it unless ``--dev-lines``;
test: newstest2013). It runs ``pysmt tune`` with each optimizer and seed
(``OUT/tune-OPTIMIZER-seedS``: the defaults otherwise, the historic interpolation and MERT's trust
region included; ``--features`` as tune takes them), decodes the test set with each tuned config, and writes
``OUT/optimizers.md`` (a table per optimizer, and each one's mean and standard deviation over
seeds) and ``OUT/optimizers.png`` (dev BLEU per iteration, a line per seed, a panel per optimizer).
With ``--neural MINUTES`` it also trains the neural models on that system (``pysmt rnn train`` on its
phrase table, ``pysmt cslm train`` on its tokenized French side, ``default`` presets, one thread, at
most MINUTES each, in ``OUT/rnn`` and ``OUT/cslm``) and tunes the ``CSLM + RNN + WP``
configuration (``--features cslm,rnn,wp``: 17 tuned weights).
Every step is a pysmt command that resumes from what it finds: rerunning the same command redoes
only what is missing, and a run with more iterations continues the tunes it finds; ``--report-only``
rewrites the report and plot from the tunes and test outputs there, loading no system.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import sacrebleu

from pysmt.files.figures import MISSING, available, pyplot, save_png
from pysmt.files.textio import atomic_writer

ROOT = Path(__file__).resolve().parents[1]


def pysmt(*args: object, stdout: Path | None = None) -> None:
    """Run ``pysmt ARGS`` as a user would, its messages passed through (its output into ``stdout``, written
    atomically, when given); stop on a failure."""
    command = [sys.executable, "-m", "pysmt", *map(str, args)]
    print("$ pysmt " + " ".join(map(str, args)), file=sys.stderr, flush=True)
    if stdout is None:
        subprocess.run(command, check=True)
        return
    with atomic_writer(stdout) as handle:
        handle.flush()
        subprocess.run(command, check=True, stdout=handle)


#: Each system's training arguments (after ``pysmt train``), dev set and test set (paths without ``.en``/``.fr``).
SYSTEMS: dict[str, Callable[[Path], tuple[list[object], Path, Path]]] = {
    "multi30k": lambda data: (
        ["--corpus", data / "multi30k" / "raw" / "train"],
        data / "multi30k" / "raw" / "val",
        data / "multi30k" / "raw" / "test_2016_flickr",
    ),
    "news": lambda data: (
        ["--preset", "news", "--data", data],
        data / "news" / "newstest2012",
        data / "news" / "newstest2013",
    ),
}


def first_lines(source: Path, target: Path, count: int | None) -> None:
    lines = source.read_text(encoding="utf-8").splitlines()[:count]
    if not target.is_file() or target.read_text(encoding="utf-8").splitlines() != lines:
        with atomic_writer(target) as out:
            out.write("\n".join(lines) + "\n")


def dev_curve(tune: Path) -> list[float]:
    rows = [line.split("\t") for line in (tune / "summary.tsv").read_text(encoding="utf-8").splitlines()[1:]]
    return [float(row[1]) for row in rows]


def test_bleu(tune: Path, source: Path, reference: Path, decode: bool = True) -> float:
    """BLEU of the tuned config on the test set (decoded into ``OUT/test-TUNE.fr`` unless it is there and newer)."""
    output = tune.parent / f"test-{tune.name}.fr"
    if not output.is_file() or output.stat().st_mtime < (tune / "pysmt.toml").stat().st_mtime:
        if not decode:
            sys.exit(f"{tune}: not tuned and tested yet (rerun without --report-only)")
        pysmt("decode", "-c", tune / "pysmt.toml", "-i", source, stdout=output)
    hypotheses = output.read_text(encoding="utf-8").splitlines()
    return sacrebleu.corpus_bleu(hypotheses, [reference.read_text(encoding="utf-8").splitlines()]).score


def neural_features(system: Path, out: Path, minutes: float, train: bool = True) -> list[object]:
    """Train the RNN and the CSLM on ``system`` (resumable), and return tune's options for CSLM + RNN + WP."""
    budget = ["--max-time", minutes, "--threads", 1]
    if train:
        pysmt("rnn", "train", "--phrase-table", system / "phrase-table.gz", "--out", out / "rnn", *budget)
        pysmt("cslm", "train", "--text", system / "corpus" / "train.fr", "--out", out / "cslm", *budget)
    models = {"rnn": out / "rnn", "wp": out / "rnn", "cslm": out / "cslm"}
    return ["--features", "cslm,rnn,wp", *(a for f, m in models.items() for a in ("--param", f"{f}.model={m}"))]


def spread(values: list[float]) -> str:
    if len(values) < 2:
        return f"{values[0]:.2f}"
    return f"{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="Folder for the system, the tunes and the report.")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--optimizers", default="mert,kbmira,pro")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--system", choices=sorted(SYSTEMS), default="multi30k")
    parser.add_argument("--dev-lines", type=int, help="The dev set's first lines (multi30k: 300; news: all).")
    parser.add_argument("--features", default="", help="Features added to the system, as `pysmt tune` takes them.")
    parser.add_argument("--neural", type=float, metavar="MINUTES", help="Train the RNN, CSLM: tune with them, WP.")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--report-only", action="store_true", help="Write the report from what is there; run nothing.")
    args = parser.parse_args()
    train, dev, test = SYSTEMS[args.system](args.data)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    system = out / "system"
    if not (system / "pysmt.toml").is_file() and not args.report_only:
        pysmt("train", *train, "--out", system)
    dev_lines = args.dev_lines or (300 if args.system == "multi30k" else None)
    first_lines(dev.with_suffix(".en"), out / "dev.en", dev_lines)
    first_lines(dev.with_suffix(".fr"), out / "dev.fr", dev_lines)
    features = ["--features", args.features] if args.features else []
    if args.neural:
        features = neural_features(system, out, args.neural, train=not args.report_only)
    optimizers, seeds = args.optimizers.split(","), [int(s) for s in args.seeds.split(",")]
    curves: dict[str, dict[int, list[float]]] = {}
    tests: dict[str, dict[int, float]] = {}
    for optimizer in optimizers:
        for seed in seeds:
            tune = out / f"tune-{optimizer}-seed{seed}"
            if not args.report_only:
                pysmt(
                    "tune", "-c", system / "pysmt.toml", "--src", out / "dev.en", "--ref", out / "dev.fr",
                    "--out", tune, "--optimizer", optimizer, "--seed", seed, "--max-iterations", args.iterations,
                    "--threads", args.threads, "--quiet", *features,
                )  # fmt: skip
            curves.setdefault(optimizer, {})[seed] = dev_curve(tune)[: args.iterations]
            tests.setdefault(optimizer, {})[seed] = test_bleu(
                tune, test.with_suffix(".en"), test.with_suffix(".fr"), decode=not args.report_only
            )
    lines = f"the first {dev_lines}" if dev_lines else "all"
    report = [f"# Optimizers on {args.system}: {lines} lines of {dev.name}, up to {args.iterations} iterations\n"]
    if features:
        report[0] = report[0].rstrip() + f", {features[0]} {features[1]}\n"
    for optimizer in optimizers:
        report += [f"\n## {optimizer}\n", "| seed | dev BLEU per iteration | lowest / start | test BLEU |"]
        report.append("|---|---|---|---|")
        for seed, curve in curves[optimizer].items():
            ratio = min(curve) / curve[0] if curve[0] else float("nan")
            report.append(
                f"| {seed} | {' → '.join(f'{b:.2f}' for b in curve)} | {ratio:.1%} | {tests[optimizer][seed]:.2f} |"
            )
        finals = [curve[-1] for curve in curves[optimizer].values()]
        report.append(
            f"\nlast dev BLEU {spread(finals)}; test BLEU {spread(list(tests[optimizer].values()))} (mean ± sd)"
        )
    with atomic_writer(out / "optimizers.md") as handle:
        handle.write("\n".join(report) + "\n")
    print("\n".join(report))
    if not available():
        print(MISSING, file=sys.stderr)
        return
    plt = pyplot()
    figure, axes = plt.subplots(1, len(optimizers), figsize=(4.2 * len(optimizers), 3.4), squeeze=False, sharey=True)
    for axis, optimizer in zip(axes[0], optimizers):
        for seed, curve in curves[optimizer].items():
            axis.plot(range(1, len(curve) + 1), curve, marker="o", label=f"seed {seed}")
        axis.set_title(f"--optimizer {optimizer}")
        axis.set_xlabel("iteration")
        axis.grid(alpha=0.3)
        axis.legend()
    axes[0][0].set_ylabel("dev BLEU")
    save_png(figure, out / "optimizers.png")


if __name__ == "__main__":
    main()
