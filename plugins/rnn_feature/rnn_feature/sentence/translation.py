"""The sentence model as a translator on its own: greedy search, in batches of sentences of similar length."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from pysmt.plugin.neural import resolve_device
from rnn_feature.data import Ragged
from rnn_feature.sentence.store import load_model

#: Sentences translated together.
BATCH = 64


def greedy_translations(
    model_dir: Path, lines: Sequence[str], config_path: str | None, device: str, max_length: int
) -> list[str]:
    """Each line's greedy translation, in input order (an empty line's: an empty line); with ``config_path`` the
    line is prepared as that system prepares its input, and the translation restored as it restores its output.

    A list, not a stream: the lines are translated in batches of similar length, out of input order."""
    from pysmt.plugin.systems import load_config, text_processors

    model, subwords = load_model(model_dir, resolve_device(device))
    source_text, target_text = text_processors(load_config(config_path).processing if config_path else None)
    prepared = [source_text.prepare(line) if source_text else line for line in lines]
    ragged = Ragged.from_lists(subwords.encode(prepared))
    subword_counts = ragged.lengths()
    # an empty line's translation is an empty line, as decode writes it (the model would translate nothing)
    nonempty = np.flatnonzero(subword_counts > 0)
    order = nonempty[np.argsort(subword_counts[nonempty], kind="stable")]
    results: list[str] = [""] * len(lines)
    device_of = next(model.parameters()).device
    with torch.no_grad():
        for begin in range(0, len(order), BATCH):
            batch = order[begin : begin + BATCH]
            src, lengths = ragged.padded(batch)
            for k, ids in zip(batch, model.greedy(src.to(device_of), lengths.to(device_of), max_length)):
                words = subwords.decode(ids[::-1] if model.hp.right_to_left else ids)
                results[k] = target_text.restore(words) if target_text else words
    return results
