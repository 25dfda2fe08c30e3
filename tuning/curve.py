"""``pysmt tune``'s curve, ``curve.png``: the dev BLEU of each iteration's decode, and the BLEU the optimizer
predicted on the pool for the weights the next iteration decodes with (where the two part, the pool did not
describe where the weights went)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from pysmt.files.figures import pyplot, save_png


def tuning_curve(dev_bleu: Sequence[float], predicted: Sequence[float], title: str, path: Path) -> None:
    """Draw iteration ``i + 1``'s ``dev_bleu[i]``, and ``predicted[i]`` at iteration ``i + 2`` (nan: none)."""
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(6, 3.6))
    iterations = range(1, len(dev_bleu) + 1)
    axis.plot(iterations, dev_bleu, marker="o", label="dev BLEU (decoded)")
    shown = [(i + 1, p) for i, p in zip(iterations, predicted) if not math.isnan(p)]
    if shown:
        axis.plot(*zip(*shown), marker="x", linestyle="--", label="predicted on the pool")
    axis.set_xlabel("iteration")
    axis.set_ylabel("BLEU")
    axis.set_title(title)
    axis.xaxis.get_major_locator().set_params(integer=True)
    axis.grid(alpha=0.3)
    axis.legend()
    save_png(figure, path)
