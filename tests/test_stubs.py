"""The typed boundary of the compiled modules: each committed ``.pyi`` stub is exactly what
``pybind11-stubgen`` writes for the built module (as sentencepiece checks its generated stub), so
the names, arguments, enums and types a type checker and a reader see are the module's own.
``scripts/generate-stubs.sh`` rewrites them after a change to the bindings."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("module", ["pysmt._core", "pysmt._contexts", "pysmt_cslm._network"])
def test_committed_stub_matches_the_built_module(module: str, tmp_path: Path) -> None:
    built = Path(importlib.import_module(module).__file__)  # type: ignore[arg-type]
    committed = built.parent / (module.rpartition(".")[2] + ".pyi")
    subprocess.run(
        [sys.executable, "-m", "pybind11_stubgen", "--exit-code", "-o", str(tmp_path), module],
        check=True,
        capture_output=True,
    )
    generated = tmp_path.joinpath(*module.split(".")).with_suffix(".pyi")
    assert committed.is_file(), f"{module} has no stub beside it: run scripts/generate-stubs.sh"
    assert generated.read_text() == committed.read_text(), (
        f"{committed.relative_to(ROOT)} is out of date: run scripts/generate-stubs.sh"
    )


def test_each_concern_binds_in_a_file_of_its_own_of_at_most_150_lines() -> None:
    """ARCHITECTURE.md's rule for the compiled core's bindings: the module's body only calls each concern's
    ``bind_*`` (one ``_bind_*.cpp`` a concern), so that no binding file grows into a second ``_core.cpp``."""
    package = Path(__file__).resolve().parents[1] / "pysmt"
    files = sorted(package.glob("_bind_*.cpp"))
    assert len(files) >= 8
    lengths = {path.name: len(path.read_text().splitlines()) for path in [*files, package / "_core.cpp"]}
    assert all(n <= 150 for n in lengths.values()), lengths
    module = (package / "_core.cpp").read_text()
    assert all(f"bind_{path.stem.removeprefix('_bind_')}(" in module for path in files), "a binding file not called"
