"""The compiled search (``pysmt/search/_search.cpp``, in :mod:`pysmt._core`) behind the same call as the
Python searches.

:class:`CompiledSearch` takes what :func:`~pysmt.search.cube.cube_search` and
:func:`~pysmt.search.normal.normal_search` take and gives the n-best derivations they lead to; it
runs either algorithm in C++ on typed arrays: the sentence's options (spans, isolation scores), the
future-cost table, and the stateful features' per-option data. The built-in stateful features
declare compiled twins (:class:`~pysmt.features.base.CompiledTwin`) that compute exactly what their
Python ``extend`` computes; every other stateful feature is called back through its array interface
(:meth:`~pysmt.features.base.StatefulFeature.score_batch`), a batch of deduplicated requests at a
time, exactly when the Python search would call it, through the same checks
(:class:`~pysmt.search.plugin_results.StatefulCalls`). The Python searches stay as the readable
specification: the tests check that both give the same hypotheses and scores.

The core also extracts the n-best list, as :func:`~pysmt.search.nbest.nbest` specifies, and sums
each derivation's scores as :meth:`~pysmt.search.model.LogLinearModel.breakdown` does: what comes
back is the n-best :class:`~pysmt.search.nbest.Derivation` list, not the search graph. (Turning the
graph's thousands of hypotheses into Python objects and walking them took ten times the search
itself for a 100-best list, the size MERT decodes.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pysmt import _core
from pysmt.config import SearchConfig
from pysmt.features.base import CompiledTwin
from pysmt.phrases import SentenceOptions, TranslationOption
from pysmt.search.future_cost import FutureCost
from pysmt.search.model import LogLinearModel
from pysmt.search.nbest import NBEST_FACTOR, Derivation


class CompiledSearch:
    """The compiled core bound to one model's features."""

    def __init__(self, model: LogLinearModel) -> None:
        #: Each stateful feature's compiled side, in the model's order: a built-in feature's twin, or the
        #: deferred feature that asks a plugin through its array interface.
        self.cores: list[_core.CompiledFeature] = []
        self.twins: list[tuple[CompiledTwin[Any], _core.CompiledFeature]] = []
        self.deferred: list[tuple[int, _core.DeferredFeature]] = []
        for k, feature in enumerate(model.stateful):
            if isinstance(feature, CompiledTwin):
                core = feature.core_feature()
                self.twins.append((feature, core))
            else:
                core = _core.DeferredFeature(model.calls[k], feature.num_scores, model.calls[k].buffer_size)
                self.deferred.append((k, core))
            self.cores.append(core)
        #: The model's score column of each stateful score, in the order the core keeps them.
        self.stateful_columns = [model.stateful_offsets[k] + d for k, feature in enumerate(model.stateful)
                                 for d in range(feature.num_scores)]

    def __call__(self, model: LogLinearModel, options: SentenceOptions, future: FutureCost, config: SearchConfig,
                 size: int, distinct: bool = False) -> list[Derivation]:
        """The ``size`` best derivations of the sentence (distinct target strings if ``distinct``), best first."""
        for core, weights in zip(self.cores, model.stateful_weights):
            core.set_weights(list(weights))
        for feature, twin in self.twins:
            feature.core_options(options, twin)
        for k, deferred in self.deferred:
            deferred.set_initial(model.calls[k].start(options.sentence, options.options))
        all_options = options.options
        spans = sorted(options.by_span.items())
        span_sizes = [len(opts) for _, opts in spans]
        option_scores = np.array([o.scores for o in all_options], np.float64).reshape(len(all_options), model.dims)
        no_targets = (np.zeros(0, np.int64), np.zeros(0, np.int32))  # only distinct lists compare target strings
        target_offsets, target_ids = target_word_ids(all_options) if distinct else no_targets
        arrays = _core.OptionArrays(
            length=len(options.sentence),
            start=np.fromiter((o.start for o in all_options), np.int32, len(all_options)),
            end=np.fromiter((o.end for o in all_options), np.int32, len(all_options)),
            isolation=np.fromiter((o.isolation for o in all_options), np.float64, len(all_options)),
            span_start=np.array([start for (start, _), _ in spans], dtype=np.int32),
            span_end=np.array([end for (_, end), _ in spans], dtype=np.int32),
            span_offsets=np.concatenate([[0], np.cumsum(span_sizes)]).astype(np.int64),
            span_options=np.fromiter((o.index for _, opts in spans for o in opts), np.int32, sum(span_sizes)),
            future_table=np.asarray(future.table, dtype=np.float64).ravel())
        settings = _core.SearchSettings(
            algorithm=_core.Algorithm.__members__[config.algorithm], stack_size=config.stack_size,
            beam_threshold=config.beam_threshold, pop_limit=config.pop_limit,
            distortion_limit=config.distortion_limit, pops_per_round=config.pops_per_round)
        request = _core.NbestRequest(size=size, budget=size * NBEST_FACTOR, distinct=distinct,
                                     option_scores=option_scores, stateful_columns=self.stateful_columns,
                                     target_offsets=target_offsets, target_ids=target_ids)
        found = _core.search(options=arrays, settings=settings, features=self.cores, nbest=request)
        offsets, chosen = found.offsets.tolist(), found.options.tolist()
        return [Derivation([all_options[i] for i in chosen[lo:hi]], score, scores)
                for lo, hi, score, scores in zip(offsets[:-1], offsets[1:], found.score.tolist(), found.scores)]


def target_word_ids(options: list[TranslationOption]) -> tuple[np.ndarray, np.ndarray]:
    """Each option's target words as sentence-local ids (offsets, ids), for comparing target strings in the core."""
    vocabulary: dict[str, int] = {}
    ids = [vocabulary.setdefault(word, len(vocabulary)) for option in options for word in option.target]
    offsets = np.concatenate([[0], np.cumsum([len(option.target) for option in options])]).astype(np.int64)
    return offsets, np.array(ids, dtype=np.int32)
