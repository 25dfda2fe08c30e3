"""MERT optimizer time: 3,000 sentences x 100-best x 15 features, accumulated over 10 iterations.

    python bench/mert.py                        # the issue's size: up to 1,000 candidates a sentence
    python bench/mert.py --sentences 300        # quicker
    python bench/mert.py --distinct 0.5         # half of each new 100-best already in the pool

Synthetic n-best lists stand in for real ones: each iteration adds a 100-best per sentence whose
features are drawn around a moving weight vector, a share of them (``--distinct``) new and the rest
repeats of earlier candidates (real pools repeat a lot; 1.0, no repeats, is the worst case). The
BLEU statistics follow a hidden quality score. It prints process time (one core) of
``tuning.optimize`` with its defaults (20 random restarts) and the pool size; with ``--processes N``
the starts climb on N local processes (as ``pysmt tune --threads N`` climbs them) and it prints wall
time as well.
"""

from __future__ import annotations

import argparse
import os
import time
from functools import partial

for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[variable] = "1"  # the target is for one core

import numpy as np  # noqa: E402

from pysmt.running.parallel import map_with_shared  # noqa: E402
from tuning import optimize  # noqa: E402


def synthetic_pools(
    sentences: int, nbest: int, features: int, iterations: int, distinct: float, seed: int
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    hidden = rng.normal(size=features)
    pools_f: list[list[np.ndarray]] = [[] for _ in range(sentences)]
    for _ in range(iterations):
        for s in range(sentences):
            fresh = max(1, int(round(nbest * distinct))) if pools_f[s] else nbest
            pools_f[s].append(rng.normal(size=(fresh, features)))
    all_f, all_s = [], []
    for s in range(sentences):
        f = np.vstack(pools_f[s])
        length = rng.integers(10, 40, size=len(f)).astype(float)
        quality = 1 / (1 + np.exp(-(f @ hidden) / np.sqrt(features)))
        stats = np.zeros((len(f), 9))
        for n in range(4):
            stats[:, 2 * n + 1] = np.maximum(length - n, 0)
            stats[:, 2 * n] = np.floor(stats[:, 2 * n + 1] * quality * (0.6**n))
        stats[:, 8] = 25
        all_f.append(f)
        all_s.append(stats)
    return all_f, all_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=3000)
    parser.add_argument("--nbest", type=int, default=100)
    parser.add_argument("--features", type=int, default=15)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--distinct", type=float, default=1.0, help="share of each new n-best not seen before")
    parser.add_argument("--restarts", type=int, default=20)
    parser.add_argument("--processes", type=int, default=1, help="local processes climbing the starts")
    args = parser.parse_args()
    features, stats = synthetic_pools(args.sentences, args.nbest, args.features, args.iterations, args.distinct, 0)
    candidates = sum(len(f) for f in features)
    init = np.full(args.features, 0.1)
    start, wall = time.process_time(), time.perf_counter()
    weights, value = optimize(
        features, stats, init, restarts=args.restarts, mapper=partial(map_with_shared, processes=args.processes)
    )
    elapsed, wall = time.process_time() - start, time.perf_counter() - wall
    print(
        f"{args.sentences} sentences, {candidates:,} candidates ({candidates / args.sentences:.0f} a sentence), "
        f"{args.features} features, {args.restarts} restarts"
    )
    if args.processes > 1:  # the workers' time is not the parent's process time
        print(f"optimize: {wall:.1f} s wall time on {args.processes} processes, dev BLEU {value:.2f}")
    else:
        print(f"optimize: {elapsed:.1f} s process time, {wall:.1f} s wall time, dev BLEU {value:.2f}")


if __name__ == "__main__":
    main()
