#!/usr/bin/env bash
# Set up pysmt from nothing: a virtual environment in .venv with pysmt (its compiled search core
# built here), its plugins and test tools, and KenLM's lmplz/build_binary in third_party/kenlm/bin.
# Safe to rerun: it only installs what is missing or out of date.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
# Our distribution is pysmt-mt (the PyPI name pysmt is PySMT, an unrelated SMT-solver library with the
# same import name): drop a pysmt distribution an older checkout installed here, so only ours provides it.
.venv/bin/python -m pip uninstall --quiet --yes pysmt 2>/dev/null || true
bash scripts/build-kenlm-tools.sh   # KenLM's sources (the search core compiles them in), lmplz, build_binary
.venv/bin/python -m pip install --quiet -e '.[test,cluster,serve]'   # builds the compiled core (C++, ~2 min); Ray for --cluster, aiohttp for serve
# The plugins need torch. Pin the CPU build first: an unpinned torch would pull several GB of CUDA
# packages. Users with their own CUDA build of torch install the plugins directly instead.
.venv/bin/python -m pip install --quiet torch==2.13.0
.venv/bin/python -m pip install --quiet -e 'plugins/rnn_feature[analysis]'
# The CSLM's compiled scorer builds against pysmt's headers (pysmt.get_include()): in this environment,
# with pysmt-mt already installed (not in an isolated build environment, which could not find it).
.venv/bin/python -m pip install --quiet "pybind11==3.1.0" "setuptools>=68"
.venv/bin/python -m pip install --quiet --no-build-isolation -e plugins/cslm
.venv/bin/python -m pip install --quiet -e examples/pysmt-example-features   # the documented example plugins
echo "pysmt is installed in .venv (run: .venv/bin/pysmt --help)"
