"""How the serving pool hands sentences to a worker: one at a time, the requests in turn (a worker stood in for by
the pipe end the pool writes to, answering each sentence it is sent)."""

from __future__ import annotations

import asyncio
from typing import Any

from pysmt.serving.workers import Job, Translated, Worker, WorkerPool


class Pipe:
    """What the pool sends a worker, kept."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    def send(self, message: Any) -> None:
        self.sent.append(message)


async def pool_with_a_worker() -> tuple[WorkerPool, Worker, Pipe]:
    pool = WorkerPool(recipe=None, count=1, process=False, max_pending=100)
    ready = asyncio.get_running_loop().create_future()
    ready.set_result(([], True))
    pipe = Pipe()
    worker = Worker(process=None, connection=pipe, ready=ready)
    pool.workers.append(worker)
    return pool, worker, pipe


def answer_all(pool: WorkerPool, worker: Worker, pipe: Pipe) -> list[str]:
    """The worker answers each sentence it is sent until it is sent none: the sentences, in the order sent."""
    answered: list[str] = []
    while worker.job is not None:
        assert len(pipe.sent) == len(answered) + 1  # one sentence at a time
        line, *_ = pipe.sent[-1]
        answered.append(line)
        pool._handle(worker, Translated([], [line]))
    return answered


def texts(jobs: list[Job]) -> list[str]:
    return [job.future.result().texts[0] for job in jobs]


def test_requests_take_turns_sentence_by_sentence_those_that_had_none_first():
    async def scenario() -> None:
        pool, worker, pipe = await pool_with_a_worker()
        large = pool.submit(["a0", "a1", "a2", "a3"], 1, False)  # the worker is sent a0 at once
        other = pool.submit(["b0", "b1", "b2"], 1, False)
        small = pool.submit(["c0"], 1, False)
        assert pool.pending() == 8
        assert answer_all(pool, worker, pipe) == ["a0", "b0", "c0", "a1", "b1", "a2", "b2", "a3"]
        assert (texts(large), texts(other), texts(small)) == (["a0", "a1", "a2", "a3"], ["b0", "b1", "b2"], ["c0"])
        assert pool.pending() == 0 and not pool.new and not pool.waiting

    asyncio.run(scenario())


def test_a_request_that_is_over_leaves_the_queue():
    async def scenario() -> None:
        pool, worker, pipe = await pool_with_a_worker()
        gone = pool.submit(["a0", "a1", "a2", "a3"], 1, False)
        kept = pool.submit(["b0", "b1"], 1, False)
        pool.cancel(gone)  # (its client disconnected): the sentence the worker is at is answered into the void
        assert pool.pending() == 1 + 2 and list(pool.new) == [kept[0].request] and not pool.waiting
        assert answer_all(pool, worker, pipe) == ["a0", "b0", "b1"]
        assert texts(kept) == ["b0", "b1"] and all(job.future.cancelled() for job in gone)

    asyncio.run(scenario())
