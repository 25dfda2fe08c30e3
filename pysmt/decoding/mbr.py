"""Minimum Bayes risk and consensus decoding over an n-best list, as Moses' ``-mbr`` and ``-consensus-decoding``.

MBR (Kumar and Byrne 2004; Moses' ``mbr.cpp``): of the first ``size`` distinct translations of the n-best list,
the one of least expected loss ``1 - BLEU`` against the others, under the posterior
``p(e|f) ∝ exp(scale · model score)`` normalized over those translations:
``loss(i) = Σ_{j≠i} p_j (1 - BLEU(e_i, e_j))``. BLEU is Moses' sentence BLEU of ``mbr.cpp`` on the model's
tokens: 1- to 4-grams clipped against the other translation, the unigram precision unsmoothed (no unigram
match: BLEU 0), the higher orders' smoothed by adding 1 to matches and totals, and the brevity penalty
``exp(1 - r/c)`` when the translation is shorter than the other. Ties go to the better model score (the
earlier entry), as in Moses.

Consensus decoding (DeNero et al. 2009): the translation of highest BLEU against the *expected* n-gram
counts (``Σ_j p_j c_j(g)``, clipped as a reference's are; the reference length is the expected length),
scored as above. Moses computes the expectations over its pruned search lattice; here they are over the
same n-best list as MBR's.

Pure functions over (translations as token lists, model scores): the decoder's runner calls :func:`choose`
for each line; the pairwise n-gram matches are counted with matrix products (numpy), so a 200-entry list
costs milliseconds, not seconds, and a block of rows at a time over sparse n-gram counts, so that no size of list
(``--mbr-size 100000``) needs more memory than a few blocks of :data:`BLOCK_ENTRIES` numbers.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pysmt.errors import PysmtError

#: Moses' ``BLEU_ORDER`` and ``SMOOTH`` (``mbr.cpp``).
ORDER = 4
SMOOTH = 1.0


@dataclass(frozen=True)
class MbrSettings:
    """``--mbr``, ``--mbr-size``, ``--mbr-scale``, ``--consensus-decoding`` (Moses' defaults: 200 and 1)."""

    size: int = 200
    scale: float = 1.0
    consensus: bool = False

    def __post_init__(self) -> None:
        if self.size < 1:
            raise PysmtError(f"--mbr-size must be positive, not {self.size}")
        if not (math.isfinite(self.scale) and self.scale >= 0):
            raise PysmtError(f"--mbr-scale must be a finite number, 0 or more, not {self.scale}")


def posteriors(scores: Sequence[float] | np.ndarray, scale: float) -> np.ndarray:
    """``exp(scale · score)`` normalized to sum to 1 (the best score's term is 1 before normalizing)."""
    totals = np.asarray(scores, dtype=np.float64)
    with np.errstate(over="ignore"):  # scale · (a gap) below float range: that entry's weight is 0
        weights = np.exp(scale * (totals - totals.max()))
    return weights / weights.sum()


#: The most numbers one of MBR's working matrices holds (2^22 float64s, 32 MiB): the pairwise matches are
#: computed a block of rows at a time, so memory grows linearly with ``--mbr-size`` (time, as in Moses, with
#: its square).
BLOCK_ENTRIES = 1 << 22


@dataclass(frozen=True)
class NgramCounts:
    """One order's n-gram counts, sparse: ``count[k]`` of n-gram ``column[k]`` in translation ``owner[k]``,
    sorted by translation (a dense translations × n-grams matrix would not fit for long lists)."""

    owner: np.ndarray
    column: np.ndarray
    count: np.ndarray
    columns: int

    def dense(self, rows: int, columns: np.ndarray) -> np.ndarray:
        """The counts of the n-grams ``columns`` (sorted) in every translation, as a ``rows`` × len(columns) matrix."""
        place = np.full(self.columns, -1, dtype=np.int64)
        place[columns] = np.arange(len(columns))
        local = place[self.column]
        kept = local >= 0
        matrix = np.zeros((rows, len(columns)))
        matrix[self.owner[kept], local[kept]] = self.count[kept]
        return matrix


def ngram_counts(hypotheses: Sequence[Sequence[str]]) -> tuple[list[NgramCounts], np.ndarray]:
    """Each order's n-gram counts in each translation, and the translations' lengths."""
    vocabulary: dict[str, int] = {}
    flat = np.fromiter(
        (vocabulary.setdefault(word, len(vocabulary)) for words in hypotheses for word in words), dtype=np.int64
    )
    lengths = np.fromiter((len(words) for words in hypotheses), dtype=np.int64, count=len(hypotheses))
    owner = np.repeat(np.arange(len(hypotheses)), lengths)  # the translation each token is in
    end = np.repeat(np.cumsum(lengths), lengths)  # where that translation's tokens end in ``flat``
    orders = []
    for n in range(ORDER):
        starts = np.flatnonzero(np.arange(len(flat)) + n < end)  # the n-grams of order n + 1 inside one translation
        if len(vocabulary) ** (n + 1) < 2**62:  # each n-gram as one number: a flat unique, several times faster
            keys = np.zeros(len(starts), dtype=np.int64)
            for k in range(n + 1):
                keys = keys * len(vocabulary) + flat[starts + k]
            _, column = np.unique(keys, return_inverse=True)
        else:
            windows = np.stack([flat[starts + k] for k in range(n + 1)], axis=1)
            _, column = np.unique(windows, axis=0, return_inverse=True)
        columns = int(column.max(initial=-1)) + 1
        pairs, count = np.unique(owner[starts] * columns + column.reshape(-1), return_counts=True)
        orders.append(NgramCounts(pairs // max(columns, 1), pairs % max(columns, 1), count.astype(np.float64), columns))
    return orders, lengths.astype(np.float64)


def bleu_from_matches(matches: np.ndarray, hyp_length: np.ndarray, ref_length: np.ndarray) -> np.ndarray:
    """Moses' MBR sentence BLEU from clipped matches (``matches[..., n]``: of the (n+1)-grams) and the lengths,
    broadcast together."""
    log_bleu = np.zeros(np.broadcast_shapes(matches.shape[:-1], hyp_length.shape, ref_length.shape))
    with np.errstate(divide="ignore", invalid="ignore"):
        for n in range(ORDER):
            totals = np.maximum(hyp_length - n, 0)
            if n == 0:
                log_bleu = log_bleu + np.log(matches[..., 0]) - np.log(totals)
            else:
                log_bleu = log_bleu + np.log(matches[..., n] + SMOOTH) - np.log(totals + SMOOTH)
        log_bleu = log_bleu / ORDER
        brevity = 1.0 - ref_length / hyp_length
        log_bleu = log_bleu + np.minimum(brevity, 0.0)
        return np.where(matches[..., 0] > 0, np.exp(log_bleu), 0.0)


def row_blocks(lengths: np.ndarray) -> list[slice]:
    """Consecutive rows whose matches with every translation stay within :data:`BLOCK_ENTRIES` numbers (at least
    one row a block): a block's matrices are its n-grams, at most its words, against every translation."""
    total = len(lengths)
    blocks, first, words = [], 0, 0.0
    for i, length in enumerate(lengths):
        if i > first and total * max(words + length, (i + 1 - first) * ORDER) > BLOCK_ENTRIES:
            blocks.append(slice(first, i))
            first, words = i, 0.0
        words += length
    blocks.append(slice(first, total))
    return blocks


def block_bleu(orders: list[NgramCounts], lengths: np.ndarray, rows: slice) -> np.ndarray:
    """``B[i, j]`` for the translations ``i`` in ``rows``: Moses' sentence BLEU against each translation ``j``."""
    total = len(lengths)
    matches = np.zeros((rows.stop - rows.start, total, ORDER))
    for n, counts in enumerate(orders):
        mine = slice(*np.searchsorted(counts.owner, [rows.start, rows.stop]))
        everyone = counts.dense(total, np.unique(counts.column[mine]))  # only the n-grams the block has can match
        block = everyone[rows]
        # Σ_g min(c_i(g), c_j(g)) = Σ_k Σ_g [c_i(g) ≥ k][c_j(g) ≥ k]: one matrix product per count level
        for k in range(1, int(block.max(initial=0)) + 1):
            matches[:, :, n] += (block >= k).astype(np.float64) @ (everyone >= k).astype(np.float64).T
    return bleu_from_matches(matches, lengths[rows, None], lengths[None, :])


def pairwise_bleu(hypotheses: Sequence[Sequence[str]]) -> np.ndarray:
    """``B[i, j]``: Moses' sentence BLEU of translation ``i`` against translation ``j`` as its reference."""
    orders, lengths = ngram_counts(hypotheses)
    return np.concatenate([block_bleu(orders, lengths, rows) for rows in row_blocks(lengths)])


def expected_losses(hypotheses: Sequence[Sequence[str]], scores: Sequence[float], scale: float = 1.0) -> np.ndarray:
    """Each translation's Bayes risk ``Σ_{j≠i} p_j (1 - BLEU(e_i, e_j))`` over the given (distinct) list, a block of
    rows at a time (:func:`row_blocks`)."""
    p = posteriors(scores, scale)
    orders, lengths = ngram_counts(hypotheses)
    risks = []
    for rows in row_blocks(lengths):
        loss = (1.0 - block_bleu(orders, lengths, rows)) * p[None, :]
        loss[np.arange(rows.stop - rows.start), np.arange(rows.start, rows.stop)] = 0.0
        risks.append(loss.sum(axis=1))
    return np.concatenate(risks) if risks else np.zeros(0)


def consensus_scores(hypotheses: Sequence[Sequence[str]], scores: Sequence[float], scale: float = 1.0) -> np.ndarray:
    """Each translation's BLEU against the list's expected n-gram counts and expected length."""
    p = posteriors(scores, scale)
    orders, lengths = ngram_counts(hypotheses)
    matches = np.zeros((len(hypotheses), ORDER))
    for n, counts in enumerate(orders):
        expected = np.bincount(counts.column, weights=p[counts.owner] * counts.count, minlength=counts.columns)
        clipped = np.minimum(counts.count, expected[counts.column])
        matches[:, n] = np.bincount(counts.owner, weights=clipped, minlength=len(hypotheses))
    return bleu_from_matches(matches, lengths, np.asarray(p @ lengths))


def choose(hypotheses: Sequence[Sequence[str]], scores: Sequence[float], settings: MbrSettings) -> int:
    """The index in ``hypotheses`` (an n-best list, best model score first) of the MBR (or consensus) translation
    among its first ``settings.size`` distinct ones; 0 for an empty list."""
    kept: list[int] = []
    seen: set[tuple[str, ...]] = set()
    for i, words in enumerate(hypotheses):
        if len(kept) == settings.size:
            break
        if (key := tuple(words)) not in seen:
            seen.add(key)
            kept.append(i)
    if len(kept) <= 1:
        return 0
    candidates = [hypotheses[i] for i in kept]
    totals = [scores[i] for i in kept]
    if settings.consensus:
        best = int(np.argmax(consensus_scores(candidates, totals, settings.scale)))  # the first of equals, as Moses
    else:
        best = int(np.argmin(expected_losses(candidates, totals, settings.scale)))
    return kept[best]


def sentence_bleu(hypothesis: Sequence[str], reference: Sequence[str]) -> float:
    """Moses' MBR sentence BLEU of one translation against another (what :func:`pairwise_bleu` computes for all
    pairs at once)."""
    # sacrebleu takes 0.25 s to import: here, not at every decode's start
    from sacrebleu.metrics.helpers import extract_all_word_ngrams

    hyp, hyp_length = extract_all_word_ngrams(" ".join(hypothesis), 1, ORDER)
    ref, ref_length = extract_all_word_ngrams(" ".join(reference), 1, ORDER)
    matches = np.zeros(ORDER)
    for ngram, count in hyp.items():
        matches[len(ngram) - 1] += min(count, ref[ngram])
    return float(bleu_from_matches(matches, np.asarray(float(hyp_length)), np.asarray(float(ref_length))))
