"""Resumable stages: each records its inputs, is skipped when done, and measures its time and memory.

A stage's record lives in ``RUN_DIR/stages/<name>/``: ``job.json`` (a :class:`pysmt.jobs.Job`:
the options that shape the stage's result and a fingerprint of every input file or folder) and,
once the stage has finished, ``done.json`` (wall time, peak memory, when). The wall time is that of
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
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Self

from pysmt.errors import PysmtError
from pysmt.folder_lock import release_folder
from pysmt.jobs import Job
from pysmt.processes import ChildProcess, Terminated
from pysmt.textio import atomic_writer

DONE_FILE = "done.json"
ELAPSED_FILE = "elapsed.json"
#: Seconds between two writes of a running stage's ``elapsed.json``.
HEARTBEAT = 60.0


def log(message: str) -> None:
    print(f"pysmt experiment: {message}", file=sys.stderr, flush=True)


def duration(seconds: float) -> str:
    """``1 h 02 min``, ``3 min 05 s`` or ``4.2 s``: stage times as people read them."""
    if seconds >= 3600:
        return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"
    if seconds >= 60:
        return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
    return f"{seconds:.1f} s"


@dataclass
class Measure:
    """What a stage's commands cost: peak resident memory of the largest child, in MB."""

    peak_mb: float = 0.0

    def run(self, args: list[str], stdout: IO[Any] | None = None) -> None:
        """Run ``pysmt ARGS`` as a child process (its progress on stderr); a failure is a one-line error."""
        command = [sys.executable, "-m", "pysmt.cli", *args]
        process = ChildProcess(command, stdout=stdout if stdout is not None else sys.stderr)
        try:
            status, usage = self._wait(process)
        except KeyboardInterrupt as stop:  # let the child stop too, and keep what it wrote
            if isinstance(stop, Terminated):  # (Ctrl-C reached it from the terminal; SIGTERM may not have)
                process.terminate()
            self._wait(process)
            raise
        self.peak_mb = max(self.peak_mb, usage.ru_maxrss / 1024)
        if status in (130, 143):
            raise KeyboardInterrupt if status == 130 else Terminated
        if status != 0:
            raise PysmtError(f"`pysmt {' '.join(args)}` failed with exit status {status} (its message is above)")

    @staticmethod
    def _wait(process: subprocess.Popen) -> tuple[int, Any]:
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        return process.returncode, usage


class StageClock:
    """The wall time a stage has spent over all its runs, kept in ``elapsed.json`` while it runs."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / ELAPSED_FILE
        try:
            self.earlier = float(json.loads(self.path.read_text(encoding="utf-8"))["seconds"])
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
        while not self.stopped.wait(HEARTBEAT):
            self.save()

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped.set()
        self.thread.join()
        self.save()


@dataclass
class StageResult:
    """A finished stage: its name, the wall time of all its runs, and the peak memory of the run that finished it."""

    name: str
    seconds: float
    peak_mb: float | None
    skipped: bool

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "seconds": round(self.seconds, 1),
                "peak_mb": None if self.peak_mb is None else round(self.peak_mb, 1)}


def portable(value: Any, run_dir: Path) -> Any:
    """``value`` (a stage's options) with every path inside ``run_dir`` written from it (``$RUN/data/train``),
    so that a stage's record stays the same when the experiment's folder is moved or copied."""
    root = str(run_dir)
    if isinstance(value, (str, Path)) and (str(value) == root or str(value).startswith(root + os.sep)):
        return "$RUN" + str(value)[len(root):]
    if isinstance(value, Mapping):
        return {key: portable(item, run_dir) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [portable(item, run_dir) for item in value]
    return value


@dataclass
class Stages:
    """Runs the stages of one experiment in ``run_dir``, in order, numbering them for the progress lines."""

    run_dir: Path
    total: int
    force: bool = False
    done: list[StageResult] = field(default_factory=list)

    def run(self, name: str, options: Mapping[str, Any], inputs: Mapping[str, Any],
            action: Callable[[Measure], None], in_process: bool = False, derived: bool = False) -> StageResult:
        """Run ``action`` unless the stage is done with the same options and inputs.

        ``in_process`` stages run no command; their peak memory is not measured (None). A
        ``derived`` stage (scores computed from other stages' outputs) is redone when its inputs
        changed instead of refused: nothing of value is lost, and more seeds or test sets need it.
        """
        number = len(self.done) + 1
        folder = self.run_dir / "stages" / name
        job = Job(folder, f"pysmt experiment {name}", portable(options, self.run_dir), inputs)
        resumed = job.start(self.force or (derived and job.holds_other_work()))
        try:
            marker = folder / DONE_FILE
            if resumed and marker.is_file():
                record = json.loads(marker.read_text(encoding="utf-8"))
                result = StageResult(name, record["seconds"], record["peak_mb"], skipped=True)
                log(f"[{number}/{self.total}] {name}: done before ({duration(result.seconds)}), skipped")
            else:
                marker.unlink(missing_ok=True)
                log(f"[{number}/{self.total}] {name}: {'resuming' if resumed else 'running'}")
                measure = Measure()
                if not resumed:
                    (folder / ELAPSED_FILE).unlink(missing_ok=True)
                with StageClock(folder) as clock:
                    action(measure)
                result = StageResult(name, clock.seconds(), None if in_process else measure.peak_mb, skipped=False)
                with atomic_writer(marker) as out:
                    json.dump({**result.to_dict(), "finished": time.strftime("%Y-%m-%d %H:%M:%S")}, out)
                memory = "" if result.peak_mb is None else f", peak {result.peak_mb:,.0f} MB"
                log(f"[{number}/{self.total}] {name}: done in {duration(result.seconds)}{memory}")
        finally:
            release_folder(folder)
        self.done.append(result)
        return result
