#!/usr/bin/env bash
# Install and test the example plugin as a third party would: in a virtual environment of its own,
# with pysmt-mt installed from its wheel (scripts/build-wheel.sh: no compiler needed; pysmt-mt is not
# on PyPI, whose `pysmt` is another library), the plugin found through its entry points, and its own
# tests run from its own folder.
# Usage: bash scripts/test-example-plugin.sh [ENV_DIR]   (default: .venv-example, made afresh)
set -euo pipefail
cd "$(dirname "$0")/.."
ENV=${1:-.venv-example}
PYTHON=${PYTHON:-python3}
wheel=$(bash scripts/build-wheel.sh)
start=$SECONDS
rm -rf "$ENV"
"$PYTHON" -m venv "$ENV"
"$ENV/bin/python" -m pip install --quiet "$wheel" './examples/pysmt-example-features[test]'
echo "test-example-plugin: pysmt-mt ($(basename "$wheel")) and the example plugin installed in $((SECONDS - start)) s"
cd examples/pysmt-example-features
# what the wheel promises plugin authors: the compiled modules, their stubs, and the headers pysmt.get_include() names
"../../$ENV/bin/python" -c 'import pathlib, pysmt, pysmt._core, pysmt._contexts
installed = pathlib.Path(pysmt.__file__).parent
assert installed.parent.name == "site-packages", installed
missing = [name for name in ("py.typed", "_core.pyi", "_contexts.pyi") if not (installed / name).is_file()]
headers = pathlib.Path(pysmt.get_include()) / "pysmt"
missing += [name for name in ("compiled_scorer.h", "context_table.hpp") if not (headers / name).is_file()]
assert not missing, f"not in the installed wheel: {missing}"'
"../../$ENV/bin/python" -m pytest -q -p no:cacheprovider tests
