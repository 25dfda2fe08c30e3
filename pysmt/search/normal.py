"""Normal stack search (Moses' ``SearchNormal``): every hypothesis is expanded with every option."""

from __future__ import annotations

from itertools import count

from pysmt.config import SearchConfig
from pysmt.search.distortion_limit import first_gap, gap_reachable, jump_allowed, span_mask
from pysmt.search.future_cost import FutureCost
from pysmt.search.hypothesis import Hypothesis
from pysmt.search.model import LogLinearModel
from pysmt.search.options import SentenceOptions
from pysmt.search.stack import Stack


def make_stacks(n: int, config: SearchConfig, keep_arcs: bool) -> list[Stack]:
    return [Stack(config.stack_size, config.beam_threshold, complete=(i == n), keep_arcs=keep_arcs)
            for i in range(n + 1)]


def normal_search(model: LogLinearModel, options: SentenceOptions, future: FutureCost,
                  config: SearchConfig, keep_arcs: bool) -> list[Hypothesis]:
    """Run the search; return the complete hypotheses, best first."""
    n = len(options.sentence)
    limit = config.distortion_limit
    stacks = make_stacks(n, config, keep_arcs)
    seq = count(1)
    stacks[0].add(model.initial_hypothesis(options.sentence, future(0)))
    spans = options.spans_by_start()
    for i in range(n):
        for hyp in stacks[i].finish(model.resolve):
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
                    new_coverage = coverage | mask
                    cost = future(new_coverage)
                    covered = i + end - start
                    target = stacks[covered]
                    complete = covered == n
                    for option in span_options:
                        target.add(model.extend(hyp, option, cost, complete, next(seq)))
    return stacks[n].finish(model.resolve)
