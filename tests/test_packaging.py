"""The distributions: none of them depends on PyPI's ``pysmt``, an unrelated library (ours is ``pysmt-mt``)."""

from __future__ import annotations

from pathlib import Path


def test_no_distribution_depends_on_the_unrelated_pypi_pysmt():
    import tomllib
    root = Path(__file__).resolve().parents[1]
    projects = [root / "pyproject.toml", *root.glob("plugins/*/pyproject.toml"),
                *root.glob("examples/*/pyproject.toml")]
    names = {tomllib.loads(p.read_text())["project"]["name"] for p in projects}
    assert "pysmt" not in names and "pysmt-mt" in names
    for project in projects:
        for dependency in tomllib.loads(project.read_text())["project"].get("dependencies", []):
            assert dependency.split(">")[0].split("=")[0].split("[")[0].strip() != "pysmt", project
