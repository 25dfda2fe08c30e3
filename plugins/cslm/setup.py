"""Builds the CSLM's compiled forward pass (``pysmt_cslm._network``, typed by the stub ``_network.pyi``
beside it); everything else is in pyproject.toml."""

from pybind11.setup_helpers import Pybind11Extension
from setuptools import setup

setup(ext_modules=[
    Pybind11Extension("pysmt_cslm._network", ["pysmt_cslm/_network.cpp"], cxx_std=17,
                      # no fused multiply-adds: the scalar and vector clones of a loop must round alike (see the source)
                      extra_compile_args=["-O3", "-ffp-contract=off"]),
])
