"""A model directory: checkpoints (with their hyperparameters) and shortlists; devices.

Layout of ``DIR``: ``model.pt`` (the best weights by validation perplexity: what scoring uses),
``last.pt`` (everything needed to resume training), ``source.vocab`` and ``target.vocab`` (the
shortlists), ``pairs.npz`` (the encoded training pairs), ``log.tsv`` (validation history).
Checkpoints are written to a temporary file and renamed, so an interruption never leaves half
of one.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import torch

from pysmt.plugin import PysmtError, neural
from pysmt.plugin.neural import LAST, MODEL, first_line, resolve_device  # noqa: F401 - the folder's layout and helpers
from rnn_feature.hyperparameters import Hyperparameters
from rnn_feature.model import EncoderDecoder
from rnn_feature.vocabulary import Shortlist

SOURCE_VOCAB, TARGET_VOCAB = "source.vocab", "target.vocab"
MODEL_TYPE = "pysmt-rnn"


def save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    neural.save_checkpoint(path, state, MODEL_TYPE)


def load_checkpoint(path: Path, mapped: bool = False) -> dict[str, Any]:
    """A checkpoint written by :func:`save_checkpoint` (or before checkpoints were marked), or one clear line."""
    return neural.load_checkpoint(path, MODEL_TYPE, "pysmt rnn train", unmarked_ok=True, mapped=mapped)


def check_model(directory: Path) -> None:
    """Refuse, in milliseconds, a folder that holds no RNN Encoder-Decoder (a CSLM's, or none): before tables load."""
    load_checkpoint(Path(directory) / MODEL, mapped=True)


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


def load_model(directory: Path, device: str | torch.device = "cpu") -> tuple[EncoderDecoder, Shortlist, Shortlist]:
    """The best model of a directory, on ``device``, in evaluation mode, with its shortlists."""
    directory = Path(directory)
    path = directory / MODEL
    model = build_model(load_checkpoint(path), path)
    model.to(resolve_device(device) if isinstance(device, str) else device).eval()
    source, target = Shortlist.load(directory / SOURCE_VOCAB), Shortlist.load(directory / TARGET_VOCAB)
    if (len(source), len(target)) != (model.source_embedding.num_embeddings, model.target_embedding.num_embeddings):
        raise PysmtError(f"{directory}: the shortlists ({len(source)}, {len(target)} words) do not match the model")
    return model, source, target


def stored_by(directory: Path) -> dict[str, str]:
    """What scores stored with a phrase table (``pysmt rnn score``) record as having made them: the feature
    and the SHA-256 of the model's weights (``model.pt``), so that a decoder uses only its own model's."""
    digest = hashlib.sha256()
    with open(Path(directory) / MODEL, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return {"feature": "rnn", "model": digest.hexdigest()}
