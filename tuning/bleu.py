"""BLEU sufficient statistics that sum to exactly sacrebleu's corpus BLEU.

Each hypothesis gets 9 numbers in Moses' order: matches and totals of 1- to 4-grams, then the
reference length (the closest one when there are several; sacrebleu's rule, shorter on ties).
They are computed as sacrebleu computes them: the hypothesis is right-stripped and tokenized
with the same tokenizer (13a by default), n-grams are clipped against the reference counts, and
:func:`bleu` applies sacrebleu's brevity penalty and ``exp`` smoothing to their corpus sum. The
optimizer needs BLEU for thousands of candidate statistics at once, so :func:`bleu` is numpy,
vectorized over leading axes, and reproduces ``sacrebleu.metrics.BLEU.compute_bleu`` operation by
operation (a test proves equality on real output and on random strings).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
from sacrebleu.metrics import BLEU
from sacrebleu.metrics.helpers import extract_all_word_ngrams

ORDER = 4
N_STATS = 2 * ORDER + 1
#: sacrebleu's log of a zero precision (``my_log``), which drives the score to exactly 0.
LOG_ZERO = -9999999999.0


class BleuStatistics:
    """Computes per-hypothesis statistics against the references of one dev set."""

    def __init__(self, references: Sequence[Sequence[str]], tokenize: str = "13a") -> None:
        """``references[i]`` holds the reference strings of sentence ``i`` (one or more)."""
        self.tokenize = BLEU(tokenize=tokenize).tokenizer  # the very tokenizer sacrebleu's BLEU uses
        self.refs: list[tuple[Counter, list[int]]] = []
        for refs in references:
            merged: Counter = Counter()
            lengths = []
            for ref in refs:
                ngrams, length = extract_all_word_ngrams(self.tokenize(ref.rstrip()), 1, ORDER)
                merged |= ngrams  # max count over references, as sacrebleu clips
                lengths.append(length)
            self.refs.append((merged, lengths))

    def __len__(self) -> int:
        return len(self.refs)

    def __call__(self, sentence: int, hypothesis: str) -> np.ndarray:
        """The 9 statistics of ``hypothesis`` as a translation of dev sentence ``sentence``."""
        ref_ngrams, ref_lengths = self.refs[sentence]
        ngrams, length = extract_all_word_ngrams(self.tokenize(hypothesis.rstrip()), 1, ORDER)
        stats = np.zeros(N_STATS)
        for ngram, count in ngrams.items():
            n = len(ngram) - 1
            stats[2 * n + 1] += count
            if ngram in ref_ngrams:
                stats[2 * n] += min(count, ref_ngrams[ngram])
        stats[-1] = min(ref_lengths, key=lambda r: (abs(length - r), r))
        return stats


def bleu(stats: np.ndarray) -> np.ndarray | float:
    """Corpus BLEU (0-100, sacrebleu's scale) of summed statistics; vectorized over leading axes."""
    stats = np.asarray(stats, dtype=np.float64)
    correct, total = stats[..., 0 : 2 * ORDER : 2], stats[..., 1 : 2 * ORDER : 2]
    sys_len, ref_len = total[..., 0], stats[..., -1]
    with np.errstate(divide="ignore", invalid="ignore"):
        bp = np.where(sys_len < ref_len, np.where(sys_len > 0, np.exp(1 - ref_len / sys_len), 0.0), 1.0)
        # exp smoothing: the k-th order without a match gets 100 / (2^k * total)
        smooth = np.cumprod(np.where(correct == 0, 2.0, 1.0), axis=-1)
        precision = np.where(correct == 0, 100.0 / (smooth * total), 100.0 * correct / total)
        # sacrebleu stops at the first order without n-grams, leaving the rest at 0 (log = LOG_ZERO)
        present = np.cumprod(total > 0, axis=-1).astype(bool)
        logs = np.where(present, np.log(np.where(present, precision, 1.0)), LOG_ZERO)
        mean = (((logs[..., 0] + logs[..., 1]) + logs[..., 2]) + logs[..., 3]) / ORDER
        score = np.where(correct.any(axis=-1), bp * np.exp(mean), 0.0)
    return float(score) if score.ndim == 0 else score
