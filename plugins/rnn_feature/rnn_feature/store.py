"""A model directory: checkpoints (with their hyperparameters) and shortlists; devices.

Layout of ``DIR``: ``model.pt`` (the best weights by validation perplexity: what scoring uses),
``last.pt`` (everything needed to resume training), ``source.vocab`` and ``target.vocab`` (the
shortlists), ``pairs.npz`` (the encoded training pairs), ``log.tsv`` (validation history).
Checkpoints are written to a temporary file and renamed, so an interruption never leaves half
of one.
"""

from __future__ import annotations

import pickle
import zipfile
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


def resolve_device(name: str) -> torch.device:
    """``auto`` (CUDA when there is a GPU), ``cpu`` or ``cuda[:N]``; CUDA without a GPU is a clear error."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise PysmtError(f"--device {name} was requested but no CUDA GPU is available here; use --device cpu")
    try:
        return torch.device(name)
    except RuntimeError as err:
        raise PysmtError(f"unknown device {name!r} ({err}); use auto, cpu or cuda") from None


def save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    with atomic_path(path) as tmp:
        torch.save(state, tmp)


def load_checkpoint(path: Path) -> dict[str, Any]:
    """A checkpoint written by :func:`save_checkpoint`, or a clear error for a missing or corrupt file."""
    if not path.is_file():
        raise PysmtError(f"{path}: no such checkpoint (train one with `pysmt rnn train`)")
    try:
        state = torch.load(path, map_location="cpu", weights_only=False)
    except (RuntimeError, EOFError, pickle.UnpicklingError, zipfile.BadZipFile, OSError) as err:
        raise PysmtError(f"{path}: not a readable pysmt-rnn checkpoint ({err})") from None
    if not isinstance(state, dict) or "hyperparameters" not in state or "model" not in state:
        raise PysmtError(f"{path}: not a pysmt-rnn checkpoint (no hyperparameters or weights)")
    return state


def build_model(state: dict[str, Any], path: Path) -> EncoderDecoder:
    """The model a checkpoint describes, with its weights."""
    hp = Hyperparameters.from_dict(state["hyperparameters"])
    model = EncoderDecoder(hp, state["source_size"], state["target_size"])
    try:
        model.load_state_dict(state["model"])
    except RuntimeError as err:
        raise PysmtError(f"{path}: weights do not fit preset {hp.preset!r} ({str(err).splitlines()[0]})") from None
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
