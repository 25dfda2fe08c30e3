"""The decoding processes behind ``pysmt serve``, and how sentences reach them.

Each worker is a process that builds the system once, from paths (a
:class:`~pysmt.decoder.SystemRecipe`: binarized tables are memory-mapped, so the workers of one
machine share their pages), then translates the sentences it is sent over a pipe. The pool lives in
the server's event loop. Turns are per client (its peer address), then per request: the clients
with sentences waiting take turns (round robin), and each client's turn goes to its requests in turn,
each request's sentences waiting in a queue of their own. A worker is sent one sentence at a time,
and when it answers, the next sentence of the next client in turn (of that client's next request in
turn). A client, or a client's request, that has not had a turn yet comes before those that have (as
FQ-CoDel serves new flows first), then takes its turns with them. So fifty large requests of one
client delay another client's one-sentence request by one sentence per worker, as one large request
would (a client's share is the same however many requests or connections it opens, as nginx's
``limit_conn`` counts per address); a sentence sent ahead into a worker's pipe would make it wait for
that one too, and saves only the pipe's round trip (well under a millisecond, beside 10 ms to
seconds of decoding). Each answer goes back to the request that asked for it; a request waits for
its own sentences only, in its own order.

A worker that dies (killed, out of memory) is replaced, and the sentence it was translating is sent
again before any other; a sentence that a worker dies on twice gets an error instead (it would take
every worker down). An unexpected error on one sentence (a bug) is that sentence's error, said in one
line on the log: the worker goes on with the others' sentences. A request that is gone (timed out,
client disconnected) takes its waiting sentences out of the queue (:meth:`WorkerPool.cancel`), and
the answers to those a worker is at already are dropped. Workers start with the ``spawn`` method (a
fresh interpreter: none of the server's sockets or threads), leave signals to the server, and die
with it.
"""

from __future__ import annotations

import asyncio
import itertools
import multiprocessing
import os
import signal
import sys
from collections import OrderedDict, deque
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Protocol

from pysmt.decoder import Candidate, Decoder, SystemRecipe
from pysmt.errors import PysmtError
from pysmt.running.processes import die_with_parent
from pysmt.serving import words

#: How often a sentence may be sent to a worker that then dies, before it gets an error.
MAX_ATTEMPTS = 2
#: Seconds a worker has to finish its sentence and exit when the pool closes, before it is killed.
EXIT_TIMEOUT = 10.0
#: Seconds idle workers are given to exit however late the pool closes (they exit at once when told).
EXIT_GRACE = 0.5


class Busy(PysmtError):
    """More sentences wait for a worker than the server takes (its ``--max-pending``)."""


@dataclass
class Job:
    """One sentence of a request, on its way to a worker and back."""

    request: int  # the request it belongs to (its turn in the queue)
    line: str
    index: int  # its place in the request (the decoder names it in errors: "input line N")
    nbest: int
    distinct: bool
    future: asyncio.Future[Translated]
    attempts: int = 0
    words: bool = False  # links and phrases counting the words sent and returned, not the model's tokens
    client: Hashable = None  # whose turn it takes (the peer's address; None: every caller that names none)

    @property
    def wanted(self) -> bool:
        return not self.future.done()


@dataclass
class Translated:
    """A sentence's n-best translations (best first) and their texts as the client gets them (raw text for a
    system with [processing], unless the server is ``--prepared``)."""

    candidates: list[Candidate]
    texts: list[str]


def translated(
    decoder: Decoder, line: str, index: int, nbest: int, distinct: bool, process: bool, words: bool = False
) -> Translated:
    """A sentence's translations; with ``words`` (and the system's processing applied), their links and phrases
    count the words of ``line`` and of each text returned (:mod:`pysmt.serving.words`), not the model's tokens."""
    from pysmt.decoding.runner import translate_line

    translation = translate_line(decoder, index, line, nbest, distinct, process)
    rest = [" ".join(c.words) for c in translation.hypotheses[1:]]
    texts = [translation.output, *(map(decoder.postprocess, rest) if process else rest)]
    candidates = translation.hypotheses
    if words and process and (decoder.source_text or decoder.target_text):
        candidates = in_words(decoder, line, candidates, texts)
    return Translated(candidates, texts)


