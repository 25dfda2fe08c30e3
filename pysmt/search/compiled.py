"""The compiled search (``pysmt/search/_search.cpp``, in :mod:`pysmt._core`): the n-best derivations of a
sentence's compiled options (:mod:`pysmt.search.compiled_options`).

It runs normal search or cube pruning in C++ over the options the compiled builder made (spans,
isolation scores; it computes the future-cost table itself, as
:class:`~pysmt.search.future_cost.FutureCost` does). The built-in stateful features declare compiled
twins (:class:`~pysmt.features.base.CompiledTwin`) that compute exactly what their Python ``extend``
computes, from what they take of the options in the core; every other stateful feature is called
back through its array interface (:meth:`~pysmt.features.base.StatefulFeature.score_batch`), a batch
of deduplicated requests at a time, exactly when the Python search would call it, through the same
checks (:class:`~pysmt.search.plugin_results.StatefulCalls`). The Python searches
(:func:`~pysmt.search.normal.normal_search`, :func:`~pysmt.search.cube.cube_search`) stay as the
readable specification: the tests check that both give the same hypotheses and scores.

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
from pysmt.errors import FeatureError
from pysmt.features.base import CompiledScorer, CompiledTwin, StatefulFeature
from pysmt.phrases import SentenceOptions
from pysmt.search.model import LogLinearModel
from pysmt.search.nbest import NBEST_FACTOR

#: A derivation as the core gives it: its options (indices, first to last), model score, unweighted scores.
CompiledDerivation = tuple[list[int], float, np.ndarray]


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
            elif (scorer := compiled_scorer(feature)) is not None:
                core = _core.DeferredFeature(scorer=scorer, name=feature.name, buffer_size=feature.buffer_size)
            else:
                core = _core.DeferredFeature(model.calls[k], feature.num_scores, model.calls[k].buffer_size)
                self.deferred.append((k, core))
            self.cores.append(core)
        #: The model's score column of each stateful score, in the order the core keeps them.
        self.stateful_columns = [
            model.stateful_offsets[k] + d for k, feature in enumerate(model.stateful) for d in range(feature.num_scores)
        ]
        #: Hypotheses the searches built, for benchmarks.
        self.hypotheses = 0

    def __call__(
        self,
        model: LogLinearModel,
        built: _core.BuiltOptions,
        options: SentenceOptions | None,
        config: SearchConfig,
        size: int,
        distinct: bool = False,
    ) -> list[CompiledDerivation]:
        """The ``size`` best derivations (distinct target strings if ``distinct``), best first. ``options``:
        the options as Python objects, which plugins' stateful features are given (None without such features)."""
        for core, weights in zip(self.cores, model.stateful_weights):
            core.set_weights(list(weights))
        for k, deferred in self.deferred:
            assert options is not None, "plugins' stateful features called from Python need the options as objects"
            deferred.set_initial(model.calls[k].start(options.sentence, options.options))
        settings = _core.SearchSettings(
            algorithm=_core.Algorithm.__members__[config.algorithm],
            stack_size=config.stack_limit,
            beam_threshold=config.beam_threshold,
            pop_limit=config.pop_limit,
            distortion_limit=config.distortion_limit,
            pops_per_round=config.pops_per_round,
        )
        request = _core.NbestRequest(
            size=size, budget=size * NBEST_FACTOR, distinct=distinct, stateful_columns=self.stateful_columns
        )
        try:
            found = _core.search(options=built, settings=settings, features=self.cores, nbest=request)
        except _core.FeatureFault as fault:  # a compiled scorer's unusable answer, naming its feature
            raise FeatureError(str(fault)) from None
        self.hypotheses += found.hypotheses
        offsets, chosen = found.offsets.tolist(), found.options.tolist()
        return [
            (chosen[lo:hi], score, scores)
            for lo, hi, score, scores in zip(offsets[:-1], offsets[1:], found.score.tolist(), found.scores)
        ]


def compiled_scorer(feature: StatefulFeature) -> Any:
    """The compiled scorer a plugin's stateful feature offers (:class:`~pysmt.features.base.CompiledScorer`),
    or None."""
    return feature.compiled_scorer() if isinstance(feature, CompiledScorer) else None
