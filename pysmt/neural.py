"""What the neural plugins share: devices, checkpoints, hyperparameters saved inside them, and the
pieces of a resumable training run (its limits, resuming a checkpoint, SIGTERM as an exception).

The RNN Encoder-Decoder and the CSLM plugins (and a third party's) build on these so that every
neural model names devices, writes and reads checkpoints, and reports a bad file the same way.
torch is imported only when a function needs it: pysmt itself does not depend on torch.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, TypeVar

from pysmt.errors import PysmtError
from pysmt.textio import atomic_path

if TYPE_CHECKING:
    import torch

DEVICE_NAMES = "auto, cpu, cuda or cuda:N"

H = TypeVar("H", bound="Hyperparameters")


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
        raise PysmtError(f"{label} {name}: there is no such GPU here ({torch.cuda.device_count()} visible: "
                         f"cuda:0 to cuda:{torch.cuda.device_count() - 1})")
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


def load_checkpoint(path: Path, model_type: str, train_command: str, *, unmarked_ok: bool = False) -> dict[str, Any]:
    """A checkpoint of ``model_type``, or one clear line for a missing, corrupt or foreign file.

    ``unmarked_ok`` accepts checkpoints written before they were marked with their type.
    """
    import torch

    if not path.is_file():
        raise PysmtError(f"{path}: no such checkpoint (train one with `{train_command}`)")
    try:
        state = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as err:  # noqa: BLE001 - a user's file: whatever torch makes of garbage is one clear error
        reason = first_line(err) if path.stat().st_size else "an empty file"
        raise PysmtError(f"{path}: not a readable {model_type} checkpoint ({reason}); "
                         f"train the model again with `{train_command}`") from None
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


@dataclass
class TrainingLimits:
    """When training stops, and how often it validates and checkpoints (in updates).

    ``max_time`` counts the seconds of training in all, across resumed runs (each checkpoint
    carries the time spent so far), as fairseq's ``--stop-time-hours`` does: an interrupted job
    resumed with the same budget stops where an uninterrupted one would have, in time.
    """

    max_updates: int | None = None
    max_time: float | None = None
    valid_every: int = 2000
    checkpoint_every: int = 2000
    patience: int = 10

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


class Interrupted(Exception):
    """SIGTERM during training (see :func:`raise_interrupted`): the run saves a checkpoint and stops."""


def raise_interrupted(signum: int, frame: FrameType | None) -> None:
    """A SIGTERM handler that raises :class:`Interrupted`, so a training loop can save before it stops."""
    raise Interrupted


def resumable_state(last: Path, hp: Hyperparameters, load: Callable[[Path], dict[str, Any]]) -> dict[str, Any] | None:
    """The checkpoint ``last`` to resume (None when there is none), refused with one line when it was
    trained with other hyperparameters than ``hp``; what an older version's checkpoint lacks (the
    seconds of training so far) is filled from :data:`FRESH_STATE`."""
    if not last.exists():
        return None
    state = load(last)
    saved = type(hp).from_dict(state["hyperparameters"])
    if saved != hp:
        raise PysmtError(f"{last} was trained with preset {saved.preset!r} ({saved}); resuming it with "
                         f"{hp.preset!r} ({hp}) is not possible: rerun with --force to start afresh there, "
                         "or give a new --out")
    return {**FRESH_STATE, **state}


#: The training state of a run that starts afresh.
FRESH_STATE: dict[str, Any] = {"update": 0, "best": float("inf"), "bad_validations": 0, "rng": None, "optimizer": None,
                               "seconds": 0.0}
