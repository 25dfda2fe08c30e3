"""Normal stack search (Moses' ``SearchNormal``): every hypothesis is expanded with every option.

The expansions of one stack are built, given their deferred features' scores in batches, and then
added to their stacks in the order they were built: the same result as adding each at once.
"""

from __future__ import annotations

from itertools import count

from pysmt.config import SearchConfig
from pysmt.phrases import SentenceOptions
from pysmt.search.distortion_limit import first_gap, gap_reachable, jump_allowed, span_mask
from pysmt.search.future_cost import FutureCost
from pysmt.search.hypothesis import Hypothesis
from pysmt.search.model import LogLinearModel
from pysmt.search.reordering_constraint import ReorderingConstraint
from pysmt.search.stack import Stack


def make_stacks(n: int, config: SearchConfig, keep_arcs: bool) -> list[Stack]:
    return [
        Stack(config.stack_limit, config.beam_threshold, complete=(i == n), keep_arcs=keep_arcs) for i in range(n + 1)
    ]


def normal_search(
    model: LogLinearModel,
    options: SentenceOptions,
    future: FutureCost,
    config: SearchConfig,
    keep_arcs: bool,
    constraint: ReorderingConstraint | None = None,
) -> list[Hypothesis]:
    """Run the search (keeping the markup's walls and zones, ``constraint``); return the complete hypotheses,
    best first."""
    n = len(options.sentence)
    limit = config.distortion_limit
    stacks = make_stacks(n, config, keep_arcs)
    seq = count(1)
    stacks[0].add(model.initial_hypothesis(options, future(0)))
    spans = options.spans_by_start()
    for i in range(n):
        built: list[Hypothesis] = []  # every expansion of stack i, in the order built
        for hyp in stacks[i].finish():
            coverage = hyp.coverage
            gap = first_gap(coverage)
            has_previous = hyp.option is not None
            for start in range(gap, n):
                if (coverage >> start) & 1 or not jump_allowed(hyp.end, has_previous, start, limit):
                    continue
                for end, span_options in spans[start]:
                    mask = span_mask(start, end)
                    if coverage & mask or not gap_reachable(gap, start, end, limit):
                        break
                    if constraint is not None and not constraint.allows(coverage, start, end, limit):
                        continue
                    new_coverage = coverage | mask
                    cost = future(new_coverage)
                    complete = i + end - start == n
                    for option in span_options:
                        built.append(model.extend(hyp, option, cost, complete, next(seq)))
        model.resolve(built)  # deferred features' scores, in batches, before any stack sees them
        for new in built:
            stacks[new.covered].add(new)
    return stacks[n].finish()
