"""The decoder feature ``cslm``: the CSLM's log-probability of the target words, one score.

A :class:`~pysmt.features.base.BatchedStatefulFeature`. Its state is the last six target words'
input ids (``<s>`` before the sentence start, ``[UNK]`` for words outside the shortlist), which is
all the network sees of the past, so hypotheses recombine exactly when their futures score alike.
State ids are numbered per sentence (:meth:`CslmFeature.start` resets them; id 0 is six ``<s>``).

:meth:`CslmFeature.score_batch` turns a batch of requests (parent state, option, sentence end) into
the n-grams they need with numpy (the option's words, each with its six predecessors, and ``</s>``
when the sentence ends there), finds each n-gram's context in a :class:`ContextCache` shared across
sentences (the hidden layer of every context seen, computed once, in one pass over the batch's
new unique contexts by :class:`~pysmt_cslm.scoring.Scorer`), takes the logits of the requested
words, and adds them up per request in a fixed order: the scores do not depend on the buffer size
or on what else is in a batch.

Words outside the shortlist add ``log p(w | outside)`` (the back-off unigram) to ``log P([UNK] |
context)``. Context-free estimates for the future cost and the table limit: the training text's
unigram log-probabilities of the phrase's words (the first word of a KenLM estimate is the same kind
of number; the CSLM has no shorter-context model for the others).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from pysmt.config import SystemConfig
from pysmt.errors import PysmtError
from pysmt.features.base import BatchedStatefulFeature
from pysmt.search.options import PhrasePair, Sentence, TranslationOption
from pysmt_cslm.scoring import NORMALIZATIONS, Normalization, Scorer
from pysmt_cslm.store import resolve_device
from pysmt_cslm.vocabulary import BOS_ID, EOS_ID

if TYPE_CHECKING:
    import torch

#: Contexts whose hidden layer is kept across sentences before the cache is emptied
#: (4 x hidden2 bytes each: 100 MB for the default preset, 400 MB for the paper's).
CACHE_SIZE = 100_000
#: Target phrases whose ids and context-free terms are kept (emptied when full).
PHRASE_CACHE_SIZE = 200_000
#: Below this share of the first sentence's option words in the shortlist, a warning says so.
LOW_COVERAGE = 0.5


def model_directory(name: str, params: dict[str, Any], system: SystemConfig) -> Path:
    """The ``model`` parameter (made absolute, and filled with ``cslm/`` beside the config when that exists)."""
    if "model" not in params:
        raise PysmtError(f"feature {name}: no CSLM model: {system.directory / 'cslm'} does not exist; train one "
                         f"there with `pysmt cslm train --text TARGET_TEXT --out {system.directory / 'cslm'}`, or "
                         f"name its folder with model = \"DIR\" in the feature's [[feature]] section or "
                         f"--param {name}.model=DIR")
    return Path(params["model"])


def numbered(table: dict[bytes, int], rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ids of ``rows`` (of word ids) in ``table``, numbering new rows in order of arrival; and the
    positions of the new rows' first occurrences (in the order of their ids).

    One dict lookup per row through the rows' bytes: a decoder's call is small (a few dozen rows),
    where numpy's sorting (``np.unique(axis=0)``) costs more than it saves.
    """
    rows = np.ascontiguousarray(rows, dtype=np.int32)
    keys = rows.view(np.dtype((np.void, 4 * rows.shape[1]))).reshape(-1).tolist()
    get = table.get
    ids = [get(key) for key in keys]
    new: list[int] = []
    if None in ids:
        for position, key in enumerate(keys):
            if ids[position] is None:
                size = len(table)
                ids[position] = table.setdefault(key, size)
                if ids[position] == size:
                    new.append(position)
    return np.array(ids, dtype=np.int64), np.array(new, dtype=np.int64)


