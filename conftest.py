"""What every test of the repository shares, pysmt's and the plugins' alike (tests/conftest.py holds pysmt's
own fixtures): the test tiers, the shared data, and a cache of the session's own.

Tiers, as spaCy has them: plain ``pytest`` is the fast tier (minutes at most: every module's logic on small
fixtures); tests marked ``slow`` (real servers, Ray clusters, training and experiment runs, and every test
that reads ``../shared/data``) are deselected unless ``--slow`` is given, and ``pytest --slow`` (what
``.ci/run`` runs) is everything. Deselected, not skipped: the summary counts them apart from tests that
could not run here.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

#: The data sets and Moses fixtures beside the repository (read-only; never copied into it).
SHARED = Path(__file__).resolve().parent.parent / "shared" / "data"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow",
        action="store_true",
        default=False,
        help="also run the tests marked slow (servers, clusters, training, experiments, "
        "../shared/data): everything, as .ci/run does",
    )


@pytest.hookimpl(tryfirst=True)  # before -m and -k select: they see the markers set here
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that reads the shared data (through the ``shared_data`` fixture, directly or through another
    fixture) is marked ``integration`` and ``slow`` here, at collection, where deselection can see it (a
    marker added while the test sets up is too late for that); then, without ``--slow``, the slow tests are
    deselected."""
    for item in items:
        if "shared_data" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.integration)
            item.add_marker(pytest.mark.slow)
    if config.getoption("--slow"):
        return
    slow = [item for item in items if item.get_closest_marker("slow")]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]


@pytest.fixture(scope="session")
def shared_data() -> Callable[..., Path]:
    """A path under ../shared/data (``shared_data("news", "newstest2013.en")``; ``shared_data()`` is the folder
    itself), skipping the test when it is not there. Asking for this fixture is what marks a test
    ``integration`` and ``slow``."""

    def path(*parts: str) -> Path:
        found = SHARED.joinpath(*parts)
        if not found.exists():
            pytest.skip(f"{found} not available")
        return found

    return path


@pytest.fixture(autouse=True, scope="session")
def private_cache(tmp_path_factory: pytest.TempPathFactory):
    """What pysmt records in the user's cache (binary tables' checks) goes to the test session's own folder,
    also from the commands the tests start (they inherit the environment): never the user's ``~/.cache``."""
    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if saved is None:
        del os.environ["XDG_CACHE_HOME"]
    else:
        os.environ["XDG_CACHE_HOME"] = saved
