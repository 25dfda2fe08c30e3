"""Resumable stages: each records its inputs, is skipped when done, and measures its time and memory.

A stage's record lives in ``RUN_DIR/stages/<name>/``: ``job.json`` (a :class:`pysmt.running.jobs.Job`:
the options that shape the stage's result and a fingerprint of every input file or folder) and,
once the stage has finished, ``done.json`` (its :class:`pysmt.running.jobs.DoneMarkers` marker: wall time,
peak memory, when). The wall time is that of
every run the stage took: while a stage runs, ``elapsed.json`` holds the seconds spent so far
(rewritten every :data:`HEARTBEAT` seconds), so a run stopped by Ctrl-C, a crash or a machine taken
away loses at most that much of the count, and a resumed run adds to it. A rerun skips a stage
whose record matches and that is done, resumes one that is not done (the commands it runs resume
their own work), and refuses one whose options or inputs changed, naming each difference, unless
``force``. The record is kept apart from the stage's outputs because the commands a stage runs
(``pysmt train``, ``tune``, ``rnn train``...) keep their own ``job.json`` in their ``--out``.

Commands run as child processes (``python -m pysmt.cli ...``): the core never imports a plugin,
and ``os.wait4`` gives each child's own peak resident memory (its waited-for workers included),
which ``resource.getrusage(RUSAGE_CHILDREN)`` would only give as a maximum over all children so far.
On a cluster (``--cluster``) a stage's commands run on a node the cluster chose for what the stage
:class:`Needs` (:mod:`pysmt.experiment.on_cluster`), and stages may run at the same time.
"""

from __future__ import annotations

import json
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol, Self

from pysmt.errors import PysmtError
from pysmt.files.textio import atomic_writer, read_json
from pysmt.running.folder_lock import release_folder
from pysmt.running.jobs import DoneMarkers, Job
from pysmt.running.processes import ChildProcess, Terminated

DONE_FILE = "done.json"
ELAPSED_FILE = "elapsed.json"
#: A stage's messages, when it runs on a cluster (beside others: their progress bars would mix).
LOG_FILE = "log.txt"
#: Seconds between two writes of a running stage's ``elapsed.json``.
HEARTBEAT = 60.0


_NUMBERING = threading.Lock()


def log(message: str) -> None:
    sys.stderr.write(f"pysmt experiment: {message}\n")  # one write: stages on a cluster log from several threads
    sys.stderr.flush()


def duration(seconds: float) -> str:
    """``1 h 02 min``, ``3 min 05 s`` or ``4.2 s``: stage times as people read them."""
    if seconds >= 3600:
        return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"
    if seconds >= 60:
        return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
    return f"{seconds:.1f} s"


@dataclass(frozen=True)
class Needs:
    """What one of a stage's commands asks a cluster for: CPUs, memory (MB) and GPUs."""

    cpus: int = 1
    memory_mb: float = 0.0
    gpus: float = 0.0


@dataclass(frozen=True)
class Step:
    """A stage of the chain: its name, the stages it needs done first, and what runs it (records included).

    Here, not in the chain, because the scheduler of the stages on a cluster
    (:func:`pysmt.experiment.on_cluster.run_graph`) runs them too."""

    name: str
    after: list[str]
    action: Callable[[], object]


class Place(Protocol):
    """Where a stage's commands run (a cluster), given what the stage needs; see :mod:`pysmt.experiment.on_cluster`."""

    def run(self, args: list[str], stdout: Path | None, log: Path, needs: Needs) -> tuple[int, float]:
        """Run ``pysmt ARGS`` (stdout into ``stdout``, stderr appended to ``log``); its exit status and peak MB."""
        ...


def run_command(args: list[str], stdout: Path | None = None, stderr: IO[Any] | None = None) -> tuple[int, float]:
    """Run ``pysmt ARGS`` as a child process (stdout into the file ``stdout``, else to stderr); its exit
    status and peak resident memory in MB. Ctrl-C or SIGTERM here stops the child too, and waits for it."""
    err = stderr if stderr is not None else sys.stderr
    with open(stdout, "wb") if stdout is not None else nullcontext(err) as out:
        process = ChildProcess([sys.executable, "-m", "pysmt.cli", *args], stdout=out, stderr=err)
        try:
            _, status, usage = os.wait4(process.pid, 0)
        except KeyboardInterrupt as stop:  # let the child stop too, and keep what it wrote
            if isinstance(stop, Terminated):  # (Ctrl-C reached it from the terminal; SIGTERM may not have)
                process.terminate()
            os.wait4(process.pid, 0)
            raise
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024


