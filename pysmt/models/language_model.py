"""KenLM n-gram models (ARPA or binary) through the ``kenlm`` module's stateful API."""

from __future__ import annotations

import math
from pathlib import Path

import kenlm

from pysmt.errors import PysmtError

#: KenLM scores are log10; Moses' ``TransformLMScore`` turns them into natural logs.
LOG10_TO_LN = math.log(10.0)


def load_kenlm(path: str | Path) -> kenlm.Model:
    """Load an ARPA or KenLM binary file, turning KenLM's exceptions into a clear error."""
    path = Path(path)
    if not path.is_file():
        raise PysmtError(f"{path}: no such file")
    try:
        return kenlm.Model(str(path))
    except (OSError, RuntimeError, ValueError) as err:
        raise PysmtError(f"{path}: not a valid ARPA or KenLM binary model ({err})") from None
