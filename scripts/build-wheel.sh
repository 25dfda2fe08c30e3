#!/usr/bin/env bash
# Build pysmt-mt's wheel into dist/ and print its path: the compiled core and context table, their stubs (*.pyi,
# py.typed) and the C/C++ headers plugins compile against (pysmt.get_include()). It installs in seconds, without a
# compiler, into any environment of the same Python on this kind of machine (a local artifact: not a manylinux
# wheel, which would need auditwheel and an old glibc to build on). A wheel newer than every source is reused.
# Usage: bash scripts/build-wheel.sh   (PYTHON: the environment that builds it, default .venv, made by setup.sh,
# which has the build requirements: the wheel is for that Python's version)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
wheel=$(ls -t dist/pysmt_mt-*.whl 2>/dev/null | head -1 || true)
if [ -n "$wheel" ] && [ -z "$(find pysmt tuning setup.py pyproject.toml third_party/kenlm/src -newer "$wheel" -type f \
        ! -name '*.so' ! -name '*.pyc' -print -quit 2>/dev/null)" ]; then
    echo "$wheel"
    exit 0
fi
rm -f dist/pysmt_mt-*.whl
rm -rf build/lib.* build/bdist.*  # what an earlier build left there would go into the wheel as it is
"$PYTHON" -m pip wheel --quiet --no-deps --no-build-isolation --wheel-dir dist . >&2
ls dist/pysmt_mt-*.whl
