"""Benchmarks that print figures (the README's *Benchmarks*), run as scripts: ``python bench/NAME.py``.

``pair_counting`` uses ``train``'s memory measure, so it runs as a module, from the repository's folder:
``python -m bench.pair_counting``.
"""
