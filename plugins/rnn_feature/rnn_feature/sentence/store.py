"""A sentence model's folder: ``model.pt`` (the best weights by validation perplexity), ``last.pt``
(everything needed to resume), ``subwords.model`` (its subword units), ``bitext.npz`` (the encoded
training bitext), ``log.tsv`` (validation history), ``job.json``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from pysmt.plugin import PysmtError, neural
from pysmt.plugin.neural import LAST, MODEL, first_line, resolve_device
from rnn_feature.sentence.hyperparameters import SentenceHyperparameters
from rnn_feature.sentence.model import AttentionEncoderDecoder
from rnn_feature.sentence.subwords import SUBWORDS, Subwords

__all__ = ["LAST", "MODEL", "build_model", "load_checkpoint", "load_model", "save_checkpoint"]
MODEL_TYPE = "pysmt-sentence"
TRAIN_COMMAND = "pysmt sentence train"


def save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    neural.save_checkpoint(path, state, MODEL_TYPE)


def load_checkpoint(path: Path, mapped: bool = False) -> dict[str, Any]:
    """A sentence model's checkpoint, or one clear line (a phrase RNN's or a CSLM's folder is refused)."""
    return neural.load_checkpoint(path, MODEL_TYPE, TRAIN_COMMAND, mapped=mapped)


def build_model(state: dict[str, Any], path: Path) -> AttentionEncoderDecoder:
    """The model a checkpoint describes, with its weights."""
    try:
        hp = SentenceHyperparameters.from_dict(state["hyperparameters"])
        model = AttentionEncoderDecoder(hp, int(state["vocabulary"]))
        model.load_state_dict(state["model"])
    except (KeyError, TypeError, ValueError, RuntimeError) as err:
        raise PysmtError(f"{path}: not a usable sentence model ({type(err).__name__}: {first_line(err)})") from None
    return model


def load_model(directory: Path, device: str | torch.device = "cpu") -> tuple[AttentionEncoderDecoder, Subwords]:
    """The best model of a folder, on ``device``, in evaluation mode, with its subword units."""
    directory = Path(directory)
    model = build_model(load_checkpoint(directory / MODEL), directory / MODEL)
    model.to(resolve_device(device) if isinstance(device, str) else device).eval()
    subwords = Subwords(directory / SUBWORDS)
    if len(subwords) != model.output.out_features:
        raise PysmtError(f"{directory}: its subword model ({len(subwords):,} units) does not match the model")
    return model, subwords
