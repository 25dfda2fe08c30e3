"""The modules that moved into the layers' folders, still importable under their old names (with a
``DeprecationWarning`` naming the new one), so that plugins written against them keep working.

A finder on ``sys.meta_path`` answers the old names only: ``import pysmt.textio`` gives the very module
object ``pysmt.files.textio`` (the same attributes, monkeypatching included), and nothing is imported
until an old name is asked for.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from importlib.machinery import ModuleSpec
from types import ModuleType

#: Old name -> where the module lives now.
MOVED = {
    f"pysmt.{name}": f"pysmt.{folder}.{name}"
    for folder, names in {
        "files": ("textio", "outputs", "formats", "array_files", "markup"),
        "running": ("parallel", "processes", "jobs", "folder_lock", "torch_threads", "memory_budget"),
        "decoding": ("line_streams", "runner", "cluster", "mbr"),
    }.items()
    for name in names
}


class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old names of :data:`MOVED` and loads each as the module it became."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> ModuleSpec | None:
        return ModuleSpec(fullname, self) if fullname in MOVED else None

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        warnings.warn(f"{spec.name} is now {MOVED[spec.name]}; import it from there", DeprecationWarning, stacklevel=2)
        return importlib.import_module(MOVED[spec.name])

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run (the module was imported under its own name); only its own spec is given back, which
        the import system replaced with the old name's."""
        module.__spec__ = importlib.util.spec_from_file_location(module.__name__, module.__file__)


def install() -> None:
    """Answer the old names from now on (once per process)."""
    if not any(isinstance(finder, MovedModules) for finder in sys.meta_path):
        sys.meta_path.append(MovedModules())
