"""The decoder feature ``cslm``: the CSLM's log-probability of the target words, one score.

A :class:`~pysmt.features.base.BatchedStatefulFeature`. Its state is the last six target words'
input ids (``<s>`` before the sentence start, ``[UNK]`` for words outside the shortlist), which is
all the network sees of the past, so hypotheses recombine exactly when their futures score alike.
State ids are numbered per sentence (:meth:`CslmFeature.start` resets them; id 0 is six ``<s>``).

:meth:`CslmFeature.score_batch` turns a batch of requests (parent state, option, sentence end) into
the n-grams they need with numpy (the option's words, each with its six predecessors, and ``</s>``
when the sentence ends there), looks the distinct ones up in a cache shared across sentences
(bounded: emptied when it reaches ``cache-size`` entries), scores the rest in one pass over their
unique contexts (:class:`~pysmt_cslm.scoring.Scorer`), and adds them up per request in a fixed
order: the scores do not depend on the buffer size or on what else is in a batch.

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
from pysmt_cslm.scoring import NORMALIZATIONS, Normalization
from pysmt_cslm.store import resolve_device
from pysmt_cslm.vocabulary import BOS_ID, EOS_ID

if TYPE_CHECKING:
    import torch

#: Cached n-gram scores kept across sentences before the cache is emptied (~130 bytes each).
CACHE_SIZE = 1_000_000
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


class CslmFeature(BatchedStatefulFeature):
    """``log p(target words | six previous words)`` by the continuous-space LM: one score."""

    default_label: ClassVar[str] = "CSLM"
    parameters: ClassVar[dict[str, type]] = {"model": Path, "buffer-size": int, "device": str,
                                             "normalization": str, "cache-size": int}
    default_paths: ClassVar[dict[str, str]] = {"model": "cslm"}

    def __init__(self, name: str, directory: Path, device: str | torch.device = "cpu", buffer_size: int = 10_000,
                 normalization: Normalization = "self", cache_size: int = CACHE_SIZE) -> None:
        super().__init__(name, 1)
        from pysmt_cslm.scoring import Scorer
        from pysmt_cslm.store import load_model

        loaded = load_model(directory, device)
        self.directory = directory
        self.shortlist, self.backoff = loaded.shortlist, loaded.backoff
        self.context = loaded.model.hp.context
        self.scorer = Scorer(loaded.model)
        del loaded
        self.buffer_size = buffer_size
        self.normalization = normalization
        self.cache_size = cache_size
        self.cache: dict[bytes, float] = {}  # n-gram -> log p
        self.log_z: dict[bytes, float] = {}  # context -> log Z (exact normalization)
        self.warned = False
        self.requests = self.ngrams = self.computed = self.contexts_normalized = 0  # statistics, for benchmarks
        self.start(None, [])

    @classmethod
    def from_config(cls, name: str, params: dict[str, Any], system: SystemConfig) -> CslmFeature:
        buffer_size = params.get("buffer-size", 10_000)
        if buffer_size < 1:
            raise PysmtError(f"feature {name}: buffer-size must be at least 1, not {buffer_size}")
        cache_size = params.get("cache-size", CACHE_SIZE)
        if cache_size < 0:
            raise PysmtError(f"feature {name}: cache-size must be 0 (no cache) or more, not {cache_size}")
        normalization = params.get("normalization", "self")
        if normalization not in NORMALIZATIONS:
            raise PysmtError(f"feature {name}: normalization must be \"exact\" or \"self\", not {normalization!r}")
        device = resolve_device(params.get("device", "cpu"), f"feature {name}: device =")  # before loading anything
        return cls(name, model_directory(name, params, system), device, buffer_size, normalization, cache_size)

    # -- context-free estimates -------------------------------------------------------------------

    def evaluate(self, phrases: Sequence[PhrasePair] | Sequence[TranslationOption]
                 ) -> tuple[np.ndarray | None, np.ndarray | None]:
        estimates = [sum(self.backoff.unigram(w) for w in phrase.target) for phrase in phrases]
        return None, np.array(estimates, dtype=np.float64)[:, None]

    # -- the array interface ------------------------------------------------------------------------

    def start(self, sentence: Sentence | None, options: Sequence[TranslationOption]) -> int:
        """A new sentence: its options' word ids and back-off terms; state ids start afresh (0 = six <s>)."""
        width = max([1] + [len(option.target) for option in options])
        self.option_ids = np.zeros((len(options), width), dtype=np.int32)
        self.option_lengths = np.zeros(len(options), dtype=np.int64)
        self.option_backoff = np.zeros(len(options))
        for k, option in enumerate(options):
            ids = self.shortlist.encode(option.target)
            self.option_ids[k, :len(ids)] = ids
            self.option_lengths[k] = len(ids)
            total = 0.0
            for word in option.target:  # in order, one at a time: the same sum whatever the batch
                total += self.backoff.logp(word)
            self.option_backoff[k] = total
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
        windows = np.lib.stride_tricks.sliding_window_view(sequence, c + 1, axis=1)  # (k, width, c + 1)
        present = np.arange(width)[None, :] < lengths[:, None]
        after = np.take_along_axis(sequence, lengths[:, None] + np.arange(c)[None, :], axis=1)  # new contexts
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
        """``log p`` (shortlist part) of n-grams (n x 7 ids), each distinct one scored once, cached across sentences.

        Deduplication goes through dicts of the rows' bytes: a decoder's call is small (cube pruning
        asks ~20 requests at a time), where numpy's sorting costs more than it saves.
        """
        if not len(ngrams):
            return np.zeros(0)
        ngrams = np.ascontiguousarray(ngrams, dtype=np.int32)
        keys = ngrams.view(np.dtype((np.void, ngrams.shape[1] * 4))).reshape(-1).tolist()
        cache = self.cache
        values = [cache.get(key) for key in keys]
        if None in values:
            todo: dict[bytes, int] = {}  # distinct missing n-gram -> its first row
            for k, (key, value) in enumerate(zip(keys, values)):
                if value is None and key not in todo:
                    todo[key] = k
            computed = self.compute(ngrams[list(todo.values())]).tolist()
            fresh = dict(zip(todo, computed))
            values = [fresh[key] if value is None else value for key, value in zip(keys, values)]
            self.computed += len(fresh)
            if self.cache_size:
                if len(cache) + len(fresh) > self.cache_size:
                    cache.clear()
                cache.update(fresh)
        self.ngrams += len(ngrams)
        return np.array(values)

    def compute(self, ngrams: np.ndarray) -> np.ndarray:
        """Scores of distinct n-grams by the network: hidden layers once per unique context, the requested
        words' logits, and (exact) minus each context's log Z, itself cached per context across calls."""
        contexts = np.ascontiguousarray(ngrams[:, :-1])
        keys = contexts.view(np.dtype((np.void, 4 * self.context))).reshape(-1).tolist()
        index: dict[bytes, int] = {}
        inverse = np.array([index.setdefault(key, len(index)) for key in keys], dtype=np.int64)
        first = np.zeros(len(index), dtype=np.int64)
        first[inverse[::-1]] = np.arange(len(keys) - 1, -1, -1)  # the first row of each unique context
        hidden = self.scorer.hidden(contexts[first])
        scores = self.scorer.logits(hidden, inverse, ngrams[:, -1].astype(np.int64))
        if self.normalization == "exact":
            unique_keys = list(index)
            log_z = np.array([self.log_z.get(key, np.nan) for key in unique_keys])
            todo = np.flatnonzero(np.isnan(log_z))
            if len(todo):
                log_z[todo] = self.scorer.log_partition_of(hidden, todo)
                self.contexts_normalized += len(todo)
                if self.cache_size:
                    if len(self.log_z) + len(todo) > self.cache_size:
                        self.log_z.clear()
                    self.log_z.update(zip((unique_keys[i] for i in todo.tolist()), log_z[todo].tolist()))
            scores -= log_z[inverse]
        return scores

    def intern(self, contexts: np.ndarray) -> np.ndarray:
        """State ids of contexts (rows of six input ids), numbering new ones."""
        contexts = np.ascontiguousarray(contexts, dtype=np.int32)
        keys = contexts.view(np.dtype((np.void, contexts.shape[1] * 4))).reshape(-1).tolist()
        ids = np.empty(len(keys), dtype=np.int64)
        table = self.state_ids
        for k, key in enumerate(keys):
            state = table.get(key)
            if state is None:
                state = table[key] = len(table)
                if state == len(self.state_contexts):
                    self.state_contexts = np.concatenate([self.state_contexts, np.empty_like(self.state_contexts)])
                self.state_contexts[state] = contexts[k]
            ids[k] = state
        return ids

    def end_sentence(self) -> None:
        """Per-sentence tables go; the n-gram cache stays."""
        self.option_ids = self.option_ids[:0]
