"""The plugin's tests train and score tiny models: one thread each, in the tests and in the commands they run.

On tiny matrices, thread start-up and contention with other processes cost far more than the
threads give (an orthogonal initialization took seconds instead of milliseconds on a busy 2-core
machine), so every test runs torch single-threaded and passes ``OMP_NUM_THREADS=1`` to the
``pysmt`` commands it starts. Both are restored after each test.
"""

import pytest

from pysmt.testing import single_torch_thread


@pytest.fixture(autouse=True)
def single_threaded():
    with single_torch_thread():
        yield
