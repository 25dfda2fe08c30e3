"""Fixtures the tests of every package use: the toy Moses system of pysmt.testing (whose scores can be
computed by hand), a dev set and an input for it, and test feature plugins registered (``fake_registry``).

Helpers that tests import (functions, constants) are in :mod:`tests.helpers`: nothing imports this module.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from pysmt.testing import registered
from tests.helpers import BatchedBigramBonus, BigramBonus, write_moses_system


@pytest.fixture
def tiny_system(tmp_path: Path) -> Path:
    return write_moses_system(tmp_path / "system")


@pytest.fixture
def dev(tmp_path: Path) -> tuple[Path, Path]:
    """A three-sentence dev set for the toy system: source and reference."""
    src, ref = tmp_path / "dev.src", tmp_path / "dev.ref"
    src.write_text("a b c\nc b a\nb c\n")
    ref.write_text("x y z\nz y x\ny z\n")
    return src, ref


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A two-line input for the toy system."""
    path = tmp_path / "in.txt"
    path.write_text("a b c\nc b a\n")
    return path


@pytest.fixture
def fake_registry():
    """The test features and the example plugins, registered in-process (pysmt.testing.registered); the
    fixture's value names the registered classes (patch these)."""
    from pysmt_example_features import LengthRatioFeature, RepeatedWordFeature

    classes = {
        "bigram": BigramBonus,
        "batched_bigram": BatchedBigramBonus,
        "length_ratio": LengthRatioFeature,
        "repeated_word": RepeatedWordFeature,
    }
    with registered(**classes):
        yield SimpleNamespace(**classes)
