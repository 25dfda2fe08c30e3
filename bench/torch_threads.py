"""torch's thread count: decoding with a torch feature and training the networks, alone and beside a busy job.

    python bench/torch_threads.py --run RUN_DIR [--lines 100] [--updates 60]

RUN_DIR is a `pysmt experiment` folder (its binarized system, `rnn/` and `cslm/`; `--scale small` makes
one in minutes). For each torch intra-op thread count (1: pysmt's policy for decoding processes; the
machine's CPU count: torch's own default, and pysmt's default for training) it measures, alone and
next to one competing process that keeps a core busy (a Python busy loop):

* decoding the first `--lines` of newstest2013 with `--features rnn` (the RNN scores every option
  of a sentence in one torch batch): wall seconds per sentence, in one process;
* `pysmt cslm train` and `pysmt rnn train` for `--updates` updates: updates per wall second.

Training runs also with ``OMP_WAIT_POLICY=PASSIVE`` (OpenMP threads sleep instead of spinning while
they wait), to see whether spinning is what a busy neighbour makes costly.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[1]
NEWSTEST = ROOT.parent / "shared" / "data" / "news" / "newstest2013.en"


@contextmanager
def busy_neighbour(on: bool) -> Iterator[None]:
    """One other process keeping a core busy, for the ``with`` block."""
    process = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if on else None
    try:
        yield
    finally:
        if process is not None:
            process.kill()
            process.wait()


def decode_seconds(config: str, rnn: str, lines: int, threads: int) -> dict:
    """In this process: seconds per sentence of decoding with the RNN feature on ``threads`` torch threads."""
    import torch

    from pysmt.config_files import configure_system
    from pysmt.decoder import Decoder

    decoder = Decoder(configure_system(config, ["rnn"], [f"rnn.model={rnn}", "rnn.device=cpu"]), missing_weight=0.1)
    torch.set_num_threads(threads)  # after the Decoder, which sets pysmt's policy (one thread)
    sentences = [decoder.preprocess(s) for s in NEWSTEST.read_text(encoding="utf-8").splitlines()[:lines]]
    start, cpu = time.perf_counter(), time.process_time()
    for k, sentence in enumerate(sentences):
        decoder.translate(sentence, k)
    wall = time.perf_counter() - start
    return {
        "ms_per_sentence": round(1000 * wall / lines, 1),
        "cpu_per_wall": round((time.process_time() - cpu) / wall, 2),
    }


def training_rate(command: list[str], threads: int, passive: bool) -> float:
    """Updates per wall second of a training command (``--max-updates`` given), from a fresh folder."""
    env = {key: value for key, value in os.environ.items() if key not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    if passive:
        env["OMP_WAIT_POLICY"] = "PASSIVE"
    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "pysmt", *command, "--out", out, "--threads", str(threads), "--device", "cpu"],
            capture_output=True,
            text=True,
            env=env,
        )
        wall = time.perf_counter() - start
    if proc.returncode:
        raise SystemExit(proc.stderr)
    updates = int(re.search(r"--max-updates (\d+)", " ".join(command)).group(1))  # type: ignore[union-attr]
    return round(updates / wall, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", required=True, help="a pysmt experiment folder")
    parser.add_argument("--lines", type=int, default=100)
    parser.add_argument("--updates", type=int, default=60)
    parser.add_argument("--decode-one", nargs=2, metavar=("THREADS", "BUSY"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    run = Path(args.run)
    config = str(run / "system-bin" / "pysmt.toml")
    if args.decode_one:
        threads, busy = int(args.decode_one[0]), args.decode_one[1] == "1"
        with busy_neighbour(busy):
            print(json.dumps(decode_seconds(config, str(run / "rnn"), args.lines, threads)))
        return
    cpus = len(os.sched_getaffinity(0))
    print(f"system {config}; {cpus} CPUs; torch threads 1 (pysmt's decoding policy) and {cpus} (torch's default)")
    print(f"\ndecode --features rnn, {args.lines} lines of newstest2013, one process")
    print(f"{'torch threads':>13} {'neighbour':>10} {'ms/sentence':>12} {'CPU/wall':>9}")
    for busy in (False, True):
        for threads in (1, cpus):
            out = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--run",
                    args.run,
                    "--lines",
                    str(args.lines),
                    "--decode-one",
                    str(threads),
                    str(int(busy)),
                ],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            r = json.loads(out.strip().splitlines()[-1])
            neighbour = "busy" if busy else "none"
            print(f"{threads:13d} {neighbour:>10} {r['ms_per_sentence']:12.1f} {r['cpu_per_wall']:9.2f}")
    text = run / "system" / "corpus" / "train.fr"
    table = run / "system" / "phrase-table.gz"
    limits = ["--max-updates", str(args.updates), "--valid-every", str(10 * args.updates)]
    commands = {
        "cslm train": ["cslm", "train", "--text", str(text), *limits],
        "rnn train": ["rnn", "train", "--phrase-table", str(table), *limits],
    }
    print(f"\ntraining, {args.updates} updates from scratch (start-up included): updates per wall second")
    print(f"{'command':>11} {'torch threads':>13} {'wait policy':>11} {'alone':>7} {'busy neighbour':>15}")
    for name, command in commands.items():
        for threads, passive in ((1, False), (cpus, False), (cpus, True)):
            rates = []
            for busy in (False, True):
                with busy_neighbour(busy):
                    rates.append(training_rate(command, threads, passive))
            policy = "passive" if passive else "default"
            print(f"{name:>11} {threads:13d} {policy:>11} {rates[0]:7.2f} {rates[1]:15.2f}")


if __name__ == "__main__":
    main()
