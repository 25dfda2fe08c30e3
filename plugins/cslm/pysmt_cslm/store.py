"""A model directory: checkpoints (with their hyperparameters), the shortlist and the word counts; devices.

Layout of ``DIR``: ``model.pt`` (the best weights by validation perplexity: what scoring uses),
``last.pt`` (everything needed to resume training), ``target.vocab`` (the shortlist),
``counts.tsv`` (the training text's word counts: the back-off distribution of the words outside
the shortlist), ``train.npz`` and ``valid.npz`` (the encoded texts), ``log.tsv`` (validation
history), ``job.json`` (the job record). Checkpoints are written to a temporary file and renamed,
so an interruption never leaves half of one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from pysmt.plugin import PysmtError, neural
from pysmt.plugin.neural import LAST, MODEL, first_line, resolve_device  # noqa: F401 - the folder's layout and helpers
from pysmt_cslm.hyperparameters import Hyperparameters
from pysmt_cslm.model import Cslm
from pysmt_cslm.vocabulary import Backoff, Shortlist, load_counts

VOCAB, COUNTS = "target.vocab", "counts.tsv"
#: Marks a checkpoint as this plugin's (an RNN model.pt also holds hyperparameters and weights).
MODEL_TYPE = "pysmt-cslm"


def save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    neural.save_checkpoint(path, state, MODEL_TYPE)


def load_checkpoint(path: Path, mapped: bool = False) -> dict[str, Any]:
    """A checkpoint written by :func:`save_checkpoint`, or one clear line for a missing, corrupt or foreign file."""
    return neural.load_checkpoint(path, MODEL_TYPE, "pysmt cslm train", mapped=mapped)


def check_model(directory: Path) -> None:
    """Refuse, in milliseconds, a folder that holds no CSLM (another model's, or none): before tables load."""
    model_folder(directory)
    load_checkpoint(directory / MODEL, mapped=True)


def model_folder(directory: Path) -> Path:
    directory = Path(directory)
    if not directory.is_dir():
        raise PysmtError(f"{directory}: no such model folder (train one with `pysmt cslm train --out {directory}`)")
    return directory


def build_model(state: dict[str, Any], path: Path) -> Cslm:
    """The model a checkpoint describes, with its weights."""
    try:
        hp = Hyperparameters.from_dict(state["hyperparameters"])
        model = Cslm(hp, int(state["vocab_size"]))
    except (KeyError, TypeError, ValueError, AttributeError, RuntimeError) as err:
        raise PysmtError(f"{path}: not a pysmt-cslm checkpoint ({type(err).__name__}: {first_line(err)})") from None
    try:
        model.load_state_dict(state["model"])
    except (RuntimeError, TypeError, AttributeError) as err:
        raise PysmtError(f"{path}: weights do not fit preset {hp.preset!r} ({first_line(err)})") from None
    return model


@dataclass
class LoadedModel:
    model: Cslm
    shortlist: Shortlist
    backoff: Backoff
    valid_perplexity: float | None = None


def load_model(directory: Path, device: str | torch.device = "cpu") -> LoadedModel:
    """The best model of a directory, on ``device``, in evaluation mode, with its shortlist and back-off."""
    directory = model_folder(directory)
    path = directory / MODEL
    state = load_checkpoint(path)
    model = build_model(state, path)
    model.to(resolve_device(device) if isinstance(device, str) else device).eval()
    shortlist = Shortlist.load(directory / VOCAB)
    if len(shortlist) != model.vocab_size:
        raise PysmtError(
            f"{directory}: the shortlist ({len(shortlist)} words) does not match the model ({model.vocab_size})"
        )
    counts, sentences = load_counts(directory / COUNTS)
    return LoadedModel(model, shortlist, Backoff(shortlist, counts, sentences), state.get("valid_perplexity"))
