"""What ``pysmt serve`` asks of the system before it listens: the open files its connections need."""

from __future__ import annotations

import pytest

from pysmt.errors import PysmtError
from pysmt.serving import listening
from pysmt.serving.listening import SPARE_FILES, allow_open_files

pytest.importorskip("aiohttp")


@pytest.fixture
def limits(monkeypatch) -> list[tuple[int, int]]:
    """``ulimit -n`` at 1,024 (soft) and 4,096 (hard); the limits set, kept."""
    set_to: list[tuple[int, int]] = []
    monkeypatch.setattr(listening.resource, "getrlimit", lambda kind: (1024, 4096))
    monkeypatch.setattr(listening.resource, "setrlimit", lambda kind, values: set_to.append(values))
    return set_to


def test_the_soft_limit_on_open_files_is_raised_to_what_the_connections_need(limits):
    allow_open_files(1024 - SPARE_FILES)
    assert limits == []  # enough already
    allow_open_files(2000)
    assert limits == [(2000 + SPARE_FILES, 4096)]


def test_more_connections_than_the_hard_limit_allows_are_one_line(limits):
    with pytest.raises(
        PysmtError,
        match=r"--max-connections 5,000 needs 5,064 open files, and this process may "
        r"open 4,096 \(ulimit -Hn\)",
    ):
        allow_open_files(5000)
    assert limits == []
