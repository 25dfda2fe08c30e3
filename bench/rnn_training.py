"""The RNN Encoder-Decoder's training throughput: updates/s and pairs/s, before and after a change.

    python -m bench.rnn_training --table PAIRS.gz --out DIR [--before WORKTREE] [--presets default,paper]
        [--threads 1,2] [--updates default=150,paper=20]

For each code tree (this one, and ``--before``: a worktree of an older commit, e.g. ``git worktree
add ../base HEAD~5``), each preset, each torch thread count, alone and beside one busy process (a
Python busy loop on the other core), it trains ``pysmt rnn train``'s ``train()`` on ``--table`` in
a fresh process: a short warm-up run, then a resumed run of ``--updates`` more, timed by the training
loop's own clock (the seconds of training each checkpoint records: the updates, not the loading of
the pairs, the building of the model or the writing of checkpoints, which a short run would
overweigh: several seconds for the paper's model). It
prints one line per run and a table of pairs/s with the after/before ratio, and the epochs an hour
of that training gives on 5.47 M pairs (the whole table of `pysmt train --preset news`) and on the
0.65 M of them `pysmt rnn train --pairs-for` keeps for newstest2012 and newstest2013. Results go
to ``DIR/results.jsonl`` as they come; a rerun skips the runs already there, so the command resumes.
The code before the change needs its compiled core built in its worktree (its training imported it).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.torch_threads import busy_neighbour

ROOT = Path(__file__).resolve().parents[1]
WARMUP = 5
TABLE_PAIRS = {"the whole news table (5.47 M pairs)": 5_472_892, "filtered to newstest2012 + 2013 (0.65 M)": 650_421}

RUN = """
import json, sys, time
import torch
torch.set_num_threads({threads})
from pysmt.neural import TrainingLimits
from rnn_feature.hyperparameters import preset
from rnn_feature.training import train
hp = preset({preset!r})
out, table, cpu = {out!r}, {table!r}, torch.device("cpu")
limits = lambda n: TrainingLimits(max_updates=n, valid_every=10**9, checkpoint_every=10**9)
seconds = lambda: torch.load(out + "/last.pt", map_location="cpu", weights_only=False)["seconds"]
train(table, out, hp, cpu, limits({warmup}))
before = seconds()
train(table, out, hp, cpu, limits({warmup} + {updates}))
print(json.dumps({{"seconds": seconds() - before, "batch": hp.batch_size}}))
"""


def measure(tree: Path, table: Path, preset: str, threads: int, updates: int) -> dict[str, float]:
    """Seconds for ``updates`` training updates by the code in ``tree`` (a fresh process and folder)."""
    with tempfile.TemporaryDirectory() as out:
        code = RUN.format(threads=threads, preset=preset, out=out, table=str(table), warmup=WARMUP, updates=updates)
        env = {"PYTHONPATH": f"{tree}:{tree / 'plugins' / 'rnn_feature'}", "PATH": "/usr/bin:/bin"}
        env.update({"OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)})
        done = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False, cwd=tree
        )
        if done.returncode:
            raise SystemExit(f"{tree}: training failed:\n{done.stderr[-3000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", type=Path, required=True, help="a Moses phrase table to train on")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--before", type=Path, help="a worktree of the code before the change")
    parser.add_argument("--presets", default="default,paper")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--updates", default="default=150,paper=20", help="timed updates per preset")
    args = parser.parse_args()
    updates = {name: int(n) for name, n in (item.split("=") for item in args.updates.split(","))}
    trees = {"after": ROOT} | ({"before": args.before.resolve()} if args.before else {})
    args.out.mkdir(parents=True, exist_ok=True)
    results_file = args.out / "results.jsonl"
    results = [json.loads(line) for line in results_file.read_text().splitlines()] if results_file.exists() else []
    done = {(r["tree"], r["preset"], r["threads"], r["busy"]) for r in results}
    for preset in args.presets.split(","):
        for threads in (int(t) for t in args.threads.split(",")):
            for busy in (False, True):
                for label, tree in trees.items():
                    if (label, preset, threads, busy) in done:
                        continue
                    with busy_neighbour(busy):
                        timing = measure(tree, args.table.resolve(), preset, threads, updates[preset])
                    n = updates[preset]
                    row = {
                        "tree": label,
                        "preset": preset,
                        "threads": threads,
                        "busy": busy,
                        "updates": n,
                        "updates_s": n / timing["seconds"],
                        "pairs_s": n * timing["batch"] / timing["seconds"],
                    }
                    print(json.dumps(row), flush=True)
                    results.append(row)
                    with open(results_file, "a", encoding="utf-8") as handle:
                        handle.write(json.dumps(row) + "\n")
    report(results)


def report(results: list[dict]) -> None:
    """pairs/s per configuration, after/before, and the epochs an hour gives."""
    by = {(r["tree"], r["preset"], r["threads"], r["busy"]): r for r in results}
    print(
        "\n| preset | threads | beside a busy process | before: updates/s, pairs/s | after: updates/s, pairs/s "
        "| after/before | epochs/hour (after): " + ", ".join(TABLE_PAIRS) + " |"
    )
    print("|---|---|---|---|---|---|---|")
    for (tree, preset, threads, busy), after in sorted(by.items()):
        if tree != "after":
            continue
        before = by.get(("before", preset, threads, busy))
        old = f"{before['updates_s']:.2f}, {before['pairs_s']:.0f}" if before else "-"
        ratio = f"{after['pairs_s'] / before['pairs_s']:.2f}x" if before else "-"
        epochs = ", ".join(f"{after['pairs_s'] * 3600 / n:.2f}" for n in TABLE_PAIRS.values())
        print(
            f"| {preset} | {threads} | {'yes' if busy else 'no'} | {old} | "
            f"{after['updates_s']:.2f}, {after['pairs_s']:.0f} | {ratio} | {epochs} |"
        )


if __name__ == "__main__":
    main()
