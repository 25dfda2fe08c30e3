"""Resumable jobs remember what they were started with, so that a rerun resumes only the same job.

``pysmt train``, ``pysmt tune``, ``pysmt rnn train`` (and every later long job) write ``job.json``
into their output folder before doing any work: the command, the options that shape the result,
and a fingerprint (size, modification time and SHA-256 of the content) of every input file or
folder. Rerunning the command:

* with the same options and unchanged inputs resumes the job. An input whose modification time
  moved but whose content did not (data copied afresh onto a new machine, ``touch``) is unchanged:
  its content is hashed again only then, as ``rsync --checksum`` would, and the record is updated;
* with anything else stops with an error naming each difference, and how to start afresh
  (``--force``, which the job then honours by redoing its work, or a new ``--out``);
* on a folder that holds files but no ``job.json`` (made by something else) also stops, rather
  than guess what those files are.

Options that do not change the result (threads, iteration caps, time limits) are left out of the
record by the caller, so they can change between runs.

Within a job, what is finished is known by one rule (:class:`DoneMarkers`): each step writes its
outputs atomically, then its marker, a small JSON record of what the step measured, so a marker
means a complete step. ``pysmt train`` marks its steps, ``pysmt tune`` each iteration's decode and
optimize steps, ``pysmt experiment`` its stages; a rerun skips what is marked. A neural model's
training (``rnn train``, ``cslm train``) is one long step that resumes from inside, from its last
checkpoint (``last.pt``, :mod:`pysmt.neural`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pysmt.errors import PysmtError
from pysmt.files.textio import atomic_writer, read_json, require_file
from pysmt.running.folder_lock import NOT_CONTENT, lock_folder, release_folder

JOB_FILE = "job.json"
JSONValue = Any


class DoneMarkers:
    """The finished steps of a job and what each measured: step ``name``'s marker is
    ``folder / pattern.format(name)`` (``steps/{}.done``, ``stages/{}/done.json``)."""

    def __init__(self, folder: Path, pattern: str = "{}.done") -> None:
        self.folder = folder
        self.pattern = pattern

    def path(self, name: str) -> Path:
        return self.folder / self.pattern.format(name)

    def done(self, name: str) -> bool:
        return self.path(name).is_file()

    def record(self, name: str) -> dict[str, JSONValue]:
        """What a finished step measured; ``{}`` when it is not finished or its marker cannot be read (a
        record damaged by hand: the step stays done, its measurements are unknown)."""
        try:
            record = read_json(self.path(name))
        except (OSError, ValueError):
            return {}
        return record if isinstance(record, dict) else {}

    def redo(self, name: str) -> None:
        """Before a step runs (again): it is not finished until it marks itself so."""
        self.path(name).unlink(missing_ok=True)

    def finish(self, name: str, /, **measured: JSONValue) -> dict[str, JSONValue]:
        """Mark a step finished (after its outputs are written), with what it measured and when."""
        record = {**measured, "finished": time.strftime("%Y-%m-%d %H:%M:%S")}
        with atomic_writer(self.path(name)) as out:
            json.dump(record, out)
            out.write("\n")
        return record


def content_files(folder: Path) -> list[Path]:
    """The files under ``folder`` that make its content, in name order (not the lock of a run writing there)."""
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name not in NOT_CONTENT)


def holds_files(folder: Path) -> bool:
    """Whether ``folder`` exists and holds anything besides a run's lock."""
    return folder.is_dir() and any(p.name not in NOT_CONTENT for p in folder.iterdir())


def fingerprint(path: Path, label: str) -> dict[str, JSONValue]:
    """Size and modification time of a file, or of every file under a folder (a missing path is an error)."""
    require_file(path, label, folder_ok=True)
    if path.is_dir():
        files = content_files(path)
        stats = [p.stat() for p in files]
        return {
            "path": str(path.resolve()),
            "files": len(files),
            "size": sum(s.st_size for s in stats),
            "mtime_ns": max((s.st_mtime_ns for s in stats), default=0),
        }
    stat = path.stat()
    return {"path": str(path.resolve()), "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def content_digest(path: Path) -> str:
    """SHA-256 of a file's bytes, or of a folder's files (their relative names and bytes, in name order)."""
    digest = hashlib.sha256()
    files = content_files(path) if path.is_dir() else [path]
    for file in files:
        if path.is_dir():
            digest.update(file.relative_to(path).as_posix().encode() + b"\0")
        with open(file, "rb") as data:
            digest.update(hashlib.file_digest(data, "sha256").digest())
    return digest.hexdigest()


def same_place(old: dict[str, JSONValue], new: dict[str, JSONValue]) -> bool:
    """Whether a recorded input and this run's are one path: the same absolute path, or the same path
    relative to the job's folder (the folder was moved or copied together with its inputs)."""
    return old.get("path") == new["path"] or (
        old.get("relative") is not None and old.get("relative") == new.get("relative")
    )


def same_input(old: dict[str, JSONValue], new: dict[str, JSONValue]) -> bool:
    """Whether a recorded input (``old``) is unchanged in this run's fingerprint (``new``): the same
    place, size and file count, and the same modification time or, when the record holds a digest,
    the same content."""
    if not same_place(old, new) or any(old.get(key) != new.get(key) for key in ("size", "files")):
        return False
    if old.get("mtime_ns") == new["mtime_ns"]:
        return True
    return "sha256" in old and content_digest(Path(new["path"])) == old["sha256"]


def _paths(value: str | Path | Iterable[str | Path] | None) -> list[Path]:
    if value is None:
        return []
    if isinstance(value, (str, Path)):
        return [Path(value)]
    return [Path(v) for v in value]


def _show(value: JSONValue) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_show(v) for v in value) + "]" if value else "none"
    return "none" if value is None else str(value)


