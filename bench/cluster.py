"""What ``--cluster`` costs and gains against local decoding: wall time per sentence, model loading excluded.

    python bench/cluster.py                          # moses-news, first 300 lines, cube pruning
    python bench/cluster.py --lines 500 --search normal
    python bench/cluster.py --address HOST:PORT      # an existing cluster instead of a local one

Runs, on the same input: one local process; the local pool (``--threads 2``); the cluster with 1
and with 2 decoder actors (``--cluster local`` starts a Ray instance on this machine). Every run's
output is checked to be the same. A first local pass warms the decoder's caches, which the forked
local workers inherit (actors build their own, which their first shard fills). The per-sentence
overhead is (cluster with 1 actor - one local process) / lines: shipping shards and translations,
and Ray's scheduling; "cold" is an actor's first pass (its caches empty), "warm" its second (as in
every MERT iteration after the first).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from pysmt.config_files import configure_system
from pysmt.decoder import Decoder, SystemRecipe
from pysmt.decoding.cluster import Cluster
from pysmt.decoding.runner import translate_stream

ROOT = Path(__file__).resolve().parents[1]

SYSTEM = ROOT.parent / "shared" / "data" / "moses-news"


def timed(run) -> tuple[float, list[str]]:
    outputs: list[str] = []
    start = time.perf_counter()
    run(lambda translation: outputs.append(translation.output))
    return time.perf_counter() - start, outputs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-c", "--config", default=str(SYSTEM / "model" / "moses.ini"))
    parser.add_argument("-i", "--input", default=str(SYSTEM / "inputs" / "newstest2013.first500.tok.true.en"))
    parser.add_argument("--lines", type=int, default=300)
    parser.add_argument("--search", choices=["normal", "cube"], default="cube")
    parser.add_argument("--address", default="local")
    args = parser.parse_args()
    lines = list(enumerate(Path(args.input).read_text(encoding="utf-8").splitlines()[: args.lines]))
    words = sum(len(line.split()) for _, line in lines)
    decoder = Decoder(configure_system(args.config), algorithm=args.search)  # type: ignore[arg-type]
    timed(lambda emit: translate_stream(decoder, lines, emit, process=False))  # warm-up: the caches every run may use
    runs = {}
    for threads in (1, 2):
        runs[f"local, {threads} process(es)"] = timed(
            lambda emit, threads=threads: translate_stream(decoder, lines, emit, threads=threads, process=False)
        )
    recipe = SystemRecipe(args.config, algorithm=args.search)
    for actors in (1, 2):
        with Cluster(args.address, recipe, actors=actors) as cluster:
            for actor in cluster.actors:  # loaded before the clock starts, as the local decoder is
                cluster.call(actor.ready.remote())
            for state in ("cold", "warm"):  # actors' caches empty, then filled (as from MERT's 2nd iteration on)
                runs[f"cluster, {actors} actor(s), {state}"] = timed(
                    lambda emit, cluster=cluster: cluster.translate(lines, emit, process=False)
                )
    reference = runs["local, 1 process(es)"][1]
    print(f"{len(lines)} lines, {words:,} source words, {args.search} search, {Path(args.config).parent.name}")
    for name, (seconds, outputs) in runs.items():
        same = "same output" if outputs == reference else "DIFFERENT OUTPUT"
        print(
            f"{name:32s} {seconds:7.2f} s  {1000 * seconds / len(lines):6.1f} ms/sentence  "
            f"{words / seconds:6.0f} words/s  {same}"
        )
    for state in ("cold", "warm"):
        overhead = runs[f"cluster, 1 actor(s), {state}"][0] - runs["local, 1 process(es)"][0]
        print(
            f"cluster overhead, {state}: {1000 * overhead / len(lines):.2f} ms per sentence (1 actor against 1 "
            "local process with warm caches)"
        )


if __name__ == "__main__":
    main()
