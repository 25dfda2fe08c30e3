#!/usr/bin/env bash
# Regenerate the typed stubs (.pyi) of the compiled modules from the built modules, beside their
# sources; tests/test_stubs.py checks that the committed stubs are what this writes. Run it after
# changing a module's bindings (and rebuilding: pip install -e . / -e plugins/cslm).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-.venv/bin/python}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for module in pysmt._core pysmt._contexts pysmt_cslm._network; do
    "$PYTHON" -m pybind11_stubgen --exit-code -o "$out" "$module"
done
cp "$out/pysmt/_core.pyi" "$out/pysmt/_contexts.pyi" pysmt/
cp "$out/pysmt_cslm/_network.pyi" plugins/cslm/pysmt_cslm/
