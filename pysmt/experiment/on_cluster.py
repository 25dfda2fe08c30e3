"""``pysmt experiment --cluster``: stages that do not need each other run at the same time, on Ray.

Each command stage runs as one Ray task on a node the cluster picks for what the stage
:class:`~pysmt.experiment.stages.Needs` (CPUs: the experiment's ``--threads``, memory, a GPU for
neural work when the cluster has one), and its command uses that node's local processes. The
twelve MERT runs of Table 1 and their test decodes are independent once the models they need are
trained, so with enough machines the experiment takes its critical path: system, networks, the
longest tuning, its decode.

The run folder's records (each stage's ``job.json``, ``done.json``) are written by this process
and stay the source of truth, so every node must see the run folder and the data at the same paths
(a shared filesystem), and pysmt must be installed on every node as here. A run whose head node
died resumes with the same command: finished stages are skipped, and the commands of the others
resume their own work. A stage's task that dies with its node runs again on another (Ray retries
it), its command resuming from what it wrote. Each stage's messages go to
``stages/NAME/log.txt``; this process prints one line as each stage starts, runs and ends.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

from pysmt.decoding.cluster import connect
from pysmt.errors import PysmtError
from pysmt.experiment.stages import Needs, Step, log, run_command

#: How often a stage's task is run again after its node died, before the experiment stops.
TASK_RETRIES = 3
MB = 1024 * 1024


def _stage_task(args: list[str], stdout: str | None, log_path: str) -> tuple[int, float, str]:
    """On a node: run ``pysmt ARGS``, its messages appended to ``log_path``; exit status, peak MB, node."""
    import ray

    from pysmt.running.torch_threads import THREAD_VARIABLES

    for name in THREAD_VARIABLES:  # Ray sets them to 1 in its workers: the command runs as from a shell,
        os.environ.pop(name, None)  # and sets torch's threads itself (pysmt.running.torch_threads)
    with open(log_path, "ab", buffering=0) as err:
        status, peak_mb = run_command(args, Path(stdout) if stdout else None, err)
    return status, peak_mb, ray.get_runtime_context().get_node_id()[:8]


class StageCluster:
    """The Ray cluster an experiment's stages run on (a :class:`~pysmt.experiment.stages.Place`)."""

    def __init__(self, address: str) -> None:
        self.ray = connect(address)
        self.address = address
        self.task = self.ray.remote(max_retries=TASK_RETRIES)(_stage_task)
        self.running: set[Any] = set()
        self.lock = threading.Lock()
        alive = [node["Resources"] for node in self.ray.nodes() if node["Alive"]]
        self.most_cpus = max(int(resources.get("CPU", 0)) for resources in alive)
        self.most_memory_mb = max(resources.get("memory", 0) for resources in alive) / MB
        self.gpus = any(resources.get("GPU", 0) for resources in alive)
        log(
            f"stages run on the Ray cluster at {address}: {len(alive)} node(s), "
            f"{int(self.ray.cluster_resources().get('CPU', 0))} CPU(s){', GPUs' if self.gpus else ''}"
        )

    def request(self, needs: Needs) -> dict[str, Any]:
        """Ray's resource options for ``needs``, cut to what the largest node has (else it would wait forever)."""
        memory = min(needs.memory_mb, 0.9 * self.most_memory_mb)
        return {
            "num_cpus": max(min(needs.cpus, self.most_cpus), 1),
            "memory": int(memory * MB),
            "num_gpus": needs.gpus if self.gpus else 0,
        }

    def run(self, args: list[str], stdout: Path | None, log_path: Path, needs: Needs) -> tuple[int, float]:
        stage = log_path.parent.name
        future = self.task.options(**self.request(needs)).remote(args, str(stdout) if stdout else None, str(log_path))
        with self.lock:
            self.running.add(future)
        try:
            status, peak_mb, node = self.ray.get(future)
        except self.ray.exceptions.TaskCancelledError:
            raise KeyboardInterrupt from None
        except self.ray.exceptions.RayError as err:
            raise PysmtError(
                f"stage {stage}: its task was lost {TASK_RETRIES + 1} times on the cluster "
                f"(nodes dying, or out of memory?): {type(err).__name__}"
            ) from None
        finally:
            with self.lock:
                self.running.discard(future)
        log(f"{stage}: ran on node {node} (messages in {log_path})")
        return status, peak_mb

    def cancel(self) -> None:
        """Stop every stage's task (their commands die with them); what they wrote stays, to resume."""
        with self.lock:
            running = list(self.running)
        for future in running:
            self.ray.cancel(future, force=True)

    def __enter__(self) -> StageCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()
        self.ray.shutdown()


def run_graph(steps: Sequence[Step], cluster: StageCluster) -> None:
    """Run every step as soon as the steps it names are done, all that can at once (the cluster queues
    them for resources); the first failure or Ctrl-C stops the others and is raised."""
    stopping = threading.Event()

    def after(needed: list[Future[object]], step: Step) -> object:
        for future in needed:
            future.result()  # a needed stage that failed fails this one, unrun
        if stopping.is_set():
            raise KeyboardInterrupt
        return step.action()

    with ThreadPoolExecutor(max_workers=len(steps), thread_name_prefix="stage") as pool:
        futures: dict[str, Future[object]] = {}
        for step in steps:  # in the single-machine order, where every stage comes after those it needs
            futures[step.name] = pool.submit(after, [futures[name] for name in step.after], step)
        try:
            done, _ = wait(futures.values(), return_when=FIRST_EXCEPTION)
            failed = [future for future in futures.values() if future in done and future.exception() is not None]
            if failed:
                stopping.set()
                cluster.cancel()
                wait(futures.values())
                raise failed[0].exception()  # type: ignore[misc]
        except KeyboardInterrupt:
            stopping.set()
            print(file=sys.stderr)
            log("stopping: every running stage's task is cancelled; the same command resumes")
            cluster.cancel()
            wait(futures.values())
            raise
