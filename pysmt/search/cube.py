"""Cube pruning (Moses' ``SearchCubePruning``): each stack pops at most ``pop-limit`` hypotheses.

Hypotheses of a finished stack are grouped by coverage. For every group and every span it may
cover next, an *edge* pairs the group's hypotheses (best first, filtered by the jump limit) with
the span's options (best first). A stack is filled by repeatedly taking the best hypothesis built
so far from any of its edges, then building the neighbours of that grid point, so only the
promising corner of each (hypotheses x options) grid is ever scored.
"""

from __future__ import annotations

import heapq
import math
from itertools import count

from pysmt.config import SearchConfig
from pysmt.phrases import SentenceOptions, TranslationOption
from pysmt.search.distortion_limit import first_gap, gap_reachable, jump_allowed, span_mask
from pysmt.search.future_cost import FutureCost
from pysmt.search.hypothesis import Hypothesis
from pysmt.search.model import LogLinearModel
from pysmt.search.normal import make_stacks
from pysmt.search.reordering_constraint import ReorderingConstraint


class Edge:
    """One grid of the cube: hypotheses of one coverage times the options of one span."""

    __slots__ = ("hyps", "options", "cost", "complete", "seen")

    def __init__(self, hyps: list[Hypothesis], options: list[TranslationOption], cost: float, complete: bool) -> None:
        self.hyps = hyps
        self.options = options
        self.cost = cost
        self.complete = complete
        self.seen: set[tuple[int, int]] = set()


def cube_search(
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
    todo: list[list[Edge]] = [[] for _ in range(n + 1)]
    seq = count(1)
    spans = options.spans_by_start()
    initial = model.initial_hypothesis(options, future(0))
    stacks[0].add(initial)
    # With deferred features, candidates are scored a round of pops at a time; without, after each pop.
    round_size = config.pops_per_round if model.deferred else 1

    for i in range(n + 1):
        if i > 0:
            fill_stack(model, stacks[i], todo[i], config.pop_limit, round_size, seq)
            todo[i] = []
        hyps = stacks[i].finish()
        if i == n:
            return hyps
        groups: dict[int, list[Hypothesis]] = {}
        for hyp in hyps:
            groups.setdefault(hyp.coverage, []).append(hyp)
        for coverage, group in groups.items():
            gap = first_gap(coverage)
            for start in range(gap, n):
                if (coverage >> start) & 1:
                    continue
                jumpers = [h for h in group if jump_allowed(h.end, h.option is not None, start, limit)]
                if not jumpers:
                    continue
                for end, span_options in spans[start]:
                    mask = span_mask(start, end)
                    if coverage & mask or not gap_reachable(gap, start, end, limit):
                        break
                    if constraint is not None and not constraint.allows(coverage, start, end, limit):
                        continue
                    covered = i + end - start
                    todo[covered].append(Edge(jumpers, span_options, future(coverage | mask), covered == n))
    return []


def heap_key(future: float) -> float:
    """A candidate's place in the heap: best first, nan (a score that overflowed) ranked as -inf.

    A nan key would break the heap's order and the loop's comparisons (neither ``<`` nor ``>=``).
    """
    return -future if future == future else math.inf


def fill_stack(model: LogLinearModel, stack, edges: list[Edge], pop_limit: int, round_size: int, seq: count) -> None:
    """Pop the best ``pop_limit`` hypotheses from the stack's edges into the stack.

    The heap holds only candidates whose scores are complete. Candidates are built (the first of
    every edge, then the neighbours of each popped one) into ``fresh``, and enter the heap once
    their deferred features have scored them, together, at the end of each round of
    ``round_size`` pops (candidates built by the last pop are not scored).
    """
    heap: list[tuple[float, int, Hypothesis, Edge, int, int]] = []
    fresh: list[tuple[Hypothesis, Edge, int, int]] = []

    def build(edge: Edge, x: int, y: int) -> None:
        edge.seen.add((x, y))
        fresh.append((model.extend(edge.hyps[x], edge.options[y], edge.cost, edge.complete, next(seq)), edge, x, y))

    for edge in edges:
        build(edge, 0, 0)
    pops = 0
    while pops < pop_limit:
        if fresh:
            model.resolve([hyp for hyp, _, _, _ in fresh])
            for hyp, edge, x, y in fresh:
                heapq.heappush(heap, (heap_key(hyp.future), hyp.seq, hyp, edge, x, y))
            fresh = []
        if not heap or not -heap[0][0] >= stack.worst:
            break
        popped = 0
        while heap and pops < pop_limit and popped < round_size and -heap[0][0] >= stack.worst:
            _, _, hyp, edge, x, y = heapq.heappop(heap)
            stack.add(hyp)
            pops += 1
            popped += 1
            if y + 1 < len(edge.options) and (x, y + 1) not in edge.seen:
                build(edge, x, y + 1)
            if x + 1 < len(edge.hyps) and (x + 1, y) not in edge.seen:
                build(edge, x + 1, y)
