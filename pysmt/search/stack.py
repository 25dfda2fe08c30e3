"""Hypothesis stacks with Moses' recombination, threshold and histogram pruning.

This follows Moses' ``HypothesisStackNormal``: a hypothesis below the stack's worst acceptable
score is discarded on arrival; equal signatures recombine (the better stays, the other becomes an
arc for the n-best list); the stack is pruned to its size lazily, when it reaches twice its size,
and once more before it is expanded. Pruning keeps the best hypotheses whose total (score plus
future cost) is within ``log(beam-threshold)`` of the best.
"""

from __future__ import annotations

import math
from collections.abc import Hashable

from pysmt.search.hypothesis import Hypothesis


def rank_key(hyp: Hypothesis) -> tuple[float, int]:
    """Best first; ties go to the earlier-created hypothesis, so search is deterministic."""
    return (-hyp.future, hyp.seq)


class Stack:
    """The hypotheses covering the same number of source words."""

    def __init__(self, size: int, beam_threshold: float, complete: bool, keep_arcs: bool) -> None:
        self.size = size
        self.beam = math.log(beam_threshold) if beam_threshold > 0 else -math.inf
        self.complete = complete
        self.keep_arcs = keep_arcs
        self.hyps: dict[Hashable, Hypothesis] = {}
        self.best = -math.inf
        self.worst = -math.inf

    def __len__(self) -> int:
        return len(self.hyps)

    def add(self, hyp: Hypothesis) -> None:
        """Insert a hypothesis with all its scores known (recombining and pruning as Moses does)."""
        if hyp.future == -math.inf or not hyp.future >= self.worst:  # also drops nan (a score that overflowed)
            return
        signature = hyp.signature(self.complete)
        existing = self.hyps.get(signature)
        if existing is not None:
            if hyp.future > existing.future:
                self.hyps[signature] = hyp
                winner, loser = hyp, existing
            else:
                winner, loser = existing, hyp
            if self.keep_arcs:
                arcs = winner.arcs or []
                if loser.arcs:
                    arcs.extend(loser.arcs)
                    loser.arcs = None
                arcs.append(loser)
                winner.arcs = arcs
            return
        self.hyps[signature] = hyp
        if hyp.future > self.best:
            self.best = hyp.future
            self.worst = max(self.worst, self.best + self.beam)
        if len(self.hyps) >= 2 * self.size:
            self.prune()

    def prune(self) -> None:
        """Keep at most ``size`` hypotheses, all within the beam of the best (Moses' ``PruneToSize``)."""
        if len(self.hyps) <= self.size:
            return
        ranked = sorted(self.hyps.items(), key=lambda item: rank_key(item[1]))
        kept = [(sig, hyp) for sig, hyp in ranked[: self.size] if hyp.future > self.best + self.beam]
        if len(kept) == self.size:
            self.worst = max(self.worst, kept[-1][1].future)
        self.hyps = dict(kept)

    def finish(self) -> list[Hypothesis]:
        """Prune; return the hypotheses to expand, best first."""
        self.prune()
        return sorted(self.hyps.values(), key=rank_key)
