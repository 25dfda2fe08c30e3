"""What the neural plugins share: devices, checkpoints, hyperparameters saved inside them, and a
resumable training run (its job record, its limits, resuming a checkpoint, the training loop).

The RNN Encoder-Decoder and the CSLM plugins (and a third party's) build on these so that every
neural model names devices, writes and reads checkpoints, trains, validates, stops and resumes, and
reports a bad file the same way: a plugin says only how to draw a minibatch's loss and how to
validate (:class:`TrainingTask`). torch is imported only when a function needs it: pysmt itself
does not depend on torch.
"""

from __future__ import annotations

import re
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
import numpy as np

from pysmt.cli_options import POSITIVE, option
from pysmt.errors import PysmtError
from pysmt.files.textio import atomic_path, require_file
from pysmt.running.folder_lock import NOT_CONTENT, release_folder
from pysmt.running.jobs import JOB_FILE, Job
from pysmt.running.processes import Terminated, stop_on_sigterm

if TYPE_CHECKING:
    import torch

DEVICE_NAMES = "auto, cpu, cuda or cuda:N"
#: A model folder's checkpoints (the best weights by validation perplexity; everything needed to
#: resume) and its validation history, the same for every neural plugin.
MODEL, LAST, LOG = "model.pt", "last.pt", "log.tsv"

H = TypeVar("H", bound="Hyperparameters")
#: Below this share of a sentence's words in a neural model's vocabulary, a warning says so.
LOW_COVERAGE = 0.5


def coverage_warning(feature: str, words: Sequence[str], vocabulary: Any, what: str, where: Path) -> str | None:
    """The warning for a neural model that knows few of ``words`` (``what``: "source words", ...), or None.

    A model trained on the other language or another tokenization scores every phrase as unknown
    words, silently: the features still give numbers. Fewer than 10 words say nothing.
    """
    if len(words) < 10:
        return None
    return coverage_note(feature, sum(1 for w in words if w in vocabulary) / len(words), what, where)


def coverage_note(feature: str, covered: float, what: str, where: Path) -> str | None:
    """The warning for a model that knows only the share ``covered`` of some words, or None when that is enough."""
    if covered >= LOW_COVERAGE:
        return None
    return (
        f"pysmt: warning: feature {feature}: only {covered:.0%} of the {what} are in the model's vocabulary "
        f"({where}); was it trained on this system's languages and tokenization?"
    )


def resolve_device(name: str | torch.device, label: str = "--device") -> torch.device:
    """``auto`` (CUDA when there is a GPU), ``cpu`` or ``cuda[:N]``; anything else is a clear error.

    So is CUDA without a GPU. Commands call this before loading anything, so a mistyped
    ``--device`` fails at once; ``label`` names the setting in the messages.
    """
    import torch

    name = str(name).strip().lower()
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    match = re.fullmatch(r"cuda(?::(\d+))?", name)
    if match is None:
        raise PysmtError(f"{label} {name}: unknown device; use {DEVICE_NAMES}")
    if not torch.cuda.is_available():
        raise PysmtError(f"{label} {name} was requested but no CUDA GPU is available here; use {label} cpu")
    if match.group(1) is not None and int(match.group(1)) >= torch.cuda.device_count():
        raise PysmtError(
            f"{label} {name}: there is no such GPU here ({torch.cuda.device_count()} visible: "
            f"cuda:0 to cuda:{torch.cuda.device_count() - 1})"
        )
    return torch.device(name)


def first_line(err: BaseException) -> str:
    """The first line of an exception's message (torch's messages run over several), or its type."""
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def save_checkpoint(path: Path, state: dict[str, Any], model_type: str) -> None:
    """Write a checkpoint atomically, marked with the model type that wrote it."""
    import torch

    with atomic_path(path) as tmp:
        torch.save({"model_type": model_type, **state}, tmp)


