"""Minibatches that cover the training pairs: shuffled epochs without replacement, length-bucketed.

Each epoch is a seeded permutation of the training pairs, cut into pools of ``sort_batches``
minibatches; the pairs of each pool are sorted by target then source length and cut into
minibatches, and the minibatches of the epoch are shuffled (GroundHog's ``sort_k_batches``, the
paper's own code). Every pair is seen once per epoch, a minibatch's phrases have (nearly) one
length, so the padded steps the recurrences compute are the real ones, and the order still changes
from epoch to epoch.

The ``k``-th update's minibatch is a function of the seed and ``k`` alone: a resumed training
continues with exactly the minibatches an uninterrupted one would have drawn.
"""

from __future__ import annotations

import numpy as np


class EpochBatches:
    """The minibatches of every epoch over ``index`` (pair numbers), by update number."""

    def __init__(
        self,
        index: np.ndarray,
        source_lengths: np.ndarray,
        target_lengths: np.ndarray,
        batch_size: int,
        sort_batches: int,
        seed: int,
    ) -> None:
        if not len(index):
            raise ValueError("no pairs to make minibatches of")
        self.index = np.asarray(index, dtype=np.int64)
        self.source_lengths = source_lengths[self.index]
        self.target_lengths = target_lengths[self.index]
        self.batch_size, self.sort_batches, self.seed = batch_size, max(1, sort_batches), seed
        self.per_epoch = -(-len(self.index) // batch_size)
        self.epoch: int | None = None
        self.order = np.empty(0, dtype=np.int64)
        self.batch_order = np.empty(0, dtype=np.int64)

    def epochs(self, updates: int) -> float:
        """How many epochs ``updates`` minibatches make."""
        return updates / self.per_epoch

    def batch(self, update: int) -> np.ndarray:
        """The pair numbers of update ``update``'s minibatch (counting from 0)."""
        epoch, k = divmod(update, self.per_epoch)
        if epoch != self.epoch:
            self.shuffle(epoch)
        start = int(self.batch_order[k]) * self.batch_size
        return self.order[start : start + self.batch_size]

    def shuffle(self, epoch: int) -> None:
        """Make epoch ``epoch``'s order: permute, sort by length within pools, shuffle the minibatches."""
        rng = np.random.default_rng([self.seed, epoch])
        permutation = rng.permutation(len(self.index))
        pool = np.arange(len(self.index)) // (self.batch_size * self.sort_batches)
        # lexsort: the last key sorts first; stable, so equal lengths keep the permutation's order
        by_length = np.lexsort((self.source_lengths[permutation], self.target_lengths[permutation], pool))
        self.order = self.index[permutation[by_length]]
        self.batch_order = rng.permutation(self.per_epoch)
        self.epoch = epoch
