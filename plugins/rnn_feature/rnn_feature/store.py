"""A model directory: checkpoints (with their hyperparameters) and shortlists; devices.

Layout of ``DIR``: ``model.pt`` (the best weights by validation perplexity: what scoring uses),
``last.pt`` (everything needed to resume training), ``source.vocab`` and ``target.vocab`` (the
shortlists), ``pairs.npz`` (the encoded training pairs), ``log.tsv`` (validation history).
Checkpoints are written to a temporary file and renamed, so an interruption never leaves half
of one.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import torch

from pysmt.errors import PysmtError
from pysmt.textio import atomic_path
from rnn_feature.hyperparameters import Hyperparameters
from rnn_feature.model import EncoderDecoder
from rnn_feature.vocabulary import Shortlist

MODEL, LAST = "model.pt", "last.pt"
SOURCE_VOCAB, TARGET_VOCAB = "source.vocab", "target.vocab"
DEVICE_NAMES = "auto, cpu, cuda or cuda:N"


def resolve_device(name: str | torch.device, label: str = "--device") -> torch.device:
    """``auto`` (CUDA when there is a GPU), ``cpu`` or ``cuda[:N]``; anything else is a clear error.

    So is CUDA without a GPU. Commands call this before loading anything, so a mistyped
    ``--device`` fails at once; ``label`` names the setting in the messages.
    """
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


def save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    with atomic_path(path) as tmp:
        torch.save(state, tmp)


def load_checkpoint(path: Path) -> dict[str, Any]:
    """A checkpoint written by :func:`save_checkpoint`, or a clear error for a missing or corrupt file."""
    if not path.is_file():
        raise PysmtError(f"{path}: no such checkpoint (train one with `pysmt rnn train`)")
    try:
        state = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as err:  # noqa: BLE001 - a user's file: whatever torch makes of garbage is one clear error
        reason = first_line(err) if path.stat().st_size else "an empty file"
        raise PysmtError(f"{path}: not a readable pysmt-rnn checkpoint ({reason}); "
                         "train the model again with `pysmt rnn train`") from None
    if not isinstance(state, dict) or "hyperparameters" not in state or "model" not in state:
        raise PysmtError(f"{path}: not a pysmt-rnn checkpoint (no hyperparameters or weights)")
    return state


def first_line(err: BaseException) -> str:
    """The first line of an exception's message (torch's messages run over several), or its type."""
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def build_model(state: dict[str, Any], path: Path) -> EncoderDecoder:
    """The model a checkpoint describes, with its weights."""
    try:
        hp = Hyperparameters.from_dict(state["hyperparameters"])
        model = EncoderDecoder(hp, int(state["source_size"]), int(state["target_size"]))
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise PysmtError(f"{path}: not a pysmt-rnn checkpoint ({type(err).__name__}: {first_line(err)})") from None
    try:
        model.load_state_dict(state["model"])
    except RuntimeError as err:
        raise PysmtError(f"{path}: weights do not fit preset {hp.preset!r} ({first_line(err)})") from None
    return model


def load_model(directory: Path, device: str | torch.device = "cpu"
               ) -> tuple[EncoderDecoder, Shortlist, Shortlist]:
    """The best model of a directory, on ``device``, in evaluation mode, with its shortlists."""
    directory = Path(directory)
    path = directory / MODEL
    model = build_model(load_checkpoint(path), path)
    model.to(resolve_device(device) if isinstance(device, str) else device).eval()
    source, target = Shortlist.load(directory / SOURCE_VOCAB), Shortlist.load(directory / TARGET_VOCAB)
    if (len(source), len(target)) != (model.source_embedding.num_embeddings, model.target_embedding.num_embeddings):
        raise PysmtError(f"{directory}: the shortlists ({len(source)}, {len(target)} words) do not match the model")
    return model, source, target
