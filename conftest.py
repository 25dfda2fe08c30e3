"""What every test of the repository shares, pysmt's and the plugins' alike (tests/conftest.py holds pysmt's
own fixtures)."""

from __future__ import annotations

import os

import pytest


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