def in_words(decoder: Decoder, line: str, candidates: list[Candidate], texts: list[str]) -> list[Candidate]:
    """``candidates`` renumbered to count the words of ``line`` and of their ``texts`` (split on spaces)."""
    if decoder.xml_input != "pass-through":  # the line's words count, not its tags
        line = " ".join(decoder.read_markup(line, 0)[0])
    sent = line.split()
    tokens = decoder.preprocess(line).split()
    source = words.source_places(tokens, line, decoder.preprocess) if decoder.source_text else list(range(len(sent)))
    renumbered = []
    for candidate, text in zip(candidates, texts):
        target = (
            words.target_places(candidate.words, text, decoder.postprocess)
            if decoder.target_text
            else list(range(len(candidate.words)))
        )
        renumbered.append(words.in_words(candidate, source, target, len(sent), len(text.split())))
    return renumbered


def total_weights(decoder: Decoder) -> list[float]:
    """The weights, one per score, that total a translation's scores into its ``total``: the rescoring pass's on a
    system with features of complete translations (they order its n-best lists), else the search's."""
    return (decoder.rescoring if decoder.rescorers else decoder.all_weights).tolist()


def run_worker(recipe: SystemRecipe, process: bool, connection: Connection, parent: int) -> None:
    """A worker process: build the system once, then translate each sentence it is sent until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server decides when its workers stop
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    die_with_parent(parent)
    try:
        decoder = recipe.build()
    except PysmtError as err:
        connection.send(("failed", str(err)))
        return
    tokens = not (process and decoder.target_text)
    connection.send(("ready", (decoder.nbest_labels(), tokens, total_weights(decoder))))
    while (job := connection.recv()) is not None:
        line, index, nbest, distinct, in_words = job
        try:
            connection.send(translated(decoder, line, index, nbest, distinct, process, in_words))
        except PysmtError as err:  # a plugin's unusable result, a sentence nothing translates
            connection.send(str(err))
        except Exception as err:  # a bug met on one sentence: its error, not a dead worker (and others' waits)
            message = f"input line {index + 1}: unexpected {type(err).__name__}: {err}"
            log(f"a worker could not translate a sentence ({message}); it goes on")
            connection.send(message)


@dataclass
class Worker:
    process: Any  # multiprocessing's SpawnProcess
    connection: Connection
    ready: asyncio.Future[tuple[list[tuple[str, int, int]], bool, list[float]]]
    job: Job | None = None  # the sentence it translates

    @property
    def loaded(self) -> bool:
        """Whether it has loaded the system (and so takes sentences)."""
        return self.ready.done() and not self.ready.cancelled() and self.ready.exception() is None


class Queue(Protocol):
    """Sentences waiting, taken first to last: a request's (a deque), or the requests' of a client (:class:`Turns`)."""

    def popleft(self) -> Job: ...

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[Job]: ...


class Turns:
    """Queues taking turns (round robin), a sentence at a time: those that have not had a turn yet first, in the order
    they came, then the others in the order of their next turns. A queue leaves when it is empty."""

    def __init__(self) -> None:
        self.new: OrderedDict[Hashable, Queue] = OrderedDict()
        self.waiting: OrderedDict[Hashable, Queue] = OrderedDict()

    def get(self, key: Hashable) -> Queue | None:
        return self.new.get(key, self.waiting.get(key))

    def add(self, key: Hashable, queue: Queue) -> None:
        """A queue that has not had a turn (``key`` has none here)."""
        self.new[key] = queue

    def remove(self, key: Hashable) -> None:
        self.new.pop(key, None)
        self.waiting.pop(key, None)

    def popleft(self) -> Job:
        """The next sentence of the queue whose turn it is (IndexError: none waits)."""
        for queues in (self.new, self.waiting):
            if queues:
                key, queue = queues.popitem(last=False)
                job = queue.popleft()
                if queue:  # its next sentence waits for the turns of the queues now waiting
                    self.waiting[key] = queue
                return job
        raise IndexError("no sentence waits")

    def __len__(self) -> int:
        """The queues waiting."""
        return len(self.new) + len(self.waiting)

    def __iter__(self) -> Iterator[Job]:
        """Every sentence waiting."""
        return itertools.chain.from_iterable(itertools.chain(self.new.values(), self.waiting.values()))


class WorkerPool:
    """``count`` decoding processes fed from the requests' queues in turn (see the module's docstring)."""

    def __init__(self, recipe: SystemRecipe, count: int, process: bool, max_pending: int) -> None:
        self.recipe, self.count, self.process, self.max_pending = recipe, count, process, max_pending
        self.context = multiprocessing.get_context("spawn")
        self.workers: list[Worker] = []
        #: The sentences that wait for a worker, by client, then by request (each a :class:`Turns`).
        self.turns = Turns()
        #: The sentences of workers that died, to be sent again (before any other, each alone).
        self.resend: deque[Job] = deque()
        self.requests = itertools.count()
        self.closing = False
        #: The system's n-best labels (name, first score, end), and whether its output is model tokens (no
        #: [processing], or the server is ``--prepared``), and the weights that total the scores (one per score,
        #: :func:`total_weights`), as the workers report them.
        self.labels: list[tuple[str, int, int]] = []
        self.tokens = True
        self.weights: list[float] = []
        self.replaced = 0

    async def start(self) -> None:
        """Start the workers and wait until every one has loaded the system (an error if one cannot)."""
        started = [self._start_worker() for _ in range(self.count)]
        try:
            self.labels, self.tokens, self.weights = (await asyncio.gather(*(worker.ready for worker in started)))[0]
        except BaseException:
            await self.close()
            for worker in started:  # (their errors are said once, by the one raised)
                if worker.ready.done() and not worker.ready.cancelled():
                    worker.ready.exception()
            raise

    def _start_worker(self) -> Worker:
        loop = asyncio.get_running_loop()
        ours, theirs = self.context.Pipe()
        process = self.context.Process(
            target=run_worker,
            args=(self.recipe, self.process, theirs, os.getpid()),
            daemon=True,
            name="pysmt-serve-worker",
        )
        process.start()
        theirs.close()
        worker = Worker(process, ours, loop.create_future())
        self.workers.append(worker)
        loop.add_reader(ours.fileno(), self._receive, worker)
        loop.add_reader(process.sentinel, self._exited, worker)
        return worker

    def pending(self) -> int:
        """Sentences waiting for a worker or being translated."""
        waiting = itertools.chain(self.resend, self.turns)
        return sum(job.wanted for job in waiting) + sum(w.job is not None for w in self.workers)

    def submit(
        self, lines: list[str], nbest: int, distinct: bool, words: bool = False, client: Hashable = None
    ) -> list[Job]:
        """Queue a request's sentences, as a request of its own that takes its turns among ``client``'s, and they
        among other clients'; their futures give their translations (or a PysmtError), with links and phrases
        counting words when ``words`` (:func:`translated`). Call :meth:`cancel` with them when the request is
        over."""
        if self.closing:
            raise Busy("the server is shutting down")
        if self.pending() + len(lines) > self.max_pending:
            raise Busy(f"{self.pending():,} sentences are waiting already (the server takes {self.max_pending:,})")
        loop = asyncio.get_running_loop()
        request = next(self.requests)
        jobs = [
            Job(request, line, index, nbest, distinct, loop.create_future(), words=words, client=client)
            for index, line in enumerate(lines)
        ]
        if jobs:
            requests = self.turns.get(client)
            if not isinstance(requests, Turns):  # the client's first request waiting
                requests = Turns()
                self.turns.add(client, requests)
            requests.add(request, deque(jobs))
        self._dispatch()
        return jobs

    def cancel(self, jobs: Iterable[Job]) -> None:
        """A request is over (answered, timed out, failed, its client gone): none of its sentences is wanted any
        more, and those still waiting leave the queue."""
        for job in jobs:
            job.future.cancel()
            requests = self.turns.get(job.client)
            if isinstance(requests, Turns):
                requests.remove(job.request)
                if not requests:
                    self.turns.remove(job.client)

    def _next(self) -> Job | None:
        """The sentence a free worker takes next: a dead worker's, else the next sentence of the client whose turn it
        is (None: none waits)."""
        for queue in (self.resend, self.turns):
            while queue:
                job = queue.popleft()
                if job.wanted:
                    return job
        return None

    def _dispatch(self) -> None:
        """Give every free worker the sentence it takes (see :meth:`_next`)."""
        for worker in self.workers:
            if worker.loaded and worker.job is None and (job := self._next()) is not None:
                worker.job = job
                try:
                    worker.connection.send((job.line, job.index, job.nbest, job.distinct, job.words))
                except OSError:  # it has just died: its sentinel says so soon, and the sentence is sent again
                    pass

    def _receive(self, worker: Worker) -> None:
        """A worker's pipe has a message (its pipe's end, once it is gone: then its sentinel says so too)."""
        try:
            message = worker.connection.recv()
        except (EOFError, OSError):
            asyncio.get_running_loop().remove_reader(worker.connection.fileno())
            return
        self._handle(worker, message)

    def _handle(self, worker: Worker, message: Any) -> None:
        if not worker.ready.done():  # the first message: the system loaded, or why not
            status, detail = message
            if status == "ready":
                worker.ready.set_result(detail)
            else:
                worker.ready.set_exception(PysmtError(f"a serving worker could not load the system: {detail}"))
        else:  # its sentence's translation, or why there is none: it is free again
            job, worker.job = worker.job, None
            assert job is not None  # (a worker answers the sentence it was sent, and only that)
            if job.wanted:
                if isinstance(message, str):
                    job.future.set_exception(PysmtError(message))
                else:
                    job.future.set_result(message)
        self._dispatch()

    def _exited(self, worker: Worker) -> None:
        """A worker's process ended: take what it sent before, then (unless the pool is closing) send its
        sentences again and start another."""
        loop = asyncio.get_running_loop()
        loop.remove_reader(worker.process.sentinel)
        loop.remove_reader(worker.connection.fileno())
        self.workers.remove(worker)  # (first: the answers taken below must not send it more)
        try:
            while worker.connection.poll():
                self._handle(worker, worker.connection.recv())
        except (EOFError, OSError):
            pass
        worker.connection.close()
        worker.process.join()
        status = worker.process.exitcode
        if not worker.ready.done():
            worker.ready.set_exception(
                PysmtError(f"a serving worker died while loading the system (exit status {status})")
            )
        if self.closing:
            return
        job = worker.job
        if job is not None and job.wanted:
            job.attempts += 1
            if job.attempts >= MAX_ATTEMPTS:
                job.future.set_exception(
                    PysmtError(
                        f"input line {job.index + 1}: the decoding worker died "
                        f"{job.attempts} times translating it (out of memory?)"
                    )
                )
            else:
                self.resend.append(job)
        if worker.loaded:  # (a worker that could not load is not started again)
            self.replaced += 1
            log(f"a worker died (exit status {status}); starting another")
            self._start_worker().ready.add_done_callback(replacement_loaded)
        self._dispatch()

    async def close(self, deadline: float | None = None) -> None:
        """Stop the workers: each finishes its sentence and exits, or is killed at ``deadline`` (the event loop's
        time; at least :data:`EXIT_GRACE` seconds from now), by default after :data:`EXIT_TIMEOUT` seconds."""
        self.closing = True
        loop = asyncio.get_running_loop()
        for job in itertools.chain(self.resend, self.turns):
            if job.wanted:
                job.future.set_exception(Busy("the server is shutting down"))
        self.resend.clear()
        self.turns = Turns()
        for worker in list(self.workers):
            try:
                worker.connection.send(None)
            except OSError:
                pass
        deadline = max(loop.time() + EXIT_TIMEOUT if deadline is None else deadline, loop.time() + EXIT_GRACE)
        while self.workers and loop.time() < deadline:
            await asyncio.sleep(0.05)
        for worker in list(self.workers):
            worker.process.kill()
            self._exited(worker)


def log(message: str) -> None:
    print(f"pysmt serve: {message}", file=sys.stderr, flush=True)


def replacement_loaded(ready: asyncio.Future[Any]) -> None:
    """A replacement worker loaded the system, or it says why not (the pool goes on with the others)."""
    if not ready.cancelled() and ready.exception() is not None:
        log(str(ready.exception()))
