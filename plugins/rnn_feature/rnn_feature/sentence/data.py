"""The bitext a sentence model trains on, as subword ids, and its held-out validation slice.

The text is a system's own prepared bitext (``pysmt train`` leaves it tokenized and truecased in
``SYSTEM/corpus/train.SRC`` and ``.TGT``): the hypotheses the model scores later are in that form.
Validation is a seeded slice of the training bitext (1%, at most 2,000 pairs), never a dev or test set.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pysmt.plugin import PysmtError
from pysmt.plugin.files import read_lines
from rnn_feature.data import EncodedPairs, Ragged
from rnn_feature.sentence.subwords import Subwords

ENCODED = "bitext.npz"
VALID_SHARE, VALID_MAX = 0.01, 2_000


def read_bitext(source: Path, target: Path) -> tuple[list[str], list[str]]:
    """The two sides, line for line; a side of another length is one line naming both files."""
    src = [line for _, line in read_lines(source)]
    tgt = [line for _, line in read_lines(target)]
    if len(src) != len(tgt):
        raise PysmtError(f"{source} has {len(src):,} lines but {target} has {len(tgt):,}: not a bitext")
    if not src:
        raise PysmtError(f"{source}: no sentence pairs to train on")
    return src, tgt


class EncodedBitext(EncodedPairs):
    """Source and target sentences as subword ids (target in the model's direction, without end-of-sentence);
    saved and loaded as the phrase model's pairs are."""

    @classmethod
    def encode(cls, subwords: Subwords, source: list[str], target: list[str], right_to_left: bool) -> EncodedBitext:
        encoded_target = subwords.encode(target)
        if right_to_left:
            encoded_target = [ids[::-1] for ids in encoded_target]
        return cls(Ragged.from_lists(subwords.encode(source)), Ragged.from_lists(encoded_target))


def split(bitext: EncodedBitext, max_length: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(training, validation) pair numbers: a seeded held-out slice, and the rest within ``max_length`` subwords
    (both sides non-empty) for training."""
    order = np.random.default_rng(seed).permutation(len(bitext))
    n_valid = min(VALID_MAX, max(1, int(len(bitext) * VALID_SHARE))) if len(bitext) > 1 else 0
    valid, train = np.sort(order[:n_valid]), np.sort(order[n_valid:])
    src, tgt = bitext.source.lengths()[train], bitext.target.lengths()[train]
    train = train[(src > 0) & (tgt > 0) & (src <= max_length) & (tgt <= max_length)]
    valid = valid[bitext.source.lengths()[valid] > 0]
    if not len(train):
        raise PysmtError(f"no training pair has both sides within {max_length} subwords")
    return train, valid
