"""MERT for pysmt (Och 2003): BLEU statistics, upper-envelope line search, the n-best loop.

The library is filled in by the MERT issue; the package exists so the layout is importable.
"""