@dataclass
class Job:
    """One resumable job in ``out``: ``command`` with its result-shaping ``options`` and ``inputs``."""

    out: Path
    command: str
    options: Mapping[str, JSONValue]
    inputs: Mapping[str, str | Path | Iterable[str | Path] | None]

    @property
    def record_path(self) -> Path:
        return self.out / JOB_FILE

    def record(self) -> dict[str, JSONValue]:
        return {
            "command": self.command,
            "options": {key: json.loads(json.dumps(value, default=str)) for key, value in self.options.items()},
            "inputs": {
                label: [
                    {**fingerprint(p, label), "relative": os.path.relpath(p.resolve(), self.out.resolve())}
                    for p in _paths(value)
                ]
                for label, value in self.inputs.items()
            },
        }

    def differences(self, old: dict[str, JSONValue], new: dict[str, JSONValue]) -> list[str]:
        """What differs between a stored record and this run's, one phrase per difference."""
        if old.get("command") != new["command"]:
            return [f"it is a {old.get('command')!r} job, not {new['command']!r}"]
        found = []
        for key in sorted(set(old.get("options", {})) | set(new["options"])):
            before, now = old.get("options", {}).get(key), new["options"].get(key)
            if before != now:
                found.append(f"{key}: {_show(before)} -> {_show(now)}")
        for label in sorted(set(old.get("inputs", {})) | set(new["inputs"])):
            before, now = old.get("inputs", {}).get(label, []), new["inputs"].get(label, [])
            if len(before) != len(now) or not all(same_place(o, n) for o, n in zip(before, now)):
                found.append(f"{label}: {_show([f['path'] for f in before])} -> {_show([f['path'] for f in now])}")
                continue
            changed = [n["path"] for o, n in zip(before, now) if not same_input(o, n)]
            if changed:
                found.append(f"{label}: {', '.join(changed)} changed since the job started")
        return found

    @staticmethod
    def _completed(new: dict[str, JSONValue], old: dict[str, JSONValue] | None) -> dict[str, JSONValue]:
        """The record to store: ``new`` with each input's digest (kept from ``old`` when it has one,
        computed otherwise) and ``old``'s start time when the job resumes."""
        inputs = {}
        for label, prints in new["inputs"].items():
            before = (old or {}).get("inputs", {}).get(label, [])
            inputs[label] = [
                {
                    **print_,
                    "sha256": (before[i].get("sha256") if i < len(before) else None)
                    or content_digest(Path(print_["path"])),
                }
                for i, print_ in enumerate(prints)
            ]
        return {**new, "inputs": inputs, "started": (old or {}).get("started") or time.strftime("%Y-%m-%d %H:%M:%S")}

    def _write(self, record: dict[str, JSONValue]) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        with atomic_writer(self.record_path) as out:
            json.dump(record, out, indent=1)
            out.write("\n")

    def stored(self) -> dict[str, JSONValue] | None:
        """The record in ``job.json`` (``{}`` when the file is not a job record), or None without that file."""
        if not self.record_path.is_file():
            return None
        try:
            old = read_json(self.record_path)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return {}
        return old if isinstance(old, dict) and "command" in old else {}

    def holds_other_work(self) -> bool:
        """Whether ``out`` holds another job's work, or files of unknown origin (fails on a missing input)."""
        new, old = self.record(), self.stored()
        if old is None:
            return holds_files(self.out)
        return not old or bool(self.differences(old, new))

    def start(self, force: bool = False) -> bool:
        """Record the job before any work; return True when it resumes earlier work, False when it starts afresh.

        Raises a :class:`PysmtError` naming every difference when ``out`` holds another job (or
        unknown files) and ``force`` is not given. With ``force`` the caller must discard the old work.
        First of all the folder's lock is taken (:func:`lock_folder`): a second run is refused. The
        caller releases it when the job's work ends (:func:`release_folder`); a refusal releases it here.
        """
        self.check_inputs_outside()
        lock_folder(self.out)
        try:
            return self._record_start(force)
        except BaseException:
            release_folder(self.out, failed=True)  # a folder the lock made for nothing goes again
            raise

    def check_inputs_outside(self) -> None:
        """Refuse an input inside ``out``: the job writes there (a tune's iterations, a train's corpus copies)
        and a ``--force`` rerun discards what it holds, so such an input could be overwritten or deleted."""
        out = self.out.resolve()
        for label, value in self.inputs.items():
            for path in _paths(value):
                if path.resolve().is_relative_to(out):
                    raise PysmtError(
                        f"{label} {path} is inside the output folder {self.out}, which this {self.command} job "
                        "writes and a rerun may empty: an output may not overwrite an input; "
                        "move the input out of it or give another --out"
                    )

    def _record_start(self, force: bool) -> bool:
        new = self.record()
        old = self.stored()
        afresh = "rerun with --force to start afresh there, or give a new --out"
        if old == {} and not force:
            raise PysmtError(
                f"{self.record_path} is not a pysmt job record, so {self.out} may hold another job's files: {afresh}"
            )
        if old:
            changes = self.differences(old, new)
            if changes and not force:
                raise PysmtError(
                    f"{self.out} holds a {old['command']} job started with other inputs or "
                    f"options ({'; '.join(changes)}): {afresh}"
                )
            if not changes and not force:
                record = self._completed(new, old)
                if record != old:  # the inputs' new modification times, or an older record without digests
                    self._write(record)
                return True
        elif old is None and holds_files(self.out) and not force:
            raise PysmtError(
                f"{self.out} already holds files but no {JOB_FILE}, so they may not be this job's: {afresh}"
            )
        self._write(self._completed(new, None))
        return False