def load_checkpoint(
    path: Path, model_type: str, train_command: str, *, unmarked_ok: bool = False, mapped: bool = False
) -> dict[str, Any]:
    """A checkpoint of ``model_type``, or one clear line for a missing, corrupt or foreign file.

    ``unmarked_ok`` accepts checkpoints written before they were marked with their type. ``mapped``
    maps the weights instead of reading them: what a feature's ``check_config`` uses to refuse a
    foreign model (a CSLM given an RNN's folder) in milliseconds, before any table is loaded.
    """
    import torch

    if not path.is_file():
        raise PysmtError(f"{path}: no such checkpoint (train one with `{train_command}`)")
    try:
        state = torch.load(path, map_location="cpu", weights_only=False, mmap=mapped)
    except Exception as err:  # noqa: BLE001 - a user's file: whatever torch makes of garbage is one clear error
        reason = first_line(err) if path.stat().st_size else "an empty file"
        raise PysmtError(
            f"{path}: not a readable {model_type} checkpoint ({reason}); train the model again with `{train_command}`"
        ) from None
    marked = isinstance(state, dict) and state.get("model_type", model_type if unmarked_ok else None)
    if marked != model_type:
        other = f" (it is a {marked} model)" if isinstance(marked, str) else ""
        raise PysmtError(f"{path}: not a {model_type} checkpoint{other}; train one with `{train_command}`")
    if "hyperparameters" not in state or "model" not in state:
        raise PysmtError(f"{path}: not a complete {model_type} checkpoint (no hyperparameters or weights)")
    return state


class Hyperparameters:
    """A mixin for a model's hyperparameters dataclass: one typed object, saved inside every checkpoint."""

    preset: str  # the named preset the values came from (a field of every subclass)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)  # type: ignore[call-overload]

    @classmethod
    def from_dict(cls: type[H], data: dict[str, Any]) -> H:
        known = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown hyperparameters {', '.join(unknown)}")
        return cls(**data)


def minutes_in_seconds(minutes: float) -> float:
    """``--max-time`` is given in minutes; :attr:`TrainingLimits.max_time` counts seconds."""
    return minutes * 60


@dataclass(kw_only=True)
class TrainingLimits:
    """When training stops, and how often it validates and checkpoints (in updates).

    ``max_time`` counts the seconds of training in all, across resumed runs (each checkpoint
    carries the time spent so far), as fairseq's ``--stop-time-hours`` does: an interrupted job
    resumed with the same budget stops where an uninterrupted one would have, in time. The fields
    with an option in their metadata are the options of the plugins' ``train`` commands
    (:mod:`pysmt.cli_options`), which checkpoint at every validation.
    """

    max_time: float | None = field(
        default=None,
        metadata=option(
            type=click.FloatRange(min=0, min_open=True),
            convert=minutes_in_seconds,
            help="Stop after this many minutes of training in all, resumed runs included (a checkpoint is kept).",
        ),
    )
    max_updates: int | None = field(
        default=None, metadata=option(type=POSITIVE, help="Stop after this many updates in total.")
    )
    valid_every: int = field(
        default=2000, metadata=option(type=POSITIVE, help="Updates between validations (and checkpoints of last.pt).")
    )
    checkpoint_every: int = 2000
    patience: int = field(
        default=10,
        metadata=option(type=POSITIVE, help="Stop when this many validations in a row do not improve perplexity."),
    )

    def stop_reason(self, update: int, seconds: float, bad_validations: int) -> str | None:
        """Why training stops now (None to go on), given the update count, the seconds of training
        in all and the validations in a row without improvement."""
        if self.max_updates is not None and update >= self.max_updates:
            return f"reached {self.max_updates:,} updates"
        if self.max_time is not None and seconds >= self.max_time:
            return f"reached --max-time ({self.max_time / 60:g} min of training in all)"
        if bad_validations >= self.patience:
            return f"validation perplexity has not improved {bad_validations} times in a row: stopping early"
        return None


class TrainingClock:
    """Seconds of training in all: those of earlier runs (from the checkpoint) plus this run's."""

    def __init__(self, earlier: float) -> None:
        self.earlier, self.start = earlier, time.time()

    def __call__(self) -> float:
        return self.earlier + time.time() - self.start


