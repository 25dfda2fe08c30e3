"""Builds the CSLM's compiled module (``pysmt_cslm._network``, typed by the stub ``_network.pyi`` beside it):
its forward pass and its compiled scorer for pysmt's search. Everything else is in pyproject.toml.

The scorer implements pysmt's C interface ``pysmt/compiled_scorer.h`` and shares pysmt's n-gram
context table (``pysmt/context_table.hpp``): their headers come from the installed pysmt
(``pysmt.get_include()``), so pysmt-mt must be installed first and this package built in the same
environment (``pip install --no-build-isolation plugins/cslm``; pysmt-mt is not on PyPI, whose
``pysmt`` is another library).

Its three files are compiled in parallel (``$PYSMT_BUILD_JOBS``, default: all cores), with ``-Wall -Wextra``
(``PYSMT_WERROR=1``, as pysmt's CI sets it, makes a warning an error).
"""

import os
from pathlib import Path

from pybind11.setup_helpers import ParallelCompile, Pybind11Extension
from setuptools import setup

try:
    import pysmt
except ImportError:
    raise SystemExit(
        "pysmt-cslm builds against pysmt's headers: install pysmt-mt first, then this package with "
        "pip install --no-build-isolation"
    ) from None

HERE = Path(__file__).resolve().parent
WARNINGS = ["-Wall", "-Wextra", *(["-Werror"] if os.environ.get("PYSMT_WERROR") == "1" else [])]

ParallelCompile("PYSMT_BUILD_JOBS", default=0).install()

setup(
    ext_modules=[
        Pybind11Extension(
            "pysmt_cslm._network",
            ["pysmt_cslm/_network.cpp", "pysmt_cslm/_scorer.cpp", "pysmt_cslm/_bindings.cpp"],
            include_dirs=[str(HERE), pysmt.get_include()],
            depends=["pysmt_cslm/_network.hpp", "pysmt_cslm/_scorer.hpp"],
            cxx_std=17,
            # no fused multiply-adds: the scalar and vector clones of a loop must round alike (see the source)
            extra_compile_args=["-O3", "-ffp-contract=off", *WARNINGS],
        ),
    ]
)
