"""Work on local processes: every pool pysmt starts (decoding threads, training steps) comes from here.

Workers start with Python's start method (:func:`start_method`): ``fork`` (Linux's default up to
Python 3.13), ``forkserver`` (the default from 3.14) or ``spawn``, or the one ``PYSMT_START_METHOD``
names. A map's ``shared`` value (loaded models, a corpus) reaches every worker once: inherited
copy-on-write under ``fork``, pickled once per worker otherwise (a :class:`~pysmt.decoder.Decoder`
pickles as the paths and weights it was built from, and is built again in the worker). They leave
signals to the parent: Ctrl-C reaches the whole process group and SIGTERM may too, and only the
parent should react (stop, keep what was written, exit with 130 or 143), not print one traceback per
worker. They die with the parent (:func:`pysmt.running.processes.die_with_parent`; under ``forkserver``
with the fork server, which dies with pysmt), so kill -9 of pysmt leaves no worker behind. A
worker that dies (killed, out of memory) breaks the pool: the work stops with a one-line
:class:`WorkerDied` naming the item, never a hang. A worker runs torch (a neural plugin's) on one
thread, whatever the start method: the workers already use the cores, and the OpenMP thread pool
that the parent started while loading a model does not survive a fork (the child's first parallel
region would hang).
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
from functools import partial
from typing import Any, TypeVar

from tqdm import tqdm

from pysmt.errors import PysmtError
from pysmt.running.processes import die_with_parent
from pysmt.running.torch_threads import set_torch_threads

J = TypeVar("J")
R = TypeVar("R")
S = TypeVar("S")

#: Names the start method of pysmt's pools, overriding Python's default.
START_METHOD_VARIABLE = "PYSMT_START_METHOD"

_SHARED: Any = None  # the ``shared`` value of the map running in this process (see :func:`shared`)
_STARTED: Any = None  # in a worker: the barrier every worker of its pool meets once started
#: Seconds a pool's workers wait for each other to start before the pool gives up.
START_TIMEOUT = 600.0


def start_method() -> str:
    """How workers start: ``PYSMT_START_METHOD``, else Python's default (``multiprocessing.get_start_method``)."""
    method = os.environ.get(START_METHOD_VARIABLE) or multiprocessing.get_start_method()
    if method not in multiprocessing.get_all_start_methods():
        raise PysmtError(
            f"{START_METHOD_VARIABLE}={method}: not a start method here "
            f"({', '.join(multiprocessing.get_all_start_methods())})"
        )
    return method


def shared() -> Any:
    """The ``shared`` value given to the pool or map this code runs under (in a worker: its own copy)."""
    return _SHARED


@contextmanager
def sharing(value: Any) -> Iterator[None]:
    """:func:`shared` gives ``value`` inside the block, in this process (for work done without workers)."""
    global _SHARED
    _SHARED = value
    try:
        yield
    finally:
        _SHARED = None


class WorkerDied(PysmtError):
    """A worker process died while working on item ``position`` (0-based) of a map."""

    def __init__(self, position: int) -> None:
        super().__init__(f"a worker process died on item {position + 1} (killed, or out of memory?)")
        self.position = position


def _start_worker(
    parent: int | None, started: Any, value: Any, initializer: Callable[..., None] | None, args: tuple[Any, ...]
) -> None:
    global _SHARED, _STARTED
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    die_with_parent(os.getppid() if parent is None else parent)
    set_torch_threads(1)  # a neural plugin's model may have been loaded before the fork
    _SHARED, _STARTED = value, started
    if initializer is not None:
        initializer(*args)


def _all_started() -> None:
    """A first task per worker: it returns once every worker has started, so none starts later."""
    _STARTED.wait(START_TIMEOUT)


@contextmanager
def worker_pool(
    processes: int, initializer: Callable[..., None] | None = None, args: tuple[Any, ...] = (), shared: Any = None
) -> Iterator[ProcessPoolExecutor]:
    """A pool of ``processes`` workers that leave signals to the parent and die with it.

    The workers are started here, in the calling (main) thread, which their parent-death signal is
    tied to (a pool that started them later, from a feeder thread, would see them killed when that
    thread ends). Leaving the block early (an error, Ctrl-C) stops them at once.
    """
    method = start_method()
    context = multiprocessing.get_context(method)
    parent = None if method == "forkserver" else os.getpid()  # a fork server's children die with it
    pool = ProcessPoolExecutor(
        processes, context, _start_worker, (parent, context.Barrier(processes), shared, initializer, args)
    )
    for first in [pool.submit(_all_started) for _ in range(processes)]:  # start every worker now
        first.result()
    try:
        yield pool
    except BaseException:
        for child in multiprocessing.active_children():  # at once: a worker may be deep in a long sentence
            child.kill()
        # Then let the pool's own threads see them dead and clean up before this returns: left to run on,
        # they close pipes while Python's exit handler wakes them (3.11's pools race there, and a
        # thread's EBADF traceback follows the one-line message of a stopped command).
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown()


def ordered_results(
    pool: ProcessPoolExecutor, function: Callable[[J], R], items: Iterable[J], ahead: int
) -> Iterator[R]:
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


def ordered_stream(function: Callable[[J], R], jobs: Sequence[J], processes: int, shared: Any = None) -> Iterator[R]:
    """``function(job)`` for every job, yielded in order as each is done, on ``processes`` workers when
    there is more than one job; ``function`` reads the data every job needs from :func:`shared`."""
    if processes > 1 and len(jobs) > 1:
        with worker_pool(processes, shared=shared) as pool:
            yield from ordered_results(pool, function, jobs, 2 * processes)
    else:
        with sharing(shared):
            for job in jobs:
                yield function(job)


def ordered_map(
    function: Callable[[J], R],
    jobs: Sequence[J],
    processes: int,
    progress: tqdm | None = None,
    size: Callable[[J], int] = lambda job: 1,
    shared: Any = None,
) -> list[R]:
    """``[function(job) for job in jobs]``, as :func:`ordered_stream` computes them.

    ``progress`` advances by ``size(job)`` as each result arrives, in order.
    """
    results: list[R] = []
    for job, result in zip(jobs, ordered_stream(function, jobs, processes, shared)):
        results.append(result)
        if progress is not None:
            progress.update(size(job))
    return results


def _given_shared(function: Callable[[Any, J], R], job: J) -> R:
    return function(shared(), job)


def map_with_shared(function: Callable[[S, J], R], jobs: Sequence[J], shared: S, processes: int) -> list[R]:
    """``[function(shared, job) for job in jobs]``, as :func:`ordered_map` computes them: for code that takes
    the shared value as an argument instead of reading :func:`shared` (MERT's optimizer, which imports
    nothing of pysmt: ``partial(map_with_shared, processes=N)`` is a :class:`tuning.optimizer.Mapper`)."""
    return ordered_map(partial(_given_shared, function), jobs, processes, shared=shared)
