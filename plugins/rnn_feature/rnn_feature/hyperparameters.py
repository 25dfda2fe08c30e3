"""The model's and the training's hyperparameters: one typed object, saved inside every checkpoint.

``paper`` is Cho et al. (2014), appendix A: 1000 hidden units, rank-100 embeddings, 500 maxout
units, a rank-100 factorized softmax and 15,000-word shortlists. ``default`` keeps the shape at a
size that trains usefully within an hour on 2 CPU cores and scores thousands of pairs a second.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from pysmt.plugin import neural


@dataclass(frozen=True)
class Hyperparameters(neural.Hyperparameters):
    """Sizes of the encoder-decoder and the settings of its training."""

    preset: str
    hidden: int  # GRU units of encoder and decoder (the paper's 1000)
    embedding: int  # rank of the input embeddings (100)
    maxout: int  # units after maxout pooling of pairs (500)
    output_rank: int  # rank of the factorized softmax G = G_l G_r (100)
    source_shortlist: int  # most frequent source words kept; the rest are [UNK] (15,000)
    target_shortlist: int
    batch_size: int = 64  # phrase pairs per update; every pair once per epoch
    sort_batches: int = 20  # minibatches whose pairs are sorted by length together (GroundHog's sort_k_batches)
    sampled_words: int = 0  # words the training softmax is normalized over besides the minibatch's (0: all)
    clip_norm: float = 1.0  # the gradient's norm is clipped to this (GroundHog's cutoff)
    rho: float = 0.95  # Adadelta
    epsilon: float = 1e-6
    init_std: float = 0.01  # N(0, std^2) for non-recurrent weights; recurrent ones orthogonal
    seed: int = 1234


PRESETS = {
    "paper": Hyperparameters(
        "paper",
        hidden=1000,
        embedding=100,
        maxout=500,
        output_rank=100,
        source_shortlist=15000,
        target_shortlist=15000,
        sampled_words=2000,
    ),
    "default": Hyperparameters(
        "default",
        hidden=256,
        embedding=100,
        maxout=128,
        output_rank=100,
        source_shortlist=10000,
        target_shortlist=10000,
        sampled_words=1000,
    ),
}


def preset(name: str, **overrides: Any) -> Hyperparameters:
    """A named preset, optionally with some fields changed (tests use tiny sizes)."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; presets: {', '.join(sorted(PRESETS))}")
    return replace(PRESETS[name], **overrides)
