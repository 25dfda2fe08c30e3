"""Prints, one a line, what the given local projects need from the package index: each one's
``[project] dependencies`` and those of the extras named, as pip's ``FOLDER[extra,...]`` spells them,
less this repository's own distributions (pysmt-mt and its plugins are built from here, never fetched).

setup.sh installs these before KenLM's libraries are ready, so that the editable installs after them
only build: ``python scripts/list-dependencies.py '.[test]' plugins/cslm``.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

OURS = re.compile(r"pysmt[-_]")  # pysmt-mt, pysmt-cslm, pysmt-rnn-feature, pysmt-example-features


def requirements(spec: str) -> list[str]:
    folder, _, extras = re.fullmatch(r"([^\[]+)(\[([^\]]*)\])?", spec).groups()  # type: ignore[union-attr]
    project = tomllib.loads((Path(folder) / "pyproject.toml").read_text())["project"]
    optional = project.get("optional-dependencies", {})
    named = filter(None, (extras or "").split(","))
    wanted = [*project.get("dependencies", []), *(r for extra in named for r in optional[extra])]
    return [r for r in wanted if not OURS.match(r)]


if __name__ == "__main__":
    print(*dict.fromkeys(r for spec in sys.argv[1:] for r in requirements(spec)), sep="\n")