class ContextCache:
    """The hidden layer (and, once asked, log Z) of every context seen, across sentences.

    Rows are numbered in order of arrival; when a call would take the cache past ``size`` rows,
    it is emptied first (a call's own contexts always fit: the storage grows to hold them).
    """

    def __init__(self, scorer: Scorer, size: int) -> None:
        self.scorer, self.size = scorer, size
        self.rows: dict[bytes, int] = {}  # context (six input ids' bytes) -> row
        self.hidden = np.empty((0, scorer.w2t.shape[1]), dtype=np.float32)
        self.log_z = np.empty(0)  # NaN until computed
        self.computed = self.normalized = 0  # statistics, for benchmarks

    def clear(self) -> None:
        self.rows.clear()

    def lookup(self, contexts: np.ndarray) -> np.ndarray:
        """The rows of contexts (n x 6 ids), computing the hidden layer of those not seen yet."""
        if len(self.rows) + len(contexts) > self.size:
            self.rows.clear()
        start = len(self.rows)
        rows, new = numbered(self.rows, contexts)
        if len(new):
            self.grow(len(self.rows))
            self.hidden[start:len(self.rows)] = self.scorer.hidden(contexts[new])
            self.log_z[start:len(self.rows)] = np.nan
            self.computed += len(new)
        return rows

    def grow(self, needed: int) -> None:
        if needed > len(self.hidden):
            capacity = max(needed, min(2 * len(self.hidden), max(self.size, needed)), 1024)
            hidden = np.empty((capacity, self.hidden.shape[1]), dtype=np.float32)
            hidden[:len(self.hidden)] = self.hidden
            log_z = np.empty(capacity)
            log_z[:len(self.log_z)] = self.log_z
            self.hidden, self.log_z = hidden, log_z

    def normalizers(self, rows: np.ndarray) -> np.ndarray:
        """log Z of rows (computing those not known yet, each distinct row once)."""
        missing = np.unique(rows[np.isnan(self.log_z[rows])])
        if len(missing):
            self.log_z[missing] = self.scorer.log_partition_of(self.hidden[missing])
            self.normalized += len(missing)
        return self.log_z[rows]


