"""The plugin's tests train and score tiny models: one thread each, in the tests and in the commands they run.

On tiny matrices, thread start-up and contention with other processes cost far more than the
threads give, so every test runs torch single-threaded and passes ``OMP_NUM_THREADS=1`` to the
``pysmt`` commands it starts. Both are restored after each test. ``tiny_model`` is a tiny model
trained once per session on the toy language of :mod:`cslm_testing`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from cslm_testing import CPU, TINY, toy_text
from pysmt.testing import single_torch_thread
from pysmt_cslm.training import TrainingLimits, train


@pytest.fixture(autouse=True)
def single_threaded():
    with single_torch_thread():
        yield


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    """A tiny model trained once on the toy text, for the tests that only read it."""
    tmp = tmp_path_factory.mktemp("tiny")
    threads = torch.get_num_threads()  # set up before single_threaded: the same here
    torch.set_num_threads(1)
    try:
        train(toy_text(tmp / "text.txt"), tmp / "cslm", TINY, CPU, TrainingLimits(max_updates=300, valid_every=100))
    finally:
        torch.set_num_threads(threads)
    return tmp / "cslm"
