"""KenLM n-gram models (ARPA or binary), queried through KenLM's C++ API in the compiled core.

The model is loaded once by :class:`pysmt._core.LanguageModel` (``pysmt/models/_kenlm.cpp``), which
both the compiled search and the Python reference search query, so both see the same numbers.
"""

from __future__ import annotations

import math
from pathlib import Path

from pysmt._core import LanguageModel
from pysmt.errors import PysmtError
from pysmt.files.progress import quiet_native_output
from pysmt.files.textio import compression_of, open_binary, raw_lines, require_file

#: KenLM scores are log10; Moses' ``TransformLMScore`` turns them into natural logs.
LOG10_TO_LN = math.log(10.0)


#: How every KenLM binary model begins (whatever its data structure).
KENLM_BINARY = b"mmap lm "
#: The first line of an ARPA file with content (blank lines may come before it).
ARPA_START = b"\\data\\"


def check_model_file(path: str | Path) -> None:
    """Refuse, by its first bytes, a file that is neither an ARPA file (plain or compressed) nor a KenLM binary:
    a phrase table given as the LM is found in milliseconds, before the tables load, not after."""
    path = require_file(path)
    if compression_of(path) is None:
        with open(path, "rb") as handle:
            if handle.read(len(KENLM_BINARY)) == KENLM_BINARY:
                return
    with open_binary(path) as handle:
        first = next((raw.strip() for _, raw in raw_lines(handle, path) if raw.strip()), b"")
    if first != ARPA_START:
        shown = first[:40].decode("utf-8", errors="replace")
        raise PysmtError(
            f"{path}: not an ARPA file or a KenLM binary model (it begins with {shown!r}, not "
            f"\\data\\ or KenLM's binary header)"
        )


def load_kenlm(path: str | Path) -> LanguageModel:
    """Load an ARPA or KenLM binary file, turning KenLM's exceptions into a clear error."""
    path = require_file(path)
    try:
        with quiet_native_output():  # KenLM's messages and bar, left out with --quiet
            return LanguageModel(str(path))
    except (OSError, RuntimeError, ValueError) as err:
        reason = " ".join(str(err).split())[:300]
        raise PysmtError(f"{path}: not a valid ARPA or KenLM binary model ({reason})") from None
