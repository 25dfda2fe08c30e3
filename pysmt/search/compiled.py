"""The compiled search core (``_stack_search.cpp``) behind the same call as the Python searches.

:func:`compiled_search` takes what :func:`~pysmt.search.cube.cube_search` and
:func:`~pysmt.search.normal.normal_search` take and returns what they return, the complete
hypotheses best first; it runs either algorithm in C++ on typed arrays: the sentence's options
(spans, isolation scores), the future-cost table, and the stateful features' per-option data. The
built-in stateful features (KenLM, distortion, lexicalized reordering) have compiled twins that
compute exactly what their Python ``extend`` computes; every other stateful feature is called
back through its array interface (:meth:`~pysmt.features.base.StatefulFeature.score_batch`), a
batch of deduplicated requests at a time, exactly when the Python search would call it, through
the same checks (:class:`~pysmt.search.plugin_results.StatefulCalls`). The
Python searches stay as the readable specification: the tests check that both give the same
hypotheses and scores.

A built-in stateful feature offers the core ``core_feature()`` (its compiled twin, made once) and
``core_options(options, twin)`` (hands the twin a sentence's per-option data).

The core also extracts the n-best list, as :func:`~pysmt.search.nbest.nbest` specifies, and sums
each derivation's scores as :meth:`~pysmt.search.model.LogLinearModel.breakdown` does: what comes
back is the n-best :class:`~pysmt.search.nbest.Derivation` list, not the search graph. (Turning the
graph's thousands of hypotheses into Python objects and walking them took ten times the search
itself for a 100-best list, the size MERT decodes.)
"""

from __future__ import annotations

import numpy as np

from pysmt.config import SearchConfig
from pysmt.search import _stack_search
from pysmt.search.future_cost import FutureCost
from pysmt.search.model import LogLinearModel
from pysmt.search.nbest import NBEST_FACTOR, Derivation
from pysmt.search.options import SentenceOptions, TranslationOption

#: For stateful plugin features whose state is the last n - 1 target words (a neural n-gram LM such
#: as the CSLM): numbers contexts and turns a batch of requests into its n-grams in compiled code.
ContextTable = _stack_search.ContextTable


class CompiledSearch:
    """The compiled core bound to one model's features."""

    def __init__(self, model: LogLinearModel) -> None:
        self.cores = [feature.core_feature() if k not in model.calls  # type: ignore[attr-defined]
                      else _stack_search.DeferredFeature(model.calls[k], feature.num_scores, model.calls[k].buffer_size)
                      for k, feature in enumerate(model.stateful)]
        #: The model's score column of each stateful score, in the order the core keeps them.
        self.stateful_columns = [model.stateful_offsets[k] + d for k, feature in enumerate(model.stateful)
                                 for d in range(feature.num_scores)]

    def __call__(self, model: LogLinearModel, options: SentenceOptions, future: FutureCost, config: SearchConfig,
                 size: int, distinct: bool = False) -> list[Derivation]:
        """The ``size`` best derivations of the sentence (distinct target strings if ``distinct``), best first."""
        for k, (feature, core, weights) in enumerate(zip(model.stateful, self.cores, model.stateful_weights)):
            core.set_weights(list(weights))
            if k in model.calls:
                core.set_initial(model.calls[k].start(options.sentence, options.options))
            else:
                feature.core_options(options, core)  # type: ignore[attr-defined]
        all_options = options.options
        spans = sorted(options.by_span.items())
        span_sizes = [len(opts) for _, opts in spans]
        option_scores = np.array([o.scores for o in all_options], np.float64).reshape(len(all_options), model.dims)
        no_targets = (np.zeros(0, np.int64), np.zeros(0, np.int32))  # only distinct lists compare target strings
        target_offsets, target_ids = target_word_ids(all_options) if distinct else no_targets
        found = _stack_search.search(
            len(options.sentence), config.algorithm == "cube", config.stack_size, config.beam_threshold,
            config.pop_limit, config.distortion_limit, config.pops_per_round,
            np.fromiter((o.start for o in all_options), np.int32, len(all_options)),
            np.fromiter((o.end for o in all_options), np.int32, len(all_options)),
            np.fromiter((o.isolation for o in all_options), np.float64, len(all_options)),
            np.array([start for (start, _), _ in spans], dtype=np.int32),
            np.array([end for (_, end), _ in spans], dtype=np.int32),
            np.concatenate([[0], np.cumsum(span_sizes)]).astype(np.int64),
            np.fromiter((o.index for _, opts in spans for o in opts), np.int32, sum(span_sizes)),
            np.asarray(future.table, dtype=np.float64).ravel(), self.cores,
            size, size * NBEST_FACTOR, distinct, option_scores, self.stateful_columns, target_offsets, target_ids)
        offsets, chosen = found["offsets"].tolist(), found["options"].tolist()
        return [Derivation([all_options[i] for i in chosen[lo:hi]], score, scores)
                for lo, hi, score, scores in zip(offsets[:-1], offsets[1:], found["score"].tolist(), found["scores"])]


def target_word_ids(options: list[TranslationOption]) -> tuple[np.ndarray, np.ndarray]:
    """Each option's target words as sentence-local ids (offsets, ids), for comparing target strings in the core."""
    vocabulary: dict[str, int] = {}
    ids = [vocabulary.setdefault(word, len(vocabulary)) for option in options for word in option.target]
    offsets = np.concatenate([[0], np.cumsum([len(option.target) for option in options])]).astype(np.int64)
    return offsets, np.array(ids, dtype=np.int32)
