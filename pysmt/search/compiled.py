"""The compiled search core (``_stack_search.cpp``) behind the same call as the Python searches.

:func:`compiled_search` takes what :func:`~pysmt.search.cube.cube_search` and
:func:`~pysmt.search.normal.normal_search` take and returns what they return, the complete
hypotheses best first; it runs either algorithm in C++ on typed arrays: the sentence's options
(spans, isolation scores), the future-cost table, and the stateful features' per-option data. The
built-in stateful features (KenLM, distortion, lexicalized reordering) have compiled twins that
compute exactly what their Python ``extend`` computes; every other stateful feature is called
back through its array interface (:meth:`~pysmt.features.base.StatefulFeature.score_batch`), a
batch of deduplicated requests at a time, exactly when the Python search would call it. The
Python searches stay as the readable specification: the tests check that both give the same
hypotheses and scores.

A built-in stateful feature offers the core ``core_feature()`` (its compiled twin, made once) and
``core_options(options, twin)`` (hands the twin a sentence's per-option data).

Only the hypotheses behind the final ones (their chains and recombination arcs) come back as
:class:`~pysmt.search.hypothesis.Hypothesis` objects, which is all the n-best lists need.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pysmt.config import SearchConfig
from pysmt.search import _stack_search
from pysmt.search.future_cost import FutureCost
from pysmt.search.hypothesis import Hypothesis
from pysmt.search.model import LogLinearModel
from pysmt.search.options import SentenceOptions

#: For stateful plugin features whose state is the last n - 1 target words (a neural n-gram LM such
#: as the CSLM): numbers contexts and turns a batch of requests into its n-grams in compiled code.
ContextTable = _stack_search.ContextTable


class CompiledSearch:
    """The compiled core bound to one model's features."""

    def __init__(self, model: LogLinearModel) -> None:
        self.model = model
        self.cores = [feature.core_feature() if k not in model.deferred  # type: ignore[attr-defined]
                      else _stack_search.DeferredFeature(feature, feature.num_scores, feature.buffer_size)
                      for k, feature in enumerate(model.stateful)]

    def __call__(self, model: LogLinearModel, options: SentenceOptions, future: FutureCost, config: SearchConfig,
                 keep_arcs: bool) -> list[Hypothesis]:
        for k, (feature, core, weights) in enumerate(zip(model.stateful, self.cores, model.stateful_weights)):
            core.set_weights(list(weights))
            if k in model.deferred:
                core.set_initial(feature.start(options.sentence, options.options))
            else:
                feature.core_options(options, core)  # type: ignore[attr-defined]
        all_options = options.options
        spans = sorted(options.by_span.items())
        span_sizes = [len(opts) for _, opts in spans]
        graph = _stack_search.search(
            len(options.sentence), config.algorithm == "cube", config.stack_size, config.beam_threshold,
            config.pop_limit, config.distortion_limit, keep_arcs, config.pops_per_round,
            np.fromiter((o.start for o in all_options), np.int32, len(all_options)),
            np.fromiter((o.end for o in all_options), np.int32, len(all_options)),
            np.fromiter((o.isolation for o in all_options), np.float64, len(all_options)),
            np.array([start for (start, _), _ in spans], dtype=np.int32),
            np.array([end for (_, end), _ in spans], dtype=np.int32),
            np.concatenate([[0], np.cumsum(span_sizes)]).astype(np.int64),
            np.fromiter((o.index for _, opts in spans for o in opts), np.int32, sum(span_sizes)),
            np.asarray(future.table, dtype=np.float64).ravel(), self.cores)
        return self.hypotheses(graph, options)

    def hypotheses(self, graph: dict[str, Any], options: SentenceOptions) -> list[Hypothesis]:
        """Python hypotheses for the returned part of the search graph; the final ones, best first."""
        widths = [feature.num_scores for feature in self.model.stateful]
        bounds = np.cumsum([0] + widths)
        made: dict[int, Hypothesis] = {}
        rows = zip(graph["ids"].tolist(), graph["prev"].tolist(), graph["option"].tolist(),
                   graph["covered"].tolist(), graph["end"].tolist(), graph["score"].tolist(),
                   graph["future"].tolist(), graph["seq"].tolist(), graph["deltas"].tolist())
        for hyp_id, prev, option, covered, end, score, future, seq, delta in rows:
            deltas = tuple(tuple(delta[lo:hi]) for lo, hi in zip(bounds[:-1], bounds[1:]))
            hyp = Hypothesis(made.get(prev), options.options[option] if option >= 0 else None, 0, covered, end,
                             score, (), deltas, seq)
            hyp.future = future
            made[hyp_id] = hyp
        offsets, arcs = graph["arc_offsets"].tolist(), graph["arcs"].tolist()
        for k, hyp_id in enumerate(graph["ids"].tolist()):
            if offsets[k + 1] > offsets[k]:
                made[hyp_id].arcs = [made[a] for a in arcs[offsets[k]:offsets[k + 1]]]
        return [made[hyp_id] for hyp_id in graph["finals"].tolist()]
