"""N-best derivations from the search graph (Moses' trellis paths through recombination arcs).

A derivation is the chain of hypotheses behind a complete hypothesis. Swapping any hypothesis on
that chain for one of its arcs (a worse hypothesis recombined into it, hence with the same future)
gives another derivation whose score differs by exactly the two hypotheses' score difference.
Expanding derivations best first, and only deviating after the last deviation, enumerates each
derivation once, in order of score.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from itertools import count
from typing import TYPE_CHECKING

import numpy as np

from pysmt.search.hypothesis import Hypothesis

if TYPE_CHECKING:
    from pysmt.phrases import TranslationOption
    from pysmt.search.model import LogLinearModel

#: How many derivations may be examined per requested entry of a distinct list (Moses' n-best-factor).
NBEST_FACTOR = 20


@dataclass
class Derivation:
    """A complete translation: the options applied, first to last, with its model score and unweighted scores."""

    options: list[TranslationOption]
    score: float
    scores: np.ndarray

    @property
    def words(self) -> list[str]:
        return [word for option in self.options for word in option.target]


def chain(hyp: Hypothesis) -> list[Hypothesis]:
    """The hypotheses from ``hyp`` back to the first applied option (last first)."""
    nodes = []
    node: Hypothesis | None = hyp
    while node is not None and node.option is not None:
        nodes.append(node)
        node = node.prev
    return nodes


def nbest(model: LogLinearModel, finals: list[Hypothesis], size: int, distinct: bool = False) -> list[Derivation]:
    """The ``size`` best derivations (distinct target strings if ``distinct``), best first.

    The compiled core has a twin of this function (``Search::derivations`` in ``pysmt/search/_nbest.cpp``).
    """
    tie = count()
    heap = [(-hyp.score, next(tie), chain(hyp), -1) for hyp in finals]
    heapq.heapify(heap)
    budget = size * NBEST_FACTOR
    result: list[Derivation] = []
    seen: set[str] = set()
    examined = 0
    while heap and len(result) < size and examined < budget:
        neg_score, _, nodes, last = heapq.heappop(heap)
        examined += 1
        for position in range(last + 1, len(nodes)):
            for arc in nodes[position].arcs or ():
                score = -neg_score - nodes[position].score + arc.score
                heapq.heappush(heap, (-score, next(tie), nodes[:position] + chain(arc), position))
        if len(heap) > budget:
            heap = heapq.nsmallest(budget, heap)
        path = list(reversed(nodes))
        if distinct:  # a repeated string is left out, but the derivations below it were queued (as Moses does)
            surface = " ".join(word for hyp in path for word in hyp.option.target)  # type: ignore[union-attr]
            if surface in seen:
                continue
            seen.add(surface)
        result.append(Derivation([hyp.option for hyp in path], -neg_score, model.breakdown(path)))  # type: ignore[misc]
    return result
