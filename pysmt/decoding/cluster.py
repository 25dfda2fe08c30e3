"""Decoding on a Ray cluster (``--cluster ADDRESS``): the optional extra ``pysmt-mt[cluster]``.

Why Ray: its actors keep a loaded system, and its features' caches, across MERT iterations (each
iteration ships only the weights); a cluster is one ``ray start`` per machine; and a node that
dies takes only its actors with it, so their work can run again elsewhere. Without ``--cluster``
nothing here is imported and Ray need not be installed.

The system travels as paths (config, ``--features``, ``--param``, ``--weights``: a
:class:`SystemRecipe`), never as a pickled decoder: each actor builds its own decoder on its node,
where binarized tables are memory-mapped and so shared by the actors of one node. Every node must
see those paths (a shared filesystem, or the same copy everywhere). The input is cut into shards
of consecutive lines with about the same number of source words (as Moses' ``moses-parallel.pl``
cuts it), several per actor so that a slow or lost shard costs little; translations are given
back in input order as soon as every shard before them is done. A shard whose actor dies (its node
killed, out of memory) runs again on another actor, and the output is the same as a local run's.

The head is the one node a run cannot lose: Ray's driver notices its loss only after 60 s, or fails
with the local raylet's broken pipe. So the client and every actor watch the head's address
(:class:`HeadWatch`): within :data:`HEAD_TIMEOUT` seconds of its silence the client stops with one line
naming it (:class:`HeadLost`) and the actors end themselves, so that none outlives its client.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

from pysmt.decoder import Decoder, SystemRecipe, Translation
from pysmt.decoding.line_streams import BadLine
from pysmt.decoding.mbr import MbrSettings
from pysmt.errors import PysmtError, missing_extra
from pysmt.files.progress import stderr_muted

#: Shards per actor: enough that actors finishing early find work, few enough that each call is long.
SHARDS_PER_ACTOR = 4
#: How often one shard may be lost with its actor before the run stops.
MAX_SHARD_RETRIES = 3
#: Seconds to wait for an actor to load the system before deciding the cluster cannot run one.
ACTOR_START_TIMEOUT = 600.0
#: Seconds the other actors have to load the system once the first has.
OTHERS_READY_TIMEOUT = 120.0
#: Ray's default port, when ``--cluster HOST`` names none.
RAY_PORT = 6379
#: Seconds without an answer from the head after which the client stops and the actors end.
HEAD_TIMEOUT = 5.0
#: Seconds between two probes of the head; also the longest a wait on the actors goes without looking at it.
PROBE_INTERVAL = 0.5

Item = tuple[int, str]
T = TypeVar("T")
S = TypeVar("S")
J = TypeVar("J")
R = TypeVar("R")


def source_words(item: Item) -> int:
    return len(item[1].split())


def shards(items: Sequence[T], count: int, size: Callable[[Any], int] = source_words) -> list[list[T]]:
    """``items`` cut into at most ``count`` runs of consecutive items of about equal size (source words):
    each cut is where the running size comes nearest to a multiple of the total / ``count``."""
    if not items:
        return []
    running = np.cumsum([max(size(item), 1) for item in items])
    targets = running[-1] * np.arange(1, count) / count
    cuts = sorted({int(np.abs(running - target).argmin()) + 1 for target in targets} - {len(items)})
    return [list(items[a:b]) for a, b in zip([0, *cuts], [*cuts, len(items)])]


def ray_module() -> Any:
    """The ray package, or one line saying how to install it."""
    try:
        import ray
    except ImportError:
        raise missing_extra("--cluster (Ray is not installed)", "cluster") from None
    return ray


def cluster_messages_to_stderr() -> None:
    """Ray's driver prints the cluster's error messages (a node marked dead, for one) on stdout, where
    ``decode`` writes its translations: they go to stderr instead, with Ray's other messages.

    Ray looks its printer up as a module global at each message, so replacing it is enough; a Ray
    without it (another version) is left as it is.
    """
    import ray._private.worker as driver

    original = getattr(driver, "print_to_stdstream", None)
    if original is None or getattr(original, "to_stderr", False):
        return

    def to_stderr(data: dict[str, Any], ignore_prefix: bool) -> None:
        original({**data, "is_err": True}, ignore_prefix)

    to_stderr.to_stderr = True  # type: ignore[attr-defined]
    driver.print_to_stdstream = to_stderr


def host_and_port(address: str) -> tuple[str, int]:
    """``HOST[:PORT]`` as a host and a port (Ray's default when none is given)."""
    host, _, port = address.rpartition(":") if ":" in address else (address, "", str(RAY_PORT))
    return host, int(port)


def refused_authentication(err: BaseException) -> bool:
    """Whether Ray failed on token authentication: its AuthenticationError, raised as it is or, from
    ``ray.init``, as the text of the ConnectionError's cause."""
    return any(
        type(said).__name__ == "AuthenticationError" or "AuthenticationError:" in str(said)
        for said in (err, err.__cause__)
        if said is not None
    )


def head_wants_token(address: str) -> bool:
    """Whether the head at ``address`` refuses a client without a token: its cluster id asked for without
    one, by Ray's GCS client (milliseconds; the refusal it logs is the answer, and is not shown)."""
    from ray._raylet import GcsClient  # type: ignore[attr-defined]  # (not in its stub)

    with stderr_muted():
        try:
            GcsClient(address=address)
        except Exception as err:
            return refused_authentication(err)
    return False


def authenticate(address: str) -> None:
    """Ray's token authentication for this client when the head at ``address`` asks for it and
    ``RAY_AUTH_MODE`` does not say otherwise, with the token where Ray looks (``RAY_AUTH_TOKEN``,
    ``RAY_AUTH_TOKEN_PATH``, ``~/.ray/auth_token``).

    ``ray start --head`` turns authentication on when it finds a token, but ``ray.init(ADDRESS)``
    does not (it is refused after 20 s of retries). Nor may a client use a token just because it has
    one: a client in token mode refuses the calls of a cluster's workers that have none. A Ray
    without token authentication has nothing to decide.
    """
    try:
        from ray._private.authentication import authentication_token_setup as setup
    except ImportError:
        return
    if setup.AUTH_MODE_ENV_VAR in os.environ or not head_wants_token(address):
        return
    logging.getLogger(setup.__name__).setLevel(logging.ERROR)  # (its warning is meant for a new cluster)
    if not setup.maybe_enable_token_auth_if_token_available(warn_if_disabled=False):
        raise token_refused(address)


def token_refused(address: str) -> PysmtError:
    return PysmtError(
        f"--cluster {address}: the Ray cluster there asks for its token, and this client has none or "
        "another: put the head's (`ray get-auth-token` there prints it) in ~/.ray/auth_token or "
        "RAY_AUTH_TOKEN"
    )


def connect(address: str) -> Any:
    """Join the Ray cluster at ``address`` (``local``: start a throw-away one on this machine); return ray."""
    ray = ray_module()
    cluster_messages_to_stderr()
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    quiet = {"logging_level": logging.ERROR, "log_to_driver": False, "include_dashboard": False}
    if address == "local":  # always a new instance, even beside a cluster `ray start` made on this machine
        ray.init(address="local", **quiet)
        return ray
    if address != "auto":
        try:
            socket.create_connection(host_and_port(address), timeout=5).close()
        except (OSError, ValueError) as err:
            reason = getattr(err, "strerror", None) or str(err)
            raise PysmtError(
                f"--cluster {address}: no Ray head reachable there ({reason}); start one with "
                "`ray start --head`, or give --cluster local"
            ) from None
        authenticate(address)
    try:
        ray.init(address=address, **{k: v for k, v in quiet.items() if k != "include_dashboard"})
    except Exception as err:
        if refused_authentication(err):
            raise token_refused(address) from None
        if isinstance(err, (ConnectionError, RuntimeError)):
            raise PysmtError(f"--cluster {address}: cannot join the Ray cluster there ({err})") from None
        raise
    return ray


class HeadLost(PysmtError):
    """The cluster's head stopped answering: the run cannot go on without it."""


class HeadWatch:
    """Whether the cluster's head still answers, asked of its GCS address (``HOST:PORT``) by a thread.

    A TCP connection to the port is accepted by the head's kernel as long as its GCS process lives,
    however busy it is; refused or unanswered for :data:`HEAD_TIMEOUT` seconds, the head is lost (its
    process killed, its machine down or cut off). ``on_lost`` is then called, once, from the thread.
    Messages name the head as ``shown`` (the address the user gave, where Ray's may be another name).
    """

    def __init__(self, address: str, on_lost: Callable[[], object] = lambda: None, shown: str = "") -> None:
        self.address, self.on_lost, self.shown = address, on_lost, shown or address
        self.last, self.gone = time.monotonic(), False
        self.stopped = threading.Event()
        threading.Thread(target=self.watch, name="pysmt-head-watch", daemon=True).start()

    def answers(self) -> bool:
        try:
            socket.create_connection(host_and_port(self.address), timeout=PROBE_INTERVAL).close()
        except OSError:
            return False
        return True

    def watch(self) -> None:
        while not self.stopped.wait(PROBE_INTERVAL):
            if self.answers():
                self.last = time.monotonic()
            elif self.lost():
                self.on_lost()
                return

    def lost(self) -> bool:
        return self.gone or time.monotonic() - self.last > HEAD_TIMEOUT

    def check(self, now: bool = False) -> None:
        """Raise :class:`HeadLost` if the head is lost (with ``now``: also if it does not answer this moment)."""
        self.gone = self.gone or (now and not self.answers())
        if self.lost():
            raise HeadLost(f"lost the cluster's head at {self.shown}: it stopped answering")

    def stop(self) -> None:
        self.stopped.set()


def end_actor(address: str) -> None:
    """An actor's end when its head is lost: its client has stopped (or is stopping), and nobody else can end it."""
    print(f"pysmt cluster: lost the cluster's head at {address}: this actor ends", file=sys.stderr, flush=True)
    os._exit(1)


class Worker:
    """What a cluster actor holds: a system's models, built once on its node from a recipe (paths)."""

    def __init__(self, recipe: SystemRecipe, *args: Any) -> None:
        import ray

        from pysmt.running.torch_threads import DECODING_THREADS, set_torch_threads

        head = ray.get_runtime_context().gcs_address  # watched while loading too
        HeadWatch(head, on_lost=lambda: end_actor(head))
        set_torch_threads(DECODING_THREADS)
        self.node = ray.get_runtime_context().get_node_id()[:8]
        try:
            self.models: Any = self.build(recipe, *args)
            self.error: PysmtError | None = None
        except PysmtError as err:  # (a file this node cannot see): said by the first call, as one line
            self.models, self.error = None, PysmtError(f"on node {self.node}: {err}")

    def build(self, recipe: SystemRecipe, *args: Any) -> Any:
        raise NotImplementedError

    def loaded(self) -> Any:
        if self.models is None:
            raise self.error  # type: ignore[misc]
        return self.models

    def ready(self) -> Any:
        """Nothing but the models' being loaded (an error if they are not): what a cluster waits for at the start."""
        self.loaded()

    def apply(self, function: Callable[[Any, Any], Any], value: Any, job: Any) -> tuple[str, Any]:
        """``function(value, job)``: work that needs no model (MERT's restarts), on the actors' CPUs while
        they are idle."""
        return self.node, function(value, job)


class DecoderActor(Worker):
    """One decoder on a cluster node (the class Ray makes an actor of)."""

    def build(self, recipe: SystemRecipe, *args: Any) -> Decoder:
        return recipe.build()

    def ready(self) -> list[tuple[str, int, int]]:
        return self.loaded().nbest_labels()

    def translate(
        self,
        shard: list[Item],
        weights: list[list[float]] | None,
        nbest_size: int,
        distinct: bool,
        process: bool,
        mbr: MbrSettings | None = None,
    ) -> tuple[str, list[Translation]]:
        from pysmt.decoding.runner import translate_line

        decoder = self.loaded()
        if weights is not None:
            decoder.set_weights(weights)
        return self.node, [
            translate_line(decoder, index, line, nbest_size, distinct, process, mbr) for index, line in shard
        ]


class Cluster:
    """Actors on a Ray cluster, one per CPU unless told: a local pool's job, spread over machines.

    ``worker`` is the actor class (decoders unless told), built from ``recipe`` and ``args``. Every
    wait on the actors is cut into steps of :data:`PROBE_INTERVAL`, and the head is looked at between
    them (:class:`HeadWatch`): a lost head is :class:`HeadLost` within about :data:`HEAD_TIMEOUT` seconds,
    whatever the run is doing.
    """

    def __init__(
        self,
        address: str,
        recipe: SystemRecipe,
        actors: int | None = None,
        worker: type[Worker] = DecoderActor,
        args: tuple[Any, ...] = (),
    ) -> None:
        self.ray = connect(address)
        self.address, self.recipe, self.args = address, recipe, args
        gcs = self.ray.get_runtime_context().gcs_address
        self.head = HeadWatch(gcs, shown=gcs if address in ("auto", "local") else address)
        self.actors: list[Any] = []
        try:
            # non-detached: Ray ends them with this client, as long as the head lives (else they end themselves)
            self.remote = self.ray.remote(num_cpus=1, max_restarts=0, lifetime="non_detached")(worker)
            count = actors or max(int(self.ray.cluster_resources().get("CPU", 1)), 1)
            self.actors = [self.remote.remote(recipe, *args) for _ in range(count)]
            self.placed: Counter[str] = Counter()
            nodes = sum(node["Alive"] for node in self.ray.nodes())
            self.log(f"{count} actor(s) on {nodes} node(s) of {address}; loading the system")
            readies = [actor.ready.remote() for actor in self.actors]
            self.labels = self.call(readies[0], ACTOR_START_TIMEOUT)
            self.keep_started(readies)
        except BaseException:
            self.close()
            raise

    def keep_started(self, readies: list[Any]) -> None:
        """Keep the actors that have loaded the system once the first has, within :data:`OTHERS_READY_TIMEOUT`
        more seconds: one placed on a node that has just died (the cluster still counting its CPUs)
        would never start, and the shards given to it would wait forever."""
        done = self.wait(readies, num_returns=len(readies), timeout=OTHERS_READY_TIMEOUT)
        started = []
        for actor, ready in zip(self.actors, readies):
            try:
                if ready in done:
                    self.call(ready)
                    started.append(actor)
                    continue
            except self.ray.exceptions.RayActorError:
                pass
            self.ray.kill(actor)
        if len(started) < len(self.actors):
            self.log(
                f"{len(self.actors) - len(started)} actor(s) did not start (their node lost?); "
                f"going on with {len(started)}"
            )
        self.actors = started

    @staticmethod
    def log(message: str) -> None:
        print(f"pysmt cluster: {message}", file=sys.stderr, flush=True)

    @contextmanager
    def asking_ray(self) -> Iterator[None]:
        """A call into Ray whose failure (the broken pipe of this machine's node, when that was the head) is
        :class:`HeadLost` if the head does not answer now, one line naming the cluster otherwise."""
        try:
            yield
        except OSError as err:
            self.head.check(now=True)
            raise PysmtError(f"--cluster {self.address}: lost the connection to the cluster ({err})") from None

    def wait(self, futures: list[Any], num_returns: int = 1, timeout: float | None = None) -> list[Any]:
        """Those of ``futures`` that are ready, once ``num_returns`` are or ``timeout`` has passed: ``ray.wait``
        in steps of :data:`PROBE_INTERVAL`, the head looked at between them."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            step = PROBE_INTERVAL if deadline is None else max(min(PROBE_INTERVAL, deadline - time.monotonic()), 0)
            with self.asking_ray():
                done, _ = self.ray.wait(futures, num_returns=num_returns, timeout=step)
            if len(done) >= num_returns or (deadline is not None and time.monotonic() >= deadline):
                return done
            self.head.check()

    def call(self, future: Any, timeout: float | None = None) -> Any:
        """``ray.get`` once ``future`` is ready (:meth:`wait`), with a user's error inside the actor raised as
        itself (one line), not Ray's wrapper; ``timeout`` is how long an actor may take to start."""
        if not self.wait([future], timeout=timeout):
            raise PysmtError(
                f"--cluster {self.address}: no node took a decoder within {timeout:.0f} s "
                "(too little CPU or memory free?)"
            )
        try:
            with self.asking_ray():
                return self.ray.get(future)
        except self.ray.exceptions.RayTaskError as err:
            cause = getattr(err, "cause", None)
            if isinstance(cause, PysmtError):
                raise cause from None
            raise

    def translate(
        self,
        stream: Iterable[Item | BadLine],
        emit: Callable[[Translation], None],
        *,
        weights: list[list[float]] | None = None,
        nbest_size: int = 1,
        distinct: bool = False,
        process: bool = True,
        mbr: MbrSettings | None = None,
    ) -> int:
        """Translate the lines on the actors and ``emit`` every translation in input order; return how many.

        The whole input is read first (shards need it); an undecodable line stops the run after every
        line before it was emitted, as locally.
        """
        items: list[Item] = []
        for item in stream:
            if isinstance(item, BadLine):
                self.translate_items(items, emit, weights, nbest_size, distinct, process, mbr)
                raise item.error
            items.append(item)
        return self.translate_items(items, emit, weights, nbest_size, distinct, process, mbr)

    def translate_items(
        self,
        items: Sequence[Item],
        emit: Callable[[Translation], None],
        weights: list[list[float]] | None,
        nbest_size: int,
        distinct: bool,
        process: bool,
        mbr: MbrSettings | None = None,
    ) -> int:
        parts = shards(items, SHARDS_PER_ACTOR * len(self.actors))
        emitted = 0
        try:
            for translations in self.ordered(
                parts, lambda actor, part: actor.translate.remote(part, weights, nbest_size, distinct, process, mbr)
            ):
                for translation in translations:
                    emit(translation)
                    emitted += 1
        except HeadLost as err:
            raise HeadLost(f"{err}; the first {emitted:,} of {len(items):,} line(s) had been translated") from None
        return len(items)

    def map(self, function: Callable[[S, J], R], jobs: Sequence[J], shared: S) -> list[R]:
        """``[function(shared, job) for job in jobs]`` on the actors, ``shared`` sent to the cluster once; a job
        lost with its actor runs again on another: :func:`pysmt.running.parallel.map_with_shared`, spread (a
        :class:`tuning.optimizer.Mapper`)."""
        value = self.ray.put(shared)
        return list(self.ordered(jobs, lambda actor, job: actor.apply.remote(function, value, job)))

    def ordered(self, parts: Sequence[T], submit: Callable[[Any, T], Any]) -> Iterator[Any]:
        """Each part's result, in order, computed by ``submit(actor, part)`` (a method's future, giving
        (node, result)) on the idle actors; a part lost with its actor runs again on another."""
        ray = self.ray
        todo, losses = deque(range(len(parts))), Counter[int]()
        idle, running, done, given = list(self.actors), {}, {}, 0
        while given < len(parts):
            while idle and todo:
                k, actor = todo.popleft(), idle.pop()
                running[submit(actor, parts[k])] = (k, actor)
            ready = self.wait(list(running))
            k, actor = running.pop(ready[0])
            try:
                node, result = self.call(ready[0])
            except (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError):
                # its node died: before the part was done, or after but before its result reached us
                self.replace(actor, k, losses, todo, idle)
                continue
            idle.append(actor)
            done[k] = result
            self.placed[node] += 1
            while given in done:
                yield done.pop(given)
                given += 1

    def replace(self, actor: Any, shard: int, losses: Counter[int], todo: deque[int], idle: list[Any]) -> None:
        """An actor died with ``shard``: run the shard again on the others (on a new one if none is left)."""
        losses[shard] += 1
        if losses[shard] > MAX_SHARD_RETRIES:
            raise PysmtError(
                f"--cluster {self.address}: a shard was lost {losses[shard]} times with its actor "
                "(nodes dying, or out of memory?)"
            )
        self.log(f"an actor died (its node lost?): shard {shard + 1} runs again on another")
        self.actors.remove(actor)
        todo.appendleft(shard)
        if not self.actors:  # the last one: the cluster must place a new one, or the run stops
            fresh = self.remote.remote(self.recipe, *self.args)
            self.call(fresh.ready.remote(), ACTOR_START_TIMEOUT)
            self.actors.append(fresh)
            idle.append(fresh)

    def where(self) -> str:
        """Which nodes ran how many shards (node ids shortened), for the user."""
        return ", ".join(f"node {node}: {count} shard(s)" for node, count in sorted(self.placed.items()))

    def close(self) -> None:
        """End the actors and leave the cluster. Without a head nobody can end them: they end themselves
        (:func:`end_actor`). Ray's goodbye then takes about 5 s more, but it must be said (a driver that
        exits without it crashes)."""
        self.head.stop()
        if not self.head.lost():
            for actor in self.actors:
                self.ray.kill(actor)
        self.ray.shutdown()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
