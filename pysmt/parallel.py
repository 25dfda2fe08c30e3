"""Work on forked processes: every pool pysmt starts (decoding threads, training steps) comes from here.

Workers are forked, so they share the parent's loaded models and data copy-on-write. They leave
signals to the parent: Ctrl-C reaches the whole process group and SIGTERM may too, and only the
parent should react (stop, keep what was written, exit with 130 or 143), not print one traceback per
worker. They die with the parent (:func:`pysmt.processes.die_with_parent`), so kill -9 of pysmt
leaves no worker behind. A worker that dies (killed, out of memory) breaks the pool: the work
stops with a one-line :class:`WorkerDied` naming the item, never a hang. A worker runs torch (a
neural plugin's) on one thread: the workers already use the cores, and the OpenMP thread pool that
the parent started while loading a model does not survive a fork (the child's first parallel region
would hang).
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any, TypeVar

from tqdm import tqdm

from pysmt.errors import PysmtError
from pysmt.processes import die_with_parent
from pysmt.torch_threads import set_torch_threads

J = TypeVar("J")
R = TypeVar("R")


class WorkerDied(PysmtError):
    """A worker process died while working on item ``position`` (0-based) of a map."""

    def __init__(self, position: int) -> None:
        super().__init__(f"a worker process died on item {position + 1} (killed, or out of memory?)")
        self.position = position


def _start_worker(parent: int, initializer: Callable[..., None] | None, args: tuple[Any, ...]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    die_with_parent(parent)
    set_torch_threads(1)  # a neural plugin's model may have been loaded before the fork
    if initializer is not None:
        initializer(*args)


@contextmanager
def worker_pool(processes: int, initializer: Callable[..., None] | None = None,
                args: tuple[Any, ...] = ()) -> Iterator[ProcessPoolExecutor]:
    """A pool of ``processes`` forked workers that leave signals to the parent and die with it.

    The workers are started here, in the calling (main) thread, which their parent-death signal is
    tied to. Leaving the block early (an error, Ctrl-C) stops them at once.
    """
    pool = ProcessPoolExecutor(processes, multiprocessing.get_context("fork"), _start_worker,
                               (os.getpid(), initializer, args))
    pool.submit(int).result()  # fork every worker now, from this thread
    try:
        yield pool
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        for child in multiprocessing.active_children():
            child.kill()
        raise
    pool.shutdown()


def ordered_results(pool: ProcessPoolExecutor, function: Callable[[J], R], items: Iterable[J],
                    ahead: int) -> Iterator[R]:
    """``function(item)`` for every item, computed on ``pool`` and yielded in input order.

    Items are read by a thread as the workers need them (at most ``ahead`` in flight), so a stream
    such as stdin is translated line by line, and each result is yielded as soon as it and those
    before it are done. A dead worker raises :class:`WorkerDied`.
    """
    inflight: queue.Queue[Future[R] | BaseException | None] = queue.Queue(maxsize=ahead)

    def feed() -> None:
        try:
            for item in items:
                inflight.put(pool.submit(function, item))
            inflight.put(None)
        except BaseException as err:  # reading the items failed, or the pool broke: raised in order
            inflight.put(err)

    threading.Thread(target=feed, daemon=True).start()
    position = 0
    while (future := inflight.get()) is not None:
        if isinstance(future, BrokenProcessPool):
            raise WorkerDied(position)
        if isinstance(future, BaseException):
            raise future
        try:
            yield future.result()
        except BrokenProcessPool:
            raise WorkerDied(position) from None
        position += 1


def ordered_map(function: Callable[[J], R], jobs: Sequence[J], processes: int, progress: tqdm | None = None,
                size: Callable[[J], int] = lambda job: 1) -> list[R]:
    """``[function(job) for job in jobs]``, on ``processes`` forked workers when there is more than one job.

    Workers are forked, so ``function`` may read large module-level data set up by the caller
    without pickling it. ``progress`` advances by ``size(job)`` as each result arrives, in order.
    """
    results: list[R] = []
    if processes > 1 and len(jobs) > 1:
        with worker_pool(processes) as pool:
            for job, result in zip(jobs, ordered_results(pool, function, jobs, 2 * processes)):
                results.append(result)
                if progress is not None:
                    progress.update(size(job))
    else:
        for job in jobs:
            results.append(function(job))
            if progress is not None:
                progress.update(size(job))
    return results
