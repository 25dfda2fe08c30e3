#!/usr/bin/env bash
# Set up pysmt from nothing: a virtual environment in .venv with pysmt (its compiled search core
# built here), its plugins and test tools, and KenLM's lmplz/build_binary in third_party/kenlm/bin.
# Safe to rerun: it only installs what is missing or out of date (pysmt and the CSLM are recompiled).
# Chromium, for the browser tests of the page of `pysmt serve`, is installed from Debian's packages where it is missing.
#
# The time goes on compiling C++ (KenLM once, for the core and its tools; the core; the CSLM's scorer)
# and on pip's downloads and installs (torch, Ray, numba...), so they overlap: KenLM's libraries build
# on all cores while the environment is made and pip installs torch and every other dependency in one
# resolve; KenLM's tools build in the background (niced: on the cores the compiler leaves idle) while
# pip compiles the core (on all cores: setup.py), then the CSLM's scorer. pip does not byte-compile what it installs
# (--no-compile): Python compiles each module the first time it is imported, and most of torch's,
# Ray's and mypy's never are.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON=${PYTHON:-python3}
background=()  # each in a process group of its own, stopped whole if this script stops first
in_background() { set -m; "$@" & background+=($!); set +m; }
trap 'for job in "${background[@]}"; do kill -- -"$job" 2>/dev/null || true; done' EXIT
in_background bash scripts/build-kenlm-tools.sh --libraries   # Debian's packages; KenLM's sources and libraries
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
pip() { .venv/bin/python -m pip --quiet "$@"; }
# pysmt's build requirements (pyproject.toml's [build-system]) in the environment: the editable installs build here
# (--no-build-isolation), without an isolated environment fetched for each of them
pip install --upgrade pip $(.venv/bin/python -c \
    'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"])')
# Our distribution is pysmt-mt (the PyPI name pysmt is PySMT, an unrelated SMT-solver library with the
# same import name): drop a pysmt distribution an older checkout installed here, so only ours provides it.
pip uninstall --yes pysmt 2>/dev/null || true
# What is installed editable: pysmt (the core compiled here; Ray for --cluster, aiohttp for serve, MkDocs for the
# documentation site), the plugins and the documented example plugin; the CSLM after them (below).
editable=('.[test,cluster,serve,docs]' 'plugins/rnn_feature[analysis]' examples/pysmt-example-features)
# Everything they need from the index, in one resolve, while KenLM's libraries compile: the editable installs after
# them then only build. The plugins need torch: pinned to the CPU build, as an unpinned torch would pull several GB of
# CUDA packages (users with their own CUDA build of torch install the plugins directly instead).
mapfile -t dependencies < <(.venv/bin/python scripts/list-dependencies.py "${editable[@]}" plugins/cslm)
pip install --no-compile torch==2.13.0 "${dependencies[@]}"
wait "${background[-1]}"
# Chromium, the browser the page of `pysmt serve` is tested in (tests/serving/test_page.py, slow): Debian's package,
# installed where it is missing and this runs as root with apt-get (as CI does); after KenLM's packages (apt takes one
# install at a time), while pip installs. Elsewhere the browser tests say how to install it.
install_chromium() {
    command -v chromium >/dev/null && return
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } ||
            echo "setup.sh: could not install chromium (the page's browser tests need it)" >&2
    else
        echo "setup.sh: the page's browser tests (pytest --slow) need Chromium: sudo apt-get install chromium" >&2
    fi
}
in_background install_chromium
chromium_job=${background[-1]}
in_background nice bash scripts/build-kenlm-tools.sh   # lmplz, build_binary (once)
pip install --no-compile --no-build-isolation "${editable[@]/#/--editable=}"
# The CSLM's compiled scorer builds against pysmt's headers (pysmt.get_include()): in this environment,
# with pysmt-mt already installed (not in an isolated build environment, which could not find it).
pip install --no-compile --no-build-isolation -e plugins/cslm
wait "${background[-1]}"
wait "$chromium_job"
echo "pysmt is installed in .venv (run: .venv/bin/pysmt --help)"
