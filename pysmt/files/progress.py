"""Progress bars on stderr, as a command's user expects them: on a terminal only, and never after ``--quiet``.

tqdm's ``disable=None`` leaves a bar out when stderr is not a terminal, so that a redirected log
gets a command's lines, not carriage-return updates. ``--quiet`` is a setting of the whole command
(a model's loading bar is deep inside the decoder it builds), so it is this module's one switch.
"""

from __future__ import annotations

import sys
from typing import Any

from tqdm import tqdm

#: Set by a command's ``--quiet``: no bar at all.
quiet = False


def progress_bar(**options: Any) -> tqdm:
    """A tqdm bar on stderr (``options`` as tqdm takes them), shown only on a terminal and without ``--quiet``."""
    return tqdm(file=sys.stderr, disable=True if quiet else None, **options)
