"""The sentence model's and its training's hyperparameters: one typed object, saved inside every checkpoint.

``cpu`` trains usefully in under two hours on two CPU cores (one torch thread): an 8,000-unit joint
subword vocabulary, 128-wide embeddings, 256 GRU units each way in the encoder and in the decoder.
``gpu`` is Bahdanau et al.'s shape at a subword vocabulary (620-wide embeddings, 1,000 units, maxout
500) with 16,000 units, for the minutes a GPU is lent.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from pysmt.plugin import neural


@dataclass(frozen=True)
class SentenceHyperparameters(neural.Hyperparameters):
    """Sizes of the attention encoder-decoder, its subword vocabulary and the settings of its training."""

    preset: str
    subwords: int  # units of the joint sentencepiece model (source and target sides together)
    embedding: int  # width of the subword embeddings (Bahdanau et al.: 620)
    hidden: int  # GRU units of the decoder and of each direction of the encoder (1000)
    attention: int  # width of the alignment model's hidden layer (1000)
    maxout: int  # units after maxout pooling of pairs in the deep output (500)
    right_to_left: bool = False  # the target side reversed (Sennrich et al. 2016's second model)
    batch_size: int = 64  # sentence pairs per update
    sort_batches: int = 20  # minibatches whose pairs are sorted by length together
    max_length: int = 80  # longest side of a training pair, in subwords (longer pairs are left out)
    learning_rate: float = 1e-3  # Adam
    clip_norm: float = 1.0  # the gradient's norm is clipped to this
    dropout: float = 0.1  # on the deep output, in training only
    seed: int = 1234


PRESETS = {
    "cpu": SentenceHyperparameters("cpu", subwords=8000, embedding=128, hidden=256, attention=256, maxout=256),
    "gpu": SentenceHyperparameters(
        "gpu", subwords=16000, embedding=620, hidden=1000, attention=1000, maxout=500, batch_size=80
    ),
}


def preset(name: str, **overrides: Any) -> SentenceHyperparameters:
    """A named preset, optionally with some fields changed (tests use tiny sizes; ``right_to_left``)."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; presets: {', '.join(sorted(PRESETS))}")
    return replace(PRESETS[name], **overrides)
