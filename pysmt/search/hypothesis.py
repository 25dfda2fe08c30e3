"""Partial translations (hypotheses) and their recombination signature."""

from __future__ import annotations

from collections.abc import Hashable

from pysmt.phrases import TranslationOption

#: A deferred feature's request, as :meth:`~pysmt.search.model.LogLinearModel.resolve` asks it: the
#: feature's index among the model's stateful features, the parent's state id (a deferred feature's
#: states are ids), the option's index in the sentence, and whether the sentence ends after it.
Request = tuple[int, int, int, bool]
#: The unweighted scores a stateful feature gave one step (None while a deferred feature's are pending).
Delta = tuple[float, ...] | None


class Hypothesis:
    """A partial translation: the options applied so far (through ``prev``) and the model's view of it.

    ``score`` is the weighted model score so far, ``future`` adds the estimated score of the
    uncovered source words; stacks rank and prune by ``future``. ``states`` holds one state per
    stateful feature and ``deltas`` the unweighted scores those features gave this last step,
    kept so n-best lists can report per-feature scores without rescoring. ``arcs`` are the worse
    hypotheses recombined into this one, the material of the n-best list. ``seq`` orders
    hypotheses by creation, which breaks score ties deterministically.
    """

    __slots__ = (
        "prev",
        "option",
        "coverage",
        "covered",
        "end",
        "score",
        "future",
        "states",
        "deltas",
        "pending",
        "arcs",
        "seq",
    )

    def __init__(
        self,
        prev: Hypothesis | None,
        option: TranslationOption | None,
        coverage: int,
        covered: int,
        end: int,
        score: float,
        states: tuple[Hashable, ...],
        deltas: tuple[Delta, ...],
        seq: int,
    ) -> None:
        self.prev = prev
        self.option = option
        self.coverage = coverage
        self.covered = covered
        self.end = end
        self.score = score
        self.future = score
        self.states = states
        self.deltas = deltas
        self.pending: list[Request] | None = None
        self.arcs: list[Hypothesis] | None = None
        self.seq = seq

    def signature(self, complete: bool) -> Hashable:
        """Hypotheses with equal signatures have equal futures and are recombined.

        Complete hypotheses have no future at all, so they all recombine (the losers become arcs).
        """
        return None if complete else (self.coverage, self.end, self.states)

    def path(self) -> list[Hypothesis]:
        """The hypotheses from the first applied option to this one (the empty hypothesis excluded)."""
        nodes = []
        hyp: Hypothesis | None = self
        while hyp is not None and hyp.option is not None:
            nodes.append(hyp)
            hyp = hyp.prev
        nodes.reverse()
        return nodes

    def __repr__(self) -> str:
        return f"Hypothesis(covered={self.covered}, score={self.score:.4f}, future={self.future:.4f})"
