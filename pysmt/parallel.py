"""Work on forked processes: every pool pysmt starts (decoding threads, training steps) comes from here.

Workers are forked, so they share the parent's loaded models and data copy-on-write, and they
ignore Ctrl-C: the terminal sends SIGINT to the whole process group, and only the parent should
react (stop the pool, keep what was written, exit with status 130), not print one traceback per
worker. A worker runs torch (a neural plugin's) on one thread: the workers already use the cores,
and the OpenMP thread pool that the parent started while loading a model does not survive a fork
(the child's first parallel region would hang).
"""

from __future__ import annotations

import multiprocessing
import signal
from collections.abc import Callable, Sequence
from multiprocessing.pool import Pool
from typing import Any, TypeVar

from tqdm import tqdm

from pysmt.torch_threads import set_torch_threads

J = TypeVar("J")
R = TypeVar("R")


def _start_worker(initializer: Callable[..., None] | None, args: tuple[Any, ...]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    set_torch_threads(1)  # a neural plugin's model may have been loaded before the fork
    if initializer is not None:
        initializer(*args)


def worker_pool(processes: int, initializer: Callable[..., None] | None = None, args: tuple[Any, ...] = ()) -> Pool:
    """A pool of ``processes`` forked workers that leave Ctrl-C to the parent."""
    return multiprocessing.get_context("fork").Pool(processes, _start_worker, (initializer, args))


def ordered_map(function: Callable[[J], R], jobs: Sequence[J], processes: int, progress: tqdm | None = None,
                size: Callable[[J], int] = lambda job: 1) -> list[R]:
    """``[function(job) for job in jobs]``, on ``processes`` forked workers when there is more than one job.

    Workers are forked, so ``function`` may read large module-level data set up by the caller
    without pickling it. ``progress`` advances by ``size(job)`` as each result arrives, in order.
    """
    results: list[R] = []
    if processes > 1 and len(jobs) > 1:
        with worker_pool(processes) as pool:
            for job, result in zip(jobs, pool.imap(function, jobs)):
                results.append(result)
                if progress is not None:
                    progress.update(size(job))
    else:
        for job in jobs:
            results.append(function(job))
            if progress is not None:
                progress.update(size(job))
    return results
