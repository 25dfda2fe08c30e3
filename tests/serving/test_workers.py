"""How the serving pool hands sentences to a worker: one at a time, the requests in turn (a worker stood in for by
the pipe end the pool writes to, answering each sentence it is sent)."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from types import SimpleNamespace
from typing import Any

import numpy as np

from pysmt.serving import workers
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
    ready.set_result(([], True, []))
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
        assert pool.pending() == 0 and not pool.turns

    asyncio.run(scenario())


def test_a_request_that_is_over_leaves_the_queue():
    async def scenario() -> None:
        pool, worker, pipe = await pool_with_a_worker()
        gone = pool.submit(["a0", "a1", "a2", "a3"], 1, False)
        kept = pool.submit(["b0", "b1"], 1, False)
        pool.cancel(gone)  # (its client disconnected): the sentence the worker is at is answered into the void
        assert pool.pending() == 1 + 2 and [job.line for job in pool.turns] == ["b0", "b1"]
        assert answer_all(pool, worker, pipe) == ["a0", "b0", "b1"]
        assert texts(kept) == ["b0", "b1"] and all(job.future.cancelled() for job in gone)

    asyncio.run(scenario())


def test_clients_take_turns_however_many_requests_each_sends():
    async def scenario() -> None:
        pool, worker, pipe = await pool_with_a_worker()
        many = [pool.submit([f"a{k}"], 1, False, client="10.0.0.1") for k in range(4)]  # the worker is sent a0
        other = pool.submit(["b0", "b1"], 1, False, client="10.0.0.2")
        late = pool.submit(["c0"], 1, False, client="10.0.0.1")  # the first client's fifth request
        # per request, b0 would wait for a1, a2 and a3: per client, for a1 only (its client had a turn, then
        # came again before the second client)
        assert answer_all(pool, worker, pipe) == ["a0", "a1", "b0", "a2", "b1", "a3", "c0"]
        assert [texts(jobs) for jobs in many] == [["a0"], ["a1"], ["a2"], ["a3"]]
        assert (texts(other), texts(late)) == (["b0", "b1"], ["c0"])
        assert pool.pending() == 0 and not pool.turns

    asyncio.run(scenario())


def test_a_client_whose_requests_are_over_leaves_the_turns():
    async def scenario() -> None:
        pool, worker, pipe = await pool_with_a_worker()
        pool.submit(["a0"], 1, False, client="10.0.0.1")  # (sent to the worker)
        gone = [pool.submit([f"b{k}", f"b{k}'"], 1, False, client="10.0.0.2") for k in range(2)]
        kept = pool.submit(["c0"], 1, False, client="10.0.0.3")
        for jobs in gone:
            pool.cancel(jobs)
        assert list(pool.turns.new) == ["10.0.0.3"] and not pool.turns.waiting
        assert answer_all(pool, worker, pipe) == ["a0", "c0"] and texts(kept) == ["c0"]

    asyncio.run(scenario())


def test_a_worker_goes_on_after_an_unexpected_error_on_one_sentence(monkeypatch, capsys):
    """A bug met on one sentence (an IndexError) is that sentence's error: the worker translates the next one."""

    def translated(decoder: Any, line: str, *rest: Any) -> Translated:
        if line == "bad":
            raise IndexError("list index out of range")
        return Translated([], [line])

    decoder = SimpleNamespace(nbest_labels=lambda: [], target_text=False, rescorers=[], all_weights=np.zeros(0))
    recipe = SimpleNamespace(build=lambda: decoder)
    monkeypatch.setattr(workers, "translated", translated)
    monkeypatch.setattr(workers, "die_with_parent", lambda parent: None)  # (run here, in the test's process)
    monkeypatch.setattr(workers.signal, "signal", lambda *args: None)
    ours, theirs = multiprocessing.Pipe()
    for index, line in enumerate(("bad", "good")):
        ours.send((line, index, 1, False, False))
    ours.send(None)
    workers.run_worker(recipe, False, theirs, os.getpid())
    assert ours.recv() == ("ready", ([], True, []))
    assert ours.recv() == "input line 1: unexpected IndexError: list index out of range"
    assert ours.recv().texts == ["good"]
    assert capsys.readouterr().err == (
        "pysmt serve: a worker could not translate a sentence (input line 1: unexpected IndexError: list index out of "
        "range); it goes on\n"
    )
