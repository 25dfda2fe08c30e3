"""pysmt.plugin: the facade plugins import (its names, what it loads, the contract that keeps plugins to it), and
its ContextTable: the numbered n-gram contexts an n-gram feature written as a plugin keeps as states."""

import importlib.machinery
import pkgutil
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

import pysmt
import pysmt.plugin
from pysmt.plugin import ContextTable, contract

ROOT = Path(__file__).resolve().parents[1]


def test_the_facade_offers_the_contract_it_loads():
    assert sorted(pysmt.plugin.__all__) == sorted(contract.__all__)
    for name in contract.__all__:
        assert getattr(pysmt.plugin, name) is getattr(contract, name)
    with pytest.raises(AttributeError):
        pysmt.plugin.NoSuchName
    assert set(contract.__all__) <= set(dir(pysmt.plugin))


def test_the_training_file_and_command_helpers_import_without_the_compiled_core():
    """A plugin's model trains on a lent GPU machine where pysmt's compiled core is not built."""
    code = (
        "import sys\n"
        "from pysmt.plugin import PysmtError, commands, files, neural\n"
        "loaded = sorted(m for m in sys.modules if m in ('pysmt._core', 'pysmt._contexts', 'pysmt.plugin.contract'))\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_the_front_door_contract_forbids_every_other_module():
    """The import-linter contract lists pysmt's modules one by one: a new one must join the list."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (front_door,) = [c for c in contracts if c["name"].startswith("Plugins through the front door")]
    compiled = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    modules = {
        f"pysmt.{found.name}"
        for found in pkgutil.iter_modules(pysmt.__path__)
        if not any(path.name.endswith(compiled) for path in Path(pysmt.__path__[0]).glob(f"{found.name}.*"))
    }
    assert sorted(front_door["forbidden_modules"]) == sorted(modules - {"pysmt.plugin", "pysmt.testing"})


def test_context_table_numbers_contexts_and_builds_a_batchs_ngrams():
    """Hand-checked: contexts of two words; requests extend states by options and may end the sentence."""
    table = ContextTable(2)
    start = table.intern(np.array([[0, 0]], dtype=np.int32))
    assert start.tolist() == [0] and len(table) == 1
    words = np.array([[5, 6, 7], [8, 0, 0]], dtype=np.int32)  # option 0: "5 6 7", option 1: "8"
    rows, targets, owners, states, fresh = table.extend(
        np.array([0, 0]), words, np.array([3, 1]), np.array([False, True]), 1
    )
    # request 0: 5 | (0 0), 6 | (0 5), 7 | (5 6), new state (6 7); request 1: 8 | (0 0), state (0 8), </s> | (0 8)
    assert table.contexts(np.arange(len(table))).tolist() == [[0, 0], [0, 5], [5, 6], [6, 7], [0, 8]]
    assert rows.tolist() == [0, 1, 2, 0, 4]
    assert targets.tolist() == [5, 6, 7, 8, 1]
    assert owners.tolist() == [0, 0, 0, 1, 1]
    assert states.tolist() == [3, 4]
    assert fresh.tolist() == [0, 1, 2, 4]  # contexts an n-gram used for the first time, each once
    again = table.extend(np.array([3]), words[1:], np.array([1]), np.array([True]), 1)
    assert again[0].tolist() == [3, 5] and again[4].tolist() == [3, 5]  # 8 | (6 7), </s> | (7 8)
    assert table.intern(np.array([[5, 6], [9, 9]], dtype=np.int32)).tolist() == [2, 6]  # known, then new
    with pytest.raises(IndexError):
        table.contexts(np.array([99]))
    with pytest.raises(ValueError):  # one state, two options' words
        table.extend(np.array([0]), words, np.array([3, 1]), np.array([False]), 1)
    table.clear()
    assert len(table) == 0
