"""pysmt: phrase-based statistical machine translation with Moses-compatible models and feature plugins."""

from pysmt import _moved

__version__ = "0.1.0"
_moved.install()  # modules that moved into the layers' folders keep their old names (deprecated)


def get_include() -> str:
    """The folder of pysmt's C and C++ headers, for plugins that compile against them (as ``numpy.get_include()``):
    ``pysmt/compiled_scorer.h`` (a compiled scorer for the search) and ``pysmt/context_table.hpp``."""
    from pathlib import Path

    return str(Path(__file__).resolve().parent / "include")
