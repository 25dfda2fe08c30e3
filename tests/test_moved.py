"""Modules that moved into the layers' folders keep their old names for plugins written against them
(pysmt/_moved.py): the same module object, with a DeprecationWarning naming the new place."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pysmt._moved import MOVED


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_name_is_the_new_module_with_a_warning(old):
    code = (
        f"import importlib, warnings\nwarnings.simplefilter('error', DeprecationWarning)\n"
        f"try:\n    importlib.import_module({old!r})\nexcept DeprecationWarning as warning:\n    print(warning)\n"
        f"warnings.simplefilter('ignore')\nimport {old} as old, {MOVED[old]} as new\n"
        "print(old is new, new.__spec__.name)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.splitlines() == [f"{old} is now {MOVED[old]}; import it from there", f"True {MOVED[old]}"], proc


def test_nothing_in_the_repository_uses_an_old_name():
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parents[1]
    pattern = re.compile("|".join(re.escape(old) + r"\b" for old in MOVED))
    users = [
        str(path.relative_to(root))
        for folder in ("pysmt", "tuning", "plugins", "examples", "bench", "tests")
        for path in (root / folder).rglob("*.py")
        if path.name != "_moved.py"
        and path.name != "test_moved.py"
        and pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert users == []
