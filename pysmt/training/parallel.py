"""Ordered work on forked processes, for the training steps that split a corpus into chunks."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from typing import TypeVar

from tqdm import tqdm

J = TypeVar("J")
R = TypeVar("R")


def ordered_map(function: Callable[[J], R], jobs: Sequence[J], processes: int, progress: tqdm | None = None,
                size: Callable[[J], int] = lambda job: 1) -> list[R]:
    """``[function(job) for job in jobs]``, on ``processes`` forked workers when there is more than one job.

    Workers are forked, so ``function`` may read large module-level data set up by the caller
    without pickling it. ``progress`` advances by ``size(job)`` as each result arrives, in order.
    """
    results: list[R] = []
    if processes > 1 and len(jobs) > 1:
        with multiprocessing.get_context("fork").Pool(processes) as pool:
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
