"""Tuning for pysmt: BLEU statistics, MERT (Och 2003: upper-envelope line searches), k-best batch MIRA
(:mod:`tuning.kbmira`: ``from tuning.kbmira import kbmira``), PRO (:mod:`tuning.pro`), the n-best loop.

``tuning.optimize`` is the library entry point (usable without the decoder); ``pysmt tune`` runs
the outer loop of decoding and optimizing (:mod:`tuning.loop`). The optimizer (and numba, which its
line search compiles with) loads on first use of ``tuning.optimize``, so that ``pysmt tune``'s
command line is built without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tuning.optimizer import optimize

__all__ = ["optimize"]


def __getattr__(name: str) -> Any:
    if name == "optimize":
        from tuning.optimizer import optimize

        return optimize
    raise AttributeError(f"module 'tuning' has no attribute {name!r}")
