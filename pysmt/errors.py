"""User-facing errors.

Everything a user can cause (a missing file, a malformed model line, a weight count that does not
match) raises :class:`PysmtError`; the command line prints its message without a traceback.
"""

from __future__ import annotations

from pathlib import Path


class PysmtError(Exception):
    """An error caused by the user's input or configuration, reported as one clear line."""


class FeatureError(PysmtError):
    """A feature (a plugin) returned what the search cannot use: named by feature, method and request.

    The decoder adds the input line it was translating.
    """


def at_line(path: str | Path, line_no: int, message: str) -> PysmtError:
    """An error that names the file and the (1-based) line where the problem is."""
    return PysmtError(f"{path}, line {line_no}: {message}")
