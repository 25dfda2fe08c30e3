"""The fixtures of the training tests that run on a system trained from the corpus ``c``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.training.test_training_reliability import train_c, write_bitext


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One system trained from ``c`` per test module, copied for each test that needs one (the corpus is shared:
    read only)."""
    return train_c(write_bitext(tmp_path_factory.mktemp("trained")))


@pytest.fixture
def system(trained: dict[str, Path], tmp_path: Path) -> dict[str, Path]:
    """A copy of the system trained from ``c`` in its own folder: its job records the shared corpus."""
    shutil.copytree(trained["out"], tmp_path / "sys")
    return {**trained, "out": tmp_path / "sys"}