class CslmFeature(BatchedStatefulFeature):
    """``log p(target words | six previous words)`` by the continuous-space LM: one score."""

    default_label: ClassVar[str] = "CSLM"
    parameters: ClassVar[dict[str, type]] = {"model": Path, "buffer-size": int, "device": str,
                                             "normalization": str, "cache-size": int, "future-cost": bool}
    default_paths: ClassVar[dict[str, str]] = {"model": "cslm"}

    def __init__(self, name: str, directory: Path, device: str | torch.device = "cpu", buffer_size: int = 10_000,
                 normalization: Normalization = "self", cache_size: int = CACHE_SIZE, future_cost: bool = True) -> None:
        super().__init__(name, 1)
        from pysmt_cslm.store import load_model

        loaded = load_model(directory, device)
        self.directory = directory
        self.shortlist, self.backoff = loaded.shortlist, loaded.backoff
        self.context = loaded.model.hp.context
        self.scorer = Scorer(loaded.model)
        del loaded
        self.buffer_size = buffer_size
        self.normalization = normalization
        self.cache = ContextCache(self.scorer, cache_size)
        self.phrases: dict[tuple[str, ...], tuple[list[int], float, float]] = {}
        self.future_cost = future_cost
        self.warned = False
        self.requests = self.ngrams = 0  # statistics, for benchmarks
        self.start(None, [])

    @classmethod
    def from_config(cls, name: str, params: dict[str, Any], system: SystemConfig) -> CslmFeature:
        buffer_size = params.get("buffer-size", 10_000)
        if buffer_size < 1:
            raise PysmtError(f"feature {name}: buffer-size must be at least 1, not {buffer_size}")
        cache_size = params.get("cache-size", CACHE_SIZE)
        if cache_size < 0:
            raise PysmtError(f"feature {name}: cache-size must be 0 (nothing kept between calls) or more, "
                             f"not {cache_size}")
        normalization = params.get("normalization", "self")
        if normalization not in NORMALIZATIONS:
            raise PysmtError(f"feature {name}: normalization must be \"exact\" or \"self\", not {normalization!r}")
        device = resolve_device(params.get("device", "cpu"), f"feature {name}: device =")  # before loading anything
        return cls(name, model_directory(name, params, system), device, buffer_size, normalization, cache_size,
                   params.get("future-cost", True))

    # -- context-free estimates -------------------------------------------------------------------

    def evaluate(self, phrases: Sequence[PhrasePair] | Sequence[TranslationOption]
                 ) -> tuple[np.ndarray | None, np.ndarray | None]:
        if not self.future_cost:  # as Moses' CSLM: the search sees the CSLM only in scores
            return None, None
        estimates = [self.phrase(phrase.target)[2] for phrase in phrases]
        return None, np.array(estimates, dtype=np.float64)[:, None]

    def phrase(self, target: tuple[str, ...]) -> tuple[list[int], float, float]:
        """A target phrase's input ids, back-off term and unigram estimate, cached: the same phrases come
        back sentence after sentence, and the decoder asks for thousands a sentence."""
        known = self.phrases.get(target)
        if known is None:
            if len(self.phrases) >= PHRASE_CACHE_SIZE:
                self.phrases.clear()
            backoff = estimate = 0.0
            for word in target:  # in order, one at a time: the same sums whatever the batch
                backoff += self.backoff.logp(word)
                estimate += self.backoff.unigram(word)
            known = self.phrases[target] = (self.shortlist.encode(target), backoff, estimate)
        return known

    # -- the array interface ------------------------------------------------------------------------

    def start(self, sentence: Sentence | None, options: Sequence[TranslationOption]) -> int:
        """A new sentence: its options' word ids and back-off terms; state ids start afresh (0 = six <s>)."""
        width = max([1] + [len(option.target) for option in options])
        self.option_ids = np.zeros((len(options), width), dtype=np.int32)
        self.option_lengths = np.zeros(len(options), dtype=np.int64)
        self.option_backoff = np.zeros(len(options))
        for k, option in enumerate(options):
            ids, self.option_backoff[k], _ = self.phrase(option.target)
            self.option_ids[k, :len(ids)] = ids
            self.option_lengths[k] = len(ids)
        self.windows = np.arange(width)[:, None] + np.arange(self.context + 1)  # word j's n-gram in a sequence
        self.state_contexts = np.full((16, self.context), BOS_ID, dtype=np.int32)
        self.state_ids: dict[bytes, int] = {self.state_contexts[0].tobytes(): 0}
        if options and not self.warned:
            self.check_coverage(options)
        return 0

    def check_coverage(self, options: Sequence[TranslationOption]) -> None:
        """Warn once (on stderr) when few of the first sentence's option words are in the shortlist."""
        words = [w for option in options for w in option.target]
        if len(words) < 10:
            return
        self.warned = True
        covered = sum(1 for w in words if w in self.shortlist) / len(words)
        if covered < LOW_COVERAGE:
            print(f"pysmt: warning: feature {self.name}: only {covered:.0%} of the first sentence's candidate target "
                  f"words are in the CSLM's shortlist ({self.directory}); was it trained on this system's target "
                  "language and tokenization?", file=sys.stderr, flush=True)

    def score_batch(self, states: np.ndarray, options: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        states = np.asarray(states, dtype=np.int64)
        options = np.asarray(options, dtype=np.int64)
        ends = np.asarray(ends, dtype=bool)
        k, c = len(states), self.context
        words = self.option_ids[options]  # (k, width)
        lengths = self.option_lengths[options]
        width = words.shape[1]
        sequence = np.concatenate([self.state_contexts[states], words], axis=1)  # (k, c + width)
        windows = sequence[:, self.windows]  # (k, width, c + 1)
        present = np.arange(width)[None, :] < lengths[:, None]
        after = sequence[np.arange(k)[:, None], lengths[:, None] + np.arange(c)]  # the new contexts
        ngrams = np.concatenate([windows[present],
                                 np.concatenate([after[ends], np.full((int(ends.sum()), 1), EOS_ID, np.int32)], 1)])
        log_p = self.ngram_scores(ngrams)
        table = np.zeros((k, width + 1))
        n_words = int(present.sum())
        table[:, :width][present] = log_p[:n_words]
        table[ends, width] = log_p[n_words:]
        total = np.zeros(k)
        for j in range(width + 1):  # one column at a time: a request's sum never depends on the others
            total += table[:, j]
        total += self.option_backoff[options]
        self.requests += k
        return total[:, None], self.intern(after)

    def ngram_scores(self, ngrams: np.ndarray) -> np.ndarray:
        """``log p`` (shortlist part) of n-grams (n x 7 ids): the logit of the word given its context's
        cached hidden layer, minus the context's log Z when normalization is exact."""
        if not len(ngrams):
            return np.zeros(0)
        rows = self.cache.lookup(ngrams[:, :-1])
        scores = self.scorer.logits(self.cache.hidden[rows], ngrams[:, -1].astype(np.int64))
        if self.normalization == "exact":
            scores -= self.cache.normalizers(rows)
        self.ngrams += len(ngrams)
        return scores

    def intern(self, contexts: np.ndarray) -> np.ndarray:
        """State ids of contexts (rows of six input ids), numbering new ones."""
        ids, new = numbered(self.state_ids, contexts)
        if len(self.state_ids) > len(self.state_contexts):
            grown = np.empty((2 * len(self.state_ids), self.context), dtype=np.int32)
            grown[:len(self.state_contexts)] = self.state_contexts
            self.state_contexts = grown
        self.state_contexts[ids[new]] = contexts[new]
        return ids

    def end_sentence(self) -> None:
        """Per-sentence tables go; the context and phrase caches stay."""
        self.option_ids = self.option_ids[:0]
