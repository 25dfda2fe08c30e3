"""How Moses turns the probabilities stored in its tables into log-linear feature values."""

from __future__ import annotations

import numpy as np

#: Moses' ``LOWEST_SCORE``: the floor of every logged probability (log 0 would be -inf).
LOWEST_SCORE = -100.0


def log_probabilities(values: np.ndarray) -> np.ndarray:
    """Moses' ``FloorScore(TransformScore(p))``: natural log, floored at -100, in float32 like Moses."""
    with np.errstate(divide="ignore"):
        logged = np.log(values.astype(np.float32))
    return np.maximum(logged, np.float32(LOWEST_SCORE))