def resumable_state(last: Path, hp: Hyperparameters, load: Callable[[Path], dict[str, Any]]) -> dict[str, Any] | None:
    """The checkpoint ``last`` to resume (None when there is none), refused with one line when it was
    trained with other hyperparameters than ``hp``; what an older version's checkpoint lacks (the
    seconds of training so far) is filled from :data:`FRESH_STATE`."""
    if not last.exists():
        return None
    state = load(last)
    saved = type(hp).from_dict(state["hyperparameters"])
    if saved != hp:
        raise PysmtError(
            f"{last} was trained with preset {saved.preset!r} ({saved}); resuming it with "
            f"{hp.preset!r} ({hp}) is not possible: rerun with --force to start afresh there, "
            "or give a new --out"
        )
    return {**FRESH_STATE, **state}


M = TypeVar("M")


def resume_or_start(
    last: Path,
    hp: Hyperparameters,
    load: Callable[[Path], dict[str, Any]],
    build: Callable[[dict[str, Any], Path], M],
    fresh: Callable[[], M],
    log: Callable[[str], None],
) -> tuple[dict[str, Any], M]:
    """The training state and the model a run trains: the checkpoint ``last``'s, rebuilt by ``build`` (checked by
    :func:`resumable_state`; ``log`` says where it resumes), else :data:`FRESH_STATE` and ``fresh()``. One place,
    so that every plugin resumes alike; seed torch before calling it, as ``fresh()`` initializes weights."""
    state = resumable_state(last, hp, load)
    if state is None:
        return dict(FRESH_STATE), fresh()
    model = build(state, last)
    log(f"resuming at update {state['update']:,}")
    return state, model


#: The training state of a run that starts afresh.
FRESH_STATE: dict[str, Any] = {
    "update": 0,
    "best": float("inf"),
    "bad_validations": 0,
    "rng": None,
    "optimizer": None,
    "seconds": 0.0,
}


def start_training_job(
    out: Path,
    command: str,
    hp: Hyperparameters,
    inputs: Mapping[str, Path | None],
    training_files: Sequence[str],
    force: bool = False,
) -> bool:
    """Record a training job in ``out`` before any work; True when it resumes earlier training of the same job.

    ``inputs`` maps each option to its file (None: not given); a missing one is an error. Other
    inputs or hyperparameters than the folder's record are an error unless ``force``; starting
    afresh deletes the earlier training files (only ``training_files``). A folder holding nothing
    but a record (a run that failed before writing anything) has nothing to lose and starts afresh
    without ``force``.
    """
    for label, path in inputs.items():
        if path is not None:
            require_file(path, label)
    if out.exists() and not out.is_dir():
        raise PysmtError(f"--out {out}: is a file, not a folder")
    record_only = out.is_dir() and [p.name for p in out.iterdir() if p.name not in NOT_CONTENT] == [JOB_FILE]
    if Job(out, command, hp.to_dict(), dict(inputs)).start(force or record_only):
        return True
    for name in training_files:
        (out / name).unlink(missing_ok=True)
    return False


@dataclass
class TrainingTask:
    """What one model's training does its own way; :func:`train_loop` does the rest, the same for every model.

    ``step`` draws a minibatch with the run's generator and returns the loss to minimize and the
    figure to show and log (the loss itself, or the likelihood part of it); ``validate`` returns
    the validation perplexity and any other figures for ``log.tsv`` (``{"mean log Z": -0.02}``);
    ``model_state`` is what every checkpoint holds at an update count; ``save`` writes a checkpoint.
    """

    command: str  # "rnn train": names the progress bar and the messages
    batch_size: int
    items: str  # what a minibatch holds ("pairs"), shown as items per second
    figure: str  # the name of step's second value ("loss", "nll")
    step: Callable[[np.random.Generator], tuple[torch.Tensor, torch.Tensor]]
    validate: Callable[[], tuple[float, dict[str, float]]]
    model_state: Callable[[int], dict[str, Any]]
    save: Callable[[Path, dict[str, Any]], None]

    def log(self, message: str) -> None:
        print(f"pysmt {self.command}: {message}", file=sys.stderr, flush=True)


