"""The report's figures as PNG: learning curves of the neural models, BLEU per configuration with error bars.

matplotlib is optional (the RNN plugin's ``[analysis]`` extra installs it): without it the figures
are left out and the report says so, since the numbers are all in the tables and results.json.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from pysmt.files.figures import pyplot, save_png


def learning_curves(curves: Mapping[str, Sequence[tuple[int, float]]], path: Path) -> None:
    """Validation perplexity against updates, one panel per model (``{"RNN": [(update, ppl), ...], ...}``)."""
    plt = pyplot()
    figure, axes = plt.subplots(1, len(curves), figsize=(5 * len(curves), 3.6), squeeze=False)
    for axis, (name, points) in zip(axes[0], curves.items()):
        if points:
            axis.plot([u for u, _ in points], [p for _, p in points], marker="o")
        axis.set_title(f"{name}: validation perplexity")
        axis.set_xlabel("updates")
        axis.set_ylabel("perplexity per token")
        axis.grid(alpha=0.3)
    save_png(figure, path)


def bleu_chart(labels: Sequence[str], series: Mapping[str, Sequence[tuple[float, float | None]]], path: Path) -> None:
    """Grouped bars of mean BLEU with ± sd error bars: ``series`` maps a set's name to (mean, sd) per label.

    An sd of None (one seed) draws no error bar.
    """
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(1.8 + 1.6 * len(labels), 3.8))
    width = 0.8 / max(len(series), 1)
    for k, (name, values) in enumerate(series.items()):
        positions = [i + (k - (len(series) - 1) / 2) * width for i in range(len(labels))]
        axis.bar(
            positions,
            [m for m, _ in values],
            width,
            yerr=[0.0 if sd is None else sd for _, sd in values],
            capsize=4,
            label=name,
        )
    axis.set_xticks(range(len(labels)), labels)
    axis.set_ylabel("BLEU (mean ± sd over seeds)")
    axis.legend()
    axis.grid(axis="y", alpha=0.3)
    save_png(figure, path)
