"""What the RNN plugin's tests share: tiny hyperparameters and a toy phrase table.

The toy language translates English number words into French ones, word for word. (A module with a
name of its own, so that imports never pick up another plugin's test modules; found through the
``pythonpath`` of the repository's pytest configuration.)
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np

from rnn_feature.hyperparameters import preset

TINY = preset(
    "default", hidden=16, embedding=8, maxout=8, output_rank=4, source_shortlist=30, target_shortlist=30, batch_size=16
)
WORDS = ["un", "deux", "trois", "quatre", "cinq", "six"]
ENGLISH = ["one", "two", "three", "four", "five", "six"]


def toy_table(path: Path, n: int = 200, seed: int = 0, source: list[str] = ENGLISH, target: list[str] = WORDS) -> Path:
    """A word-for-word toy language: English number words translated to French ones, 1-3 words (258 pairs exist)."""
    rng = np.random.default_rng(seed)
    lines = set()
    while len(lines) < n:
        k = rng.integers(0, len(source), rng.integers(1, 4))
        pair = f"{' '.join(source[i] for i in k)} ||| {' '.join(target[i] for i in k)}"
        lines.add(f"{pair} ||| 0.5 0.5 0.5 0.5 ||| ||| 1 1 1")
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.write("\n".join(sorted(lines)) + "\n")
    return path
