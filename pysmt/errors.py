"""User-facing errors.

Everything a user can cause (a missing file, a malformed model line, a weight count that does not
match) raises :class:`PysmtError`; the command line prints its message without a traceback.
"""

from __future__ import annotations

import difflib
import re
import shlex
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, requires
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


def did_you_mean(given: str, known: Iterable[str], shown: str = "{!r}") -> str:
    """`` (did you mean 'x'?)`` when ``given`` is close to one of ``known`` (a misspelling), else ``""``: an
    unknown name is most often a typo, and the nearest known name is the fix. ``shown`` formats the
    suggestion (``"[{}]"`` for a section)."""
    close = difflib.get_close_matches(given, list(known), n=1)
    return f" (did you mean {shown.format(close[0])}?)" if close else ""


def missing_extra(what: str, extra: str) -> PysmtError:
    """An error that says which packages ``what`` needs: those of pysmt-mt's optional extra ``extra``, with the
    versions pyproject.toml gives them (read from the installed distribution). Never ``pip install
    'pysmt-mt[extra]'``: pysmt-mt is on no package index (PyPI's ``pysmt`` is another library)."""
    try:
        listed = requires("pysmt-mt") or []
    except PackageNotFoundError:  # run from a source folder, never installed
        listed = []
    marker = re.compile(rf"""^([^;]+?)\s*;\s*extra\s*==\s*["']{re.escape(extra)}["']\s*$""")
    packages = [found.group(1) for line in listed if (found := marker.match(line))]
    how = f"pip install {' '.join(map(shlex.quote, packages))}" if packages else "see its pyproject.toml"
    return PysmtError(f"{what} needs pysmt-mt's optional extra '{extra}': {how}")
