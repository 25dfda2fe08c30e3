#!/usr/bin/env bash
# Install and test the example plugin as a third party would: in a virtual environment of its own,
# with pysmt-mt installed from this checkout (it is not on PyPI, whose `pysmt` is another library),
# the plugin found through its entry points, and its own tests run from its own folder.
# Usage: bash scripts/test-example-plugin.sh [ENV_DIR]   (default: .venv-example, made afresh)
set -euo pipefail
cd "$(dirname "$0")/.."
ENV=${1:-.venv-example}
PYTHON=${PYTHON:-python3}
rm -rf "$ENV"
"$PYTHON" -m venv "$ENV"
"$ENV/bin/python" -m pip install --quiet --upgrade pip
"$ENV/bin/python" -m pip install --quiet .    # pysmt-mt, its compiled core built from this checkout
"$ENV/bin/python" -m pip install --quiet './examples/pysmt-example-features[test]'
cd examples/pysmt-example-features
"../../$ENV/bin/python" -m pytest -q -p no:cacheprovider tests
