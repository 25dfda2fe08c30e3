"""The decoder feature ``cslm``: the CSLM's log-probability of the target words, one score.

A :class:`~pysmt.plugin.BatchedStatefulFeature`. Its state is the last six target words'
input ids (``<s>`` before the sentence start, ``[UNK]`` for words outside the shortlist), which is
all the network sees of the past, so hypotheses recombine exactly when their futures score alike.

A state *is* a context: its id is the context's number in pysmt's compiled
:class:`~pysmt.plugin.ContextTable` (for n-gram features written as plugins), which also numbers
the contexts inside options. The
:class:`ContextCache` keeps, per number, the context's hidden layer (and log Z) once computed,
across sentences. :meth:`CslmFeature.score_batch` asks the table for a batch's n-grams (as context
numbers and words, the new states, and the contexts used for the first time), has the compiled
network (``_network.cpp``, through :class:`~pysmt_cslm.scoring.Scorer`) compute the hidden layers of
those first-used contexts, and takes the logits of the requested words added up per request in
order: the scores do not depend on the buffer size or on what else is in a batch.

Words outside the shortlist add ``log p(w | outside)`` (the back-off unigram) to ``log P([UNK] |
context)``. Context-free estimates for the future cost and the table limit: the training text's
unigram log-probabilities of the phrase's words (the first word of a KenLM estimate is the same kind
of number; the CSLM has no shorter-context model for the others).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, cast

import numpy as np

from pysmt.plugin import (
    BatchedStatefulFeature,
    ContextTable,
    PhrasePair,
    PysmtError,
    Sentence,
    SystemConfig,
    TranslationOption,
    WordScores,
    parameter,
    table_coverage_warnings,
)
from pysmt.plugin.neural import coverage_note, coverage_warning
from pysmt_cslm._network import CompiledCslm, HiddenStore
from pysmt_cslm.scoring import NORMALIZATIONS, Normalization, Scorer
from pysmt_cslm.store import resolve_device
from pysmt_cslm.vocabulary import BOS_ID, EOS_ID, UNK_ID

if TYPE_CHECKING:
    import torch

#: Contexts (states included) kept across sentences; past this, the cache is emptied when the next
#: sentence starts. A row of hidden layer is 4 x hidden2 bytes (1 KB default, 4 KB paper). 0 (each
#: sentence starts empty) by default: on the news system, keeping 100,000 saved 1 % of the contexts'
#: hidden layers and decoded 10 % slower (the kept rows crowd the processor's caches), and a sentence's
#: own (about 5,600 on newstest2013) need only a few MB.
CACHE_SIZE = 0
#: Target phrases whose ids and context-free terms are kept (emptied when full).
PHRASE_CACHE_SIZE = 200_000
#: No log Z to subtract (self-normalized scores).
NO_SHIFT = np.zeros(0)
#: The weight the feature starts at when a config gives none (``--features cslm``, ``pysmt tune``'s first
#: iteration), as Moses' features declare theirs: its score is a language model's natural-log probability of the
#: target words, as the n-gram LM's (Moses' default 0.5), beside which it scores them a second time: half of it.
CSLM_WEIGHT = 0.25


def grown(array: np.ndarray, rows: int) -> np.ndarray:
    """``array`` with room for ``rows`` rows (the new ones uninitialized)."""
    out = np.empty((rows,) + array.shape[1:], dtype=array.dtype)
    out[: len(array)] = array
    return out


class ContextCache:
    """Every context seen (numbered by a ContextTable); its hidden layer (kept by the compiled
    network), and its log Z once asked for.

    Numbers are the feature's state ids, so they must not change within a sentence: the cache is
    emptied only when a sentence starts with more than ``size`` contexts kept (0: every sentence).
    """

    def __init__(self, scorer: Scorer, size: int) -> None:
        self.scorer, self.size = scorer, size
        self.table = ContextTable(scorer.context)
        self.hidden = HiddenStore(scorer.network)
        self.log_z = np.empty(0)  # NaN until computed
        self.computed = self.normalized = 0  # statistics, for benchmarks

    def new_sentence(self) -> None:
        if len(self.table) > self.size:
            self.table.clear()

    def compute(self, fresh: np.ndarray) -> None:
        """The hidden layers of contexts used for the first time (the table names them, each once)."""
        if len(self.table) > len(self.log_z):
            self.log_z = grown(self.log_z, max(2 * len(self.table), 4096))
        if len(fresh):
            self.hidden.compute(fresh, self.table.contexts(fresh))
            self.log_z[fresh] = np.nan
            self.computed += len(fresh)

    def normalizers(self, rows: np.ndarray) -> np.ndarray:
        """log Z of contexts whose hidden layer is known (computing those not known yet, each once)."""
        missing = np.unique(rows[np.isnan(self.log_z[rows])])
        if len(missing):
            self.log_z[missing] = self.scorer.log_partition_of(self.hidden.rows(missing))
            self.normalized += len(missing)
        return self.log_z[rows]


@dataclass(frozen=True, kw_only=True)
class CslmParameters:
    model: Path = parameter(
        Path("cslm"), help="the model folder: train one with `pysmt cslm train --text TARGET_TEXT --out SYSTEM/cslm`"
    )
    buffer_size: int = parameter(10_000, help="the most requests scored in one batch")
    device: str = parameter("cpu", help="cpu, cuda[:N] or auto")
    normalization: str = parameter("self", help='"self" (the trained log Z of 0) or "exact" (the softmax)')
    cache_size: int = parameter(CACHE_SIZE, help="contexts kept across sentences (0: none)")
    future_cost: bool = parameter(True, help="estimate phrases' scores for the future cost (Moses' CSLM: false)")


class CslmFeature(BatchedStatefulFeature):
    """``log p(target words | six previous words)`` by the continuous-space LM: one score."""

    default_label: ClassVar[str] = "CSLM"
    parameters = CslmParameters

    def __init__(self, name: str, params: CslmParameters, device: torch.device) -> None:
        super().__init__(name, 1)
        from pysmt_cslm.store import load_model

        loaded = load_model(params.model, device)
        self.directory = params.model
        self.shortlist, self.backoff = loaded.shortlist, loaded.backoff
        self.context = loaded.model.hp.context
        self.scorer = Scorer(loaded.model)
        del loaded
        self.buffer_size = params.buffer_size
        self.normalization = cast(Normalization, params.normalization)  # one of them (check_config)
        self.cache = ContextCache(self.scorer, params.cache_size)
        self.phrases: dict[tuple[str, ...], tuple[tuple[int, ...], float, float]] = {}
        self.words = {w: self.word_terms(w) for w in [*self.shortlist.words[2:], *self.backoff.outside]}
        self.future_cost = params.future_cost
        self.warned = False
        self.requests = self.ngrams = 0  # statistics, for benchmarks
        self.compiled: CompiledCslm | None = None  # the compiled scorer, once asked for
        self.capsule: object = None
        self.start(None, [])

    @classmethod
    def check_config(cls, name: str, params: CslmParameters, system: SystemConfig) -> None:
        from pysmt_cslm.store import VOCAB, check_model
        from pysmt_cslm.vocabulary import Shortlist

        if params.buffer_size < 1:
            raise PysmtError(f"feature {name}: buffer-size must be at least 1, not {params.buffer_size}")
        if params.cache_size < 0:
            raise PysmtError(
                f"feature {name}: cache-size must be 0 (nothing kept between calls) or more, not {params.cache_size}"
            )
        if params.normalization not in NORMALIZATIONS:
            raise PysmtError(f'feature {name}: normalization must be "exact" or "self", not {params.normalization!r}')
        resolve_device(params.device, f"feature {name}: device =")
        check_model(params.model)  # the settings' mistakes are found without torch reading a file
        target = Shortlist.load(params.model / VOCAB).words[2:]  # most frequent first, after the symbols
        for warning in table_coverage_warnings(name, target, params.model, system):
            print(warning, file=sys.stderr, flush=True)

    def default_weights(self) -> list[float]:
        return [CSLM_WEIGHT]

    @classmethod
    def from_config(cls, name: str, params: CslmParameters, system: SystemConfig) -> CslmFeature:
        return cls(name, params, resolve_device(params.device, f"feature {name}: device ="))

    # -- context-free estimates -------------------------------------------------------------------

    def evaluate_in_isolation(self, phrases: Sequence[PhrasePair]) -> tuple[np.ndarray | None, np.ndarray | None]:
        if not self.future_cost:  # as Moses' CSLM: the search sees the CSLM only in scores
            return None, None
        estimates = [self.phrase(phrase.target)[2] for phrase in phrases]
        return None, np.array(estimates, dtype=np.float64)[:, None]

    def core_scores(self) -> WordScores | None:
        """:meth:`evaluate_in_isolation`'s estimates, computed by the decoder's compiled option builder: the sum of the
        phrase's words' unigram estimates, in word order (None without the future-cost estimate)."""
        if not self.future_cost:
            return None
        words = list(self.words)
        unseen = self.backoff.unigram_ids[UNK_ID] + self.backoff.unseen  # word_terms' estimate of any other word
        return WordScores(words=words, values=[self.words[w][2] for w in words], fallback=unseen, estimate=True)

    def phrase(self, target: tuple[str, ...]) -> tuple[tuple[int, ...], float, float]:
        """A target phrase's input ids, back-off term and unigram estimate, cached: the same phrases come
        back sentence after sentence, and the decoder asks for thousands a sentence. (Tuples of numbers,
        which Python's cyclic GC stops tracking: its full passes would otherwise walk the whole cache.)"""
        known = self.phrases.get(target)
        if known is None:
            if len(self.phrases) >= PHRASE_CACHE_SIZE:
                self.phrases.clear()
            backoff = estimate = 0.0
            ids = []
            for word in target:  # in order, one at a time: the same sums whatever the batch
                terms = self.words.get(word)
                if terms is None:
                    terms = self.word_terms(word)
                ids.append(terms[0])
                backoff += terms[1]
                estimate += terms[2]
            known = self.phrases[target] = (tuple(ids), backoff, estimate)
        return known

    def word_terms(self, word: str) -> tuple[int, float, float]:
        """A word's input id, back-off term and unigram estimate (the training text's words are precomputed)."""
        return self.shortlist.ids.get(word, UNK_ID), self.backoff.logp(word), self.backoff.unigram(word)

    # -- the array interface ------------------------------------------------------------------------

    def start(self, sentence: Sentence | None, options: Sequence[TranslationOption]) -> int:
        """A new sentence: its options' word ids and back-off terms; the start state (six <s>)."""
        width = max([1] + [len(option.target) for option in options])
        self.option_ids = np.zeros((len(options), width), dtype=np.int32)
        self.option_lengths = np.zeros(len(options), dtype=np.int64)
        self.option_backoff = np.zeros(len(options))
        for k, option in enumerate(options):
            ids, self.option_backoff[k], _ = self.phrase(option.target)
            self.option_ids[k, : len(ids)] = ids
            self.option_lengths[k] = len(ids)
        self.cache.new_sentence()
        initial = int(self.intern(np.full((1, self.context), BOS_ID, dtype=np.int32))[0])
        if options and not self.warned:
            self.check_coverage(options)
        return initial

    def check_coverage(self, options: Sequence[TranslationOption]) -> None:
        """Warn once (on stderr) when few of the first sentence's option words are in the shortlist."""
        words = [w for option in options for w in option.target]
        if len(words) < 10:
            return
        self.warned = True
        warning = coverage_warning(
            self.name,
            words,
            self.shortlist,
            "first sentence's candidate target words (the CSLM's shortlist)",
            self.directory,
        )
        if warning:
            print(warning, file=sys.stderr, flush=True)

    def score_batch(self, states: np.ndarray, options: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        options = np.asarray(options, dtype=np.int64)
        rows, words, owners, new_states, fresh = self.cache.table.extend(
            states, self.option_ids[options], self.option_lengths[options], ends, EOS_ID
        )
        self.cache.compute(fresh)
        total = self.request_scores(rows, words, owners, len(options))
        total += self.option_backoff[options]
        self.requests += len(options)
        return total[:, None], new_states

    def request_scores(self, rows: np.ndarray, words: np.ndarray, owners: np.ndarray, requests: int) -> np.ndarray:
        """Per request, the sum of its n-grams' ``log p`` (shortlist part) in order: the logit of each
        word given its context's (number's) hidden layer, minus the context's log Z when exact."""
        minus = self.cache.normalizers(rows) if self.normalization == "exact" else NO_SHIFT
        self.ngrams += len(rows)
        return self.cache.hidden.sums(rows, words, owners, requests, minus)

    def intern(self, contexts: np.ndarray) -> np.ndarray:
        """State ids of contexts (rows of six input ids), numbering new ones."""
        return self.cache.table.intern(contexts)

    @property
    def state_contexts(self) -> np.ndarray:
        """The six input ids of every state id (for tests and inspection)."""
        return self.cache.table.contexts(np.arange(len(self.cache.table)))

    def end_sentence(self) -> None:
        """Per-sentence tables go; the context and phrase caches stay. The compiled scorer's first sentence
        says how many option words the shortlist has (the same warning as :meth:`check_coverage`)."""
        self.option_ids = self.option_ids[:0]
        if self.compiled is not None and not self.warned and self.compiled.coverage[0]:
            self.warned = True
            words, known = self.compiled.coverage
            warning = coverage_note(
                self.name,
                known / words,
                "first sentence's candidate target words (the CSLM's shortlist)",
                self.directory,
            )
            if warning:
                print(warning, file=sys.stderr, flush=True)

    # -- the compiled scorer ------------------------------------------------------------------------

    def compiled_scorer(self) -> object:
        """The feature as a compiled scorer for pysmt's search (``pysmt/compiled_scorer.h``, implemented in
        ``_scorer.cpp``): what :meth:`start` and :meth:`score_batch` compute, without a Python call per
        batch. Self-normalized scores only: with ``normalization = "exact"`` (log Z in torch) it is None
        and the search calls :meth:`score_batch`."""
        if self.normalization != "self":
            return None
        if self.compiled is None:
            words = list(self.words)
            self.compiled = CompiledCslm(
                network=self.scorer.network,
                words=words,
                ids=[self.words[w][0] for w in words],
                backoff=[self.words[w][1] for w in words],
                unknown_id=UNK_ID,
                unseen=self.backoff.unseen,
                begin_id=BOS_ID,
                end_id=EOS_ID,
                cache_size=self.cache.size,
            )
            self.capsule = self.compiled.capsule()
        return self.capsule
