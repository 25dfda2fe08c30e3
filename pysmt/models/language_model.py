"""KenLM n-gram models (ARPA or binary), queried through KenLM's C++ API in the compiled core.

The model is loaded once by :class:`pysmt._core.LanguageModel` (``pysmt/models/_kenlm.cpp``), which
both the compiled search and the Python reference search query, so both see the same numbers.
"""

from __future__ import annotations

import math
from pathlib import Path

from pysmt._core import LanguageModel
from pysmt.errors import PysmtError

#: KenLM scores are log10; Moses' ``TransformLMScore`` turns them into natural logs.
LOG10_TO_LN = math.log(10.0)


def load_kenlm(path: str | Path) -> LanguageModel:
    """Load an ARPA or KenLM binary file, turning KenLM's exceptions into a clear error."""
    path = Path(path)
    if not path.is_file():
        raise PysmtError(f"{path}: no such file")
    try:
        return LanguageModel(str(path))
    except (OSError, RuntimeError, ValueError) as err:
        reason = " ".join(str(err).split())[:300]
        raise PysmtError(f"{path}: not a valid ARPA or KenLM binary model ({reason})") from None
