"""MERT for pysmt (Och 2003): BLEU statistics, upper-envelope line search, the n-best loop.

``tuning.optimize`` is the library entry point (usable without the decoder); ``pysmt tune`` runs
the outer loop of decoding and optimizing (:mod:`tuning.loop`).
"""

from tuning.optimizer import optimize

__all__ = ["optimize"]
