"""Scoring complete translations: log p(e | f) of every hypothesis of a sentence, and its subword count.

The source is encoded once per sentence and its annotations shared by all its hypotheses; the
hypotheses (each distinct one once) are scored in batches sorted by length, so a batch's padded steps
are nearly all real ones. A right-to-left model scores each hypothesis's subwords reversed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from rnn_feature.data import Ragged
from rnn_feature.sentence.store import load_model
from rnn_feature.sentence.subwords import EOS_ID


class SentenceScorer:
    """A sentence model loaded once, scoring hypotheses ``batch_size`` at a time."""

    def __init__(self, directory: Path, device: str | torch.device = "cpu", batch_size: int = 256) -> None:
        self.model, self.subwords = load_model(directory, device)
        self.device = next(self.model.parameters()).device
        self.batch_size = batch_size
        self.right_to_left = self.model.hp.right_to_left

    @torch.no_grad()
    def score(self, source: Sequence[str], hypotheses: Sequence[Sequence[str]]) -> np.ndarray:
        """``(len(hypotheses), 2)``: each hypothesis's log p(e | f) (natural log, end-of-sentence included)
        and its number of subwords; ``source`` and the hypotheses are words, as the decoder has them."""
        distinct = list(dict.fromkeys(" ".join(h) for h in hypotheses))
        at = {text: k for k, text in enumerate(distinct)}
        targets = self.subwords.encode(distinct)
        if self.right_to_left:
            targets = [ids[::-1] for ids in targets]
        source_ids = self.subwords.encode([" ".join(source)])[0] or [EOS_ID]
        src = torch.tensor([source_ids], dtype=torch.int64, device=self.device)
        encoded = self.model.encode(src, torch.tensor([len(source_ids)], device=self.device))
        ragged = Ragged.from_lists(targets)
        lengths = ragged.lengths()
        scores = np.empty(len(distinct))
        order = np.argsort(lengths, kind="stable")
        for begin in range(0, len(order), self.batch_size):
            batch = order[begin : begin + self.batch_size]
            tgt, tgt_len = ragged.padded(batch)
            rows = torch.zeros(len(batch), dtype=torch.int64, device=self.device)
            log_p = self.model.target_log_probs(encoded.select(rows), tgt.to(self.device), tgt_len.to(self.device))
            scores[batch] = log_p.double().cpu().numpy()
        rows_of = [at[" ".join(h)] for h in hypotheses]
        return np.stack([scores[rows_of], lengths[rows_of].astype(np.float64)], axis=1)
