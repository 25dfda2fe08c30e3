"""The distributions: none of them depends on PyPI's ``pysmt``, an unrelated library (ours is ``pysmt-mt``)."""

from __future__ import annotations

from pathlib import Path


def test_no_distribution_depends_on_the_unrelated_pypi_pysmt():
    import tomllib

    root = Path(__file__).resolve().parents[1]
    projects = [
        root / "pyproject.toml",
        *root.glob("plugins/*/pyproject.toml"),
        *root.glob("examples/*/pyproject.toml"),
    ]
    names = {tomllib.loads(p.read_text())["project"]["name"] for p in projects}
    assert "pysmt" not in names and "pysmt-mt" in names
    for project in projects:
        for dependency in tomllib.loads(project.read_text())["project"].get("dependencies", []):
            assert dependency.split(">")[0].split("=")[0].split("[")[0].strip() != "pysmt", project


def test_a_missing_extra_is_named_by_its_packages_with_pyprojects_versions():
    """pysmt-mt is on no index, so ``pip install 'pysmt-mt[cluster]'`` cannot work: the message lists the extra's
    own requirements, as pyproject.toml pins them (read from the installed distribution)."""
    import tomllib

    from pysmt.errors import missing_extra

    root = Path(__file__).resolve().parents[1]
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for extra in ("cluster", "serve"):
        message = str(missing_extra("this command", extra))
        assert message == (
            f"this command needs pysmt-mt's optional extra '{extra}': pip install "
            + " ".join(f"'{requirement}'" for requirement in extras[extra])
        )
    sources = [p for p in (root / "pysmt").rglob("*.py") if "install 'pysmt-mt[" in p.read_text()]
    assert not sources, f"tells users to install pysmt-mt from an index: {sources}"