def train_loop(
    task: TrainingTask,
    out: Path,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    state: dict[str, Any],
    seed: int,
    limits: TrainingLimits,
) -> float:
    """Train ``model`` from ``state`` (resumed or :data:`FRESH_STATE`) until ``limits`` stop it; return the
    best validation perplexity.

    Every ``valid_every`` updates it validates, appends a row to ``log.tsv`` and keeps the best
    weights in ``model.pt``; every ``checkpoint_every`` updates, at the end and on Ctrl-C or SIGTERM
    it writes ``last.pt`` (weights, optimizer, the minibatch generator, the seconds of training),
    from which a rerun continues exactly as an uninterrupted run would. An interrupted run exits
    with status 130.
    """
    from pysmt.files.progress import progress_bar

    if state["optimizer"] is not None:
        optimizer.load_state_dict(state["optimizer"])
    rng = np.random.default_rng(seed)
    if state["rng"] is not None:
        rng.bit_generator.state = state["rng"]
    update, best, bad = state["update"], state["best"], state["bad_validations"]

    def checkpoint() -> None:
        task.save(
            out / LAST,
            {
                **task.model_state(update),
                "optimizer": optimizer.state_dict(),
                "rng": rng.bit_generator.state,
                "best": best,
                "bad_validations": bad,
                "seconds": clock(),
            },
        )

    def save_best(valid_perplexity: float) -> None:
        task.save(out / MODEL, {**task.model_state(update), "valid_perplexity": valid_perplexity})

    previous = signal.getsignal(signal.SIGTERM)
    stop_on_sigterm()  # SIGTERM saves a checkpoint, as Ctrl-C does
    clock = TrainingClock(state["seconds"])
    progress = progress_bar(
        initial=update, total=limits.max_updates, unit=" updates", desc=task.command, mininterval=1.0
    )
    validated = update  # the update the weights were last validated at
    figure: Any = None  # the last update's figure (a tensor): set by every step before it is read

    def validate(loss: float) -> int:
        """Validate the current weights: keep them as the best if they are, log the row; the update validated."""
        nonlocal best, bad
        perplexity, others = task.validate()
        if perplexity < best:
            best, bad = perplexity, 0
            save_best(perplexity)
        else:
            bad += 1
        columns = "".join(f"\t{value:.4f}" for value in others.values())
        with open(out / LOG, "a", encoding="utf-8") as handle:
            handle.write(f"{update}\t{loss:.4f}\t{perplexity:.3f}{columns}\t{clock():.0f}\n")
        shown = "".join(f", {name} {value:.3f}" for name, value in others.items())
        task.log(f"update {update:,}: validation perplexity {perplexity:.2f} (best {best:.2f}){shown}")
        return update

    try:
        while True:
            reason = limits.stop_reason(update, clock(), bad)
            if reason is not None:
                task.log(reason)
                if validated != update:  # the updates since the last validation count too, as fairseq's last epoch
                    validated = validate(figure.item())
                break
            loss, figure = task.step(rng)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            update += 1
            progress.update(1)
            if update % 20 == 0:
                rate = progress.format_dict.get("rate") or 0.0
                progress.set_postfix(
                    {task.figure: f"{figure.item():.3f}", f"{task.items}_s": f"{rate * task.batch_size:.0f}"},
                    refresh=False,
                )
            if update % limits.valid_every == 0:
                validated = validate(figure.item())
            if update % limits.checkpoint_every == 0:
                checkpoint()
    except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM (Terminated)
        progress.close()
        task.log(f"interrupted at update {update:,}: saving {out / LAST}; rerun the command to resume")
        checkpoint()
        raise SystemExit(143 if isinstance(stop, Terminated) else 130) from None
    finally:
        progress.close()
        signal.signal(signal.SIGTERM, previous)
        release_folder(out)  # taken by start_training_job
    if update != state["update"] or not (out / LAST).exists():  # a rerun of a finished training changes nothing
        checkpoint()
    if not (out / MODEL).exists():  # no validation happened yet: the current weights are the best known
        best, _ = task.validate()
        save_best(best)
    return best
