"""What the CSLM tests share: tiny hyperparameters and a toy target language.

The toy language is over the toy system's target words (``x y z``, from :mod:`pysmt.testing`), with
two rare words (``q r``) that stay outside a 5-entry shortlist. (A module with a name of its own, so
that imports never pick up another plugin's test modules; found through the ``pythonpath`` of the
repository's pytest configuration.)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from pysmt_cslm.hyperparameters import preset

#: Tiny sizes; a 5-entry softmax: [EOS], [UNK], x, y, z (q and r stay outside).
TINY = preset("default", embedding=8, hidden1=16, hidden2=12, shortlist=5, batch_size=16, learning_rate=0.01)
CPU = torch.device("cpu")
PATTERNS = ["x y z", "x y", "y z x", "z x y z", "x z", "y x y z x"]


def toy_text(path: Path, lines: int = 300, seed: int = 0, words: tuple[str, ...] = ("q", "r")) -> Path:
    """Sentences of x, y, z in a few patterns, with rare words sprinkled in (outside the shortlist)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(lines):
        sentence = PATTERNS[rng.integers(len(PATTERNS))].split()
        if rng.random() < 0.2:
            sentence.insert(int(rng.integers(len(sentence) + 1)), words[int(rng.integers(len(words)))])
        out.append(" ".join(sentence))
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path
