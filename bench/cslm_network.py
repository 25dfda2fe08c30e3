"""The CSLM's hidden layers alone: nanoseconds a context for each version of the compiled inner loops.

    python bench/cslm_network.py --model SYSTEM/cslm --text SYSTEM/corpus/train.fr

The contexts are the text's own 6-grams (the first ``--lines`` lines, shuffled with a fixed seed, so
that consecutive contexts are as unrelated as a decoder's), mapped to the model's input ids. Each
version (``pysmt_cslm._network.kernel_versions()``: AVX-512, AVX2, portable, as this processor runs
them) computes the same numbers; the fastest of ``--repeat`` passes counts (wall time, one thread).
Also printed: the share of first-layer units the rectifier leaves positive (the rows of the second
layer's weights a context reads).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, help="CSLM model folder")
    parser.add_argument("--text", required=True, help="prepared target-language text")
    parser.add_argument("--lines", type=int, default=20_000)
    parser.add_argument("--contexts", type=int, default=300_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    import torch

    from pysmt_cslm._network import kernel_versions
    from pysmt_cslm.scoring import Scorer
    from pysmt_cslm.store import load_model
    from pysmt_cslm.vocabulary import BOS_ID, UNK_ID

    torch.set_num_threads(1)
    loaded = load_model(args.model, "cpu")
    scorer, width = Scorer(loaded.model), loaded.model.hp.context
    grams = []
    with open(args.text, encoding="utf-8") as text:
        for _, line in zip(range(args.lines), text):
            ids = [BOS_ID] * width + [loaded.shortlist.ids.get(w, UNK_ID) for w in line.split()]
            grams += [ids[j - width : j] for j in range(width, len(ids) + 1)]
    contexts = np.array(grams, dtype=np.int32)
    contexts = contexts[np.random.default_rng(0).permutation(len(contexts))[: args.contexts]]
    hp = loaded.model.hp
    print(
        f"model: {args.model} (embedding {hp.embedding} x {width}, hidden {hp.hidden1}, {hp.hidden2}); "
        f"{len(contexts):,} contexts"
    )
    with torch.inference_mode():
        units = loaded.model.hidden1(loaded.model.embedding(torch.from_numpy(contexts[:20_000]).long()).flatten(1))
    print(f"first-layer units positive: {float((units > 0).float().mean()):.1%}")
    for version in kernel_versions():
        best = min(timed(scorer.network.hidden, contexts, version) for _ in range(args.repeat))
        print(f"{version:9} {1e9 * best / len(contexts):7.0f} ns a context")


def timed(hidden, contexts: np.ndarray, version: str) -> float:  # noqa: ANN001 - Network.hidden
    start = time.perf_counter()
    hidden(contexts, version)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
