"""The model's and the training's hyperparameters: one typed object, saved inside every checkpoint.

``paper`` is the CSLM of Cho et al. (2014), section 4.1.2 (after Schwenk 2007): a 7-gram model,
six context words embedded in 512 dimensions each and concatenated (3072), two ReLU layers of
1536 and 1024 units, a softmax over a 15,000-word target shortlist. ``default`` keeps the shape at
a size that trains usefully within an hour and scores a decoder's requests quickly on 2 CPU cores
(see the README for the figures).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from pysmt.plugin import neural


@dataclass(frozen=True)
class Hyperparameters(neural.Hyperparameters):
    """Sizes of the feed-forward network and the settings of its training."""

    preset: str
    embedding: int  # dimensions per context word (the paper's 512)
    hidden1: int  # first ReLU layer (1536)
    hidden2: int  # second ReLU layer (1024)
    shortlist: int  # softmax size: </s> ([EOS]), [UNK] and the shortlist-2 most frequent words (15,000)
    order: int = 7  # n-gram order: order-1 context words
    batch_size: int = 128  # n-grams per update, drawn uniformly from the training text's n-grams
    learning_rate: float = 1e-3  # Adam
    self_normalization: float = 0.1  # alpha of the alpha * (log Z)^2 term of the loss (Devlin et al. 2014)
    init_range: float = 0.01  # weights and embeddings uniform in [-init_range, init_range]; biases 0
    seed: int = 1234

    @property
    def context(self) -> int:
        """Context words per n-gram (6)."""
        return self.order - 1


PRESETS = {
    "paper": Hyperparameters("paper", embedding=512, hidden1=1536, hidden2=1024, shortlist=15000),
    "default": Hyperparameters("default", embedding=128, hidden1=256, hidden2=256, shortlist=10000),
}


def preset(name: str, **overrides: Any) -> Hyperparameters:
    """A named preset, optionally with some fields changed (tests use tiny sizes)."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; presets: {', '.join(sorted(PRESETS))}")
    hp = replace(PRESETS[name], **overrides)
    if hp.order < 2:
        raise ValueError(f"order must be at least 2, not {hp.order}")
    return hp
