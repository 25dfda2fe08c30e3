"""Figures as PNG files, for whatever draws them (the experiment's report, ``pysmt tune``'s curve).

matplotlib is optional (the RNN plugin's ``[analysis]`` extra installs it, and ``setup.sh``): without it no
figure is drawn and the caller says so (:data:`MISSING`), since every number is also in a table.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from pysmt.files.textio import atomic_path

MISSING = "matplotlib is not installed (pip install -e 'plugins/rnn_feature[analysis]'), so no figures were drawn"


def available() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def pyplot() -> Any:
    """matplotlib.pyplot on its file-only backend, imported only when drawing."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_png(figure: Any, path: Path) -> None:
    """Write ``figure`` to ``path`` atomically, and close it."""
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    pyplot().close(figure)
