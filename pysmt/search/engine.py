"""The one seam between the two engines: the compiled core and the Python reference, behind one interface.

The decoder chooses an engine once (``Decoder(engine=...)``) and then calls it without asking which it is: an
engine builds a sentence's options (:meth:`Engine.build`), and the sentence so built searches
(:meth:`BuiltSentence.search`) and gives its options as Python objects when the decoder must name what forbade every
translation (:meth:`BuiltSentence.options`). Both give the same options and n-best lists, bit for bit
(``tests/search/``); the Python one is the readable specification.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from pysmt import _core
from pysmt.config import SearchConfig
from pysmt.phrases import Sentence, SentenceOptions
from pysmt.search.compiled import CompiledSearch
from pysmt.search.compiled_options import UNKNOWN_TABLE, CompiledOptions
from pysmt.search.cube import cube_search
from pysmt.search.future_cost import FutureCost
from pysmt.search.markup_options import SentenceMarkup
from pysmt.search.model import LogLinearModel
from pysmt.search.nbest import nbest
from pysmt.search.normal import normal_search
from pysmt.search.options import OptionBuilder
from pysmt.search.reordering_constraint import ReorderingConstraint


@dataclass(frozen=True, slots=True)
class Step:
    """One option of a derivation, as a candidate describes it: its source span, target words and alignment."""

    start: int
    end: int
    target: tuple[str, ...]
    #: Word links inside the pair, Moses' ``i-j`` (source-target).
    alignment: str
    #: An unknown word passed through (no table's translation).
    unknown: bool = False


#: A derivation as an engine gives it: its options, first to last, and its unweighted scores (the model's columns).
Found = tuple[list[Step], np.ndarray]


class BuiltSentence(Protocol):
    """A sentence's options as one engine built them (the features have begun the sentence)."""

    def search(
        self, config: SearchConfig, size: int, distinct: bool, constraint: ReorderingConstraint | None
    ) -> list[Found]:
        """The ``size`` best derivations (distinct target strings if ``distinct``), best first, within markup's
        walls and zones (``constraint``)."""
        ...

    def options(self) -> SentenceOptions:
        """The options as Python objects, scored in isolation (what a message about them reads)."""
        ...


class Engine(Protocol):
    """Builds sentences' options and searches them, for one model."""

    def build(self, sentence: Sentence, markup: SentenceMarkup | None) -> BuiltSentence:
        """``sentence``'s options (with its ``markup``'s); the features have begun the sentence."""
        ...

    def forget_options(self) -> None:
        """Drop the phrase pairs ranked so far (kept across sentences): the next sentences score them again."""
        ...

    def set_weights(self) -> None:
        """Take the model's new weights (the pairs ranked so far are forgotten: their ranks change)."""
        ...


class PythonEngine:
    """The Python reference: :class:`~pysmt.search.options.OptionBuilder`, then normal search or cube pruning."""

    def __init__(self, model: LogLinearModel, builder: OptionBuilder) -> None:
        self.model, self.builder = model, builder

    def build(self, sentence: Sentence, markup: SentenceMarkup | None) -> PythonSentence:
        return PythonSentence(self.model, self.builder.build(sentence, markup))

    def forget_options(self) -> None:
        self.builder.cache.clear()

    def set_weights(self) -> None:
        self.forget_options()


@dataclass
class PythonSentence:
    """A sentence's options as the Python builder made them."""

    model: LogLinearModel
    built: SentenceOptions

    def search(
        self, config: SearchConfig, size: int, distinct: bool, constraint: ReorderingConstraint | None
    ) -> list[Found]:
        search = cube_search if config.algorithm == "cube" else normal_search
        finals = search(
            self.model, self.built, FutureCost(self.built), config, keep_arcs=size > 1, constraint=constraint
        )
        return [
            ([Step(o.start, o.end, o.target, o.pair.alignment, o.pair.unknown) for o in d.options], d.scores)
            for d in nbest(self.model, finals, size, distinct)
        ]

    def options(self) -> SentenceOptions:
        return self.built


class CompiledEngine:
    """The compiled core: :class:`~pysmt.search.compiled_options.CompiledOptions`, then
    :class:`~pysmt.search.compiled.CompiledSearch`."""

    def __init__(self, model: LogLinearModel, builder: CompiledOptions, search: CompiledSearch) -> None:
        self.model, self.builder, self.compiled = model, builder, search

    def build(self, sentence: Sentence, markup: SentenceMarkup | None) -> CompiledSentence:
        built, objects = self.builder.build(sentence, markup)
        return CompiledSentence(self, sentence, built, objects)

    def forget_options(self) -> None:
        self.builder.clear()

    def set_weights(self) -> None:
        self.forget_options()
        self.builder.set_weights()


@dataclass
class CompiledSentence:
    """A sentence's options as the compiled builder made them, with their Python objects when features need them."""

    engine: CompiledEngine
    sentence: Sentence
    built: _core.BuiltOptions
    objects: SentenceOptions | None

    def search(
        self, config: SearchConfig, size: int, distinct: bool, constraint: ReorderingConstraint | None
    ) -> list[Found]:
        built = self.built
        if constraint is not None:
            built.set_reordering(
                walls=list(constraint.walls),
                local_walls=list(constraint.local_walls),
                zone_first=[first for first, _ in constraint.zones],
                zone_last=[last for _, last in constraint.zones],
            )
        derivations = self.engine.compiled(self.engine.model, built, self.objects, config, size, distinct)
        steps: dict[int, Step] = {}
        starts, ends, tables = built.start, built.end, built.table

        def step(k: int) -> Step:  # each option's words and alignment asked of the core once
            known = steps.get(k)
            if known is None:
                target, unknown = tuple(built.target(k)), bool(tables[k] == UNKNOWN_TABLE)
                known = steps[k] = Step(int(starts[k]), int(ends[k]), target, built.alignment(k), unknown)
            return known

        return [([step(k) for k in chosen], scores) for chosen, _, scores in derivations]

    def options(self) -> SentenceOptions:
        return self.objects if self.objects is not None else self.engine.builder.materialize(self.built, self.sentence)
