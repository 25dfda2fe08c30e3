"""The plugin's tests train and score tiny models: one thread each, in the tests and in the commands they run.

On tiny matrices, thread start-up and contention with other processes cost far more than the
threads give (an orthogonal initialization took seconds instead of milliseconds on a busy 2-core
machine), so every test runs torch single-threaded and passes ``OMP_NUM_THREADS=1`` to the
``pysmt`` commands it starts. Both are restored after each test.
"""

import pytest
import torch


@pytest.fixture(autouse=True)
def single_threaded(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("MKL_NUM_THREADS", "1")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
