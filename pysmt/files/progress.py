"""Progress bars on stderr, as a command's user expects them: on a terminal only, and never after ``--quiet``.

tqdm's ``disable=None`` leaves a bar out when stderr is not a terminal, so that a redirected log
gets a command's lines, not carriage-return updates. ``--quiet`` is a setting of the whole command
(a model's loading bar is deep inside the decoder it builds), so it is this module's one switch.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # tqdm is imported when a bar is made: every command's start reads this module
    from tqdm import tqdm

#: Set by a command's ``--quiet``: no bar at all.
quiet = False


def progress_bar(iterable: Any = None, *, shown: bool = True, **options: Any) -> tqdm:
    """A tqdm bar on stderr (``iterable`` and ``options`` as tqdm takes them), shown only on a terminal, without
    ``--quiet``, and where ``shown``."""
    from tqdm import tqdm

    return tqdm(iterable, file=sys.stderr, disable=True if quiet or not shown else None, **options)


@contextmanager
def quiet_native_output() -> Iterator[None]:
    """With ``--quiet``, what compiled code writes to stderr inside (KenLM's loading messages and bar) goes nowhere.

    Errors still reach the user: compiled code raises them as exceptions, which the caller reports after this.
    """
    if not quiet:
        yield
        return
    with stderr_muted():
        yield


@contextmanager
def stderr_muted() -> Iterator[None]:
    """File descriptor 2 sent to /dev/null for a moment: what compiled code (KenLM, Ray) writes there, not
    Python's ``sys.stderr`` alone, goes nowhere."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as nowhere:
            os.dup2(nowhere.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
