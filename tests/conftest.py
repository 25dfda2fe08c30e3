"""Shared fixtures: the toy Moses system of pysmt.testing, whose scores can be computed by hand."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pysmt.testing import TOY_ARPA as TINY_ARPA  # noqa: F401 - the toy system, under the tests' names
from pysmt.testing import TOY_PHRASES as TINY_PHRASES  # noqa: F401
from pysmt.testing import TOY_REORDERING as TINY_REORDERING  # noqa: F401
from pysmt.testing import write_toy_system as write_moses_system

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
LN10 = math.log(10)


@pytest.fixture
def tiny_system(tmp_path: Path) -> Path:
    return write_moses_system(tmp_path / "system")


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data, skipping the test when the data is not there."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not available")
    return path


@pytest.fixture
def dev(tmp_path: Path) -> tuple[Path, Path]:
    """A three-sentence dev set for the toy system: source and reference."""
    src, ref = tmp_path / "dev.src", tmp_path / "dev.ref"
    src.write_text("a b c\nc b a\nb c\n")
    ref.write_text("x y z\nz y x\ny z\n")
    return src, ref