@dataclass
class Measure:
    """What a stage's commands cost: peak resident memory of the largest child, in MB.

    With a ``place`` (a cluster), the commands run there and their messages go to ``log``.
    """

    peak_mb: float = 0.0
    place: Place | None = None
    log: Path | None = None
    needs: Needs = Needs()

    def run(self, args: list[str], stdout: Path | None = None) -> None:
        """Run ``pysmt ARGS`` (its progress on stderr, its output into ``stdout``); a failure is a one-line error."""
        if self.place is None:
            status, peak_mb = run_command(args, stdout)
        else:
            status, peak_mb = self.place.run(args, stdout, self.log, self.needs)  # type: ignore[arg-type]
        self.peak_mb = max(self.peak_mb, peak_mb)
        if status in (130, 143):
            raise KeyboardInterrupt if status == 130 else Terminated
        if status != 0:
            where = "above" if self.place is None else f"in {self.log}"
            raise PysmtError(f"`pysmt {' '.join(args)}` failed with exit status {status} (its message is {where})")


class StageClock:
    """The wall time a stage has spent over all its runs, kept in ``elapsed.json`` while it runs."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / ELAPSED_FILE
        try:
            self.earlier = float(read_json(self.path)["seconds"])
        except (OSError, ValueError, KeyError, TypeError):  # none yet, or unreadable: count from now
            self.earlier = 0.0
        self.start = time.time()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._beat, daemon=True)

    def seconds(self) -> float:
        return self.earlier + time.time() - self.start

    def save(self) -> None:
        with atomic_writer(self.path) as out:
            json.dump({"seconds": round(self.seconds(), 1)}, out)

    def _beat(self) -> None:
        """Save now and then. A save that fails (a full disk) is skipped: raised in this thread it would be a
        traceback beside the command's own error, and the stage's next write, or the last save, says it in one line."""
        while not self.stopped.wait(HEARTBEAT):
            try:
                self.save()
            except PysmtError:
                continue

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        self.stopped.set()
        self.thread.join()
        try:
            self.save()
        except PysmtError:
            if kind is None:
                raise  # else the stage's own error (a full disk where it wrote) is the one to report


@dataclass
class StageResult:
    """A finished stage: its name, the wall time of all its runs, and the peak memory of the run that finished it."""

    name: str
    seconds: float
    peak_mb: float | None
    skipped: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "seconds": round(self.seconds, 1),
            "peak_mb": None if self.peak_mb is None else round(self.peak_mb, 1),
        }


def portable(value: Any, run_dir: Path) -> Any:
    """``value`` (a stage's options) with every path inside ``run_dir`` written from it (``$RUN/data/train``),
    so that a stage's record stays the same when the experiment's folder is moved or copied."""
    root = str(run_dir)
    if isinstance(value, (str, Path)) and (str(value) == root or str(value).startswith(root + os.sep)):
        return "$RUN" + str(value)[len(root) :]
    if isinstance(value, Mapping):
        return {key: portable(item, run_dir) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [portable(item, run_dir) for item in value]
    return value


@dataclass
class Stages:
    """Runs the stages of one experiment in ``run_dir``, numbering them as they start for the progress lines.

    With a ``place`` (a cluster), the stages' commands run there; several stages may run at once
    (from several threads).
    """

    run_dir: Path
    total: int
    force: bool = False
    place: Place | None = None
    done: list[StageResult] = field(default_factory=list)
    started: int = 0

    def run(
        self,
        name: str,
        options: Mapping[str, Any],
        inputs: Mapping[str, Any],
        action: Callable[[Measure], object],
        in_process: bool = False,
        derived: bool = False,
        needs: Needs = Needs(),
    ) -> StageResult:
        """Run ``action`` unless the stage is done with the same options and inputs.

        ``in_process`` stages run no command; their peak memory is not measured (None). A
        ``derived`` stage (scores computed from other stages' outputs) is redone when its inputs
        changed instead of refused: nothing of value is lost, and more seeds or test sets need it.
        ``needs`` is what each of its commands asks a cluster for.
        """
        with _NUMBERING:
            self.started += 1
            number = self.started
        folder = self.run_dir / "stages" / name
        job = Job(folder, f"pysmt experiment {name}", portable(options, self.run_dir), inputs)
        resumed = job.start(self.force or (derived and job.holds_other_work()))
        markers = DoneMarkers(self.run_dir / "stages", "{}/" + DONE_FILE)
        try:
            if resumed and markers.done(name):
                record = markers.record(name)  # (unreadable: done, its time and memory unknown)
                result = StageResult(name, float(record.get("seconds", math.nan)), record.get("peak_mb"), skipped=True)
                log(f"[{number}/{self.total}] {name}: done before ({duration(result.seconds)}), skipped")
            else:
                markers.redo(name)
                log(f"[{number}/{self.total}] {name}: {'resuming' if resumed else 'running'}")
                measure = Measure(place=self.place, log=folder / LOG_FILE, needs=needs)
                if not resumed:
                    (folder / ELAPSED_FILE).unlink(missing_ok=True)
                with StageClock(folder) as clock:
                    action(measure)
                result = StageResult(name, clock.seconds(), None if in_process else measure.peak_mb, skipped=False)
                markers.finish(name, **result.to_dict())
                memory = "" if result.peak_mb is None else f", peak {result.peak_mb:,.0f} MB"
                log(f"[{number}/{self.total}] {name}: done in {duration(result.seconds)}{memory}")
        finally:
            release_folder(folder)
        self.done.append(result)
        return result
