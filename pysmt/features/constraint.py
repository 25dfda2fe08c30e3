"""Constrained (forced) decoding: only translations equal to a given target line survive (Moses'
``ConstrainedDecoding`` feature, what its ``-constraint FILE`` adds; ``pysmt decode --constraint FILE``).

A stateful feature with one score, 0 while a hypothesis' output is a prefix of its input line's
constraint and :data:`~pysmt.features.base.FORBIDDEN` (-inf) as soon as it is not, or when a complete
hypothesis' output is shorter than the constraint: a forbidden extension never enters a stack (whatever
the weight), so the searches (the Python reference and the compiled one alike, which asks this feature
through the array interface) keep only hypotheses on the way to the constraint, and the n-best list only
translations equal to it. Its state is the number of constraint words matched, so hypotheses that match
different lengths never recombine. A reached translation's score is the free search's score of the same
derivation (this feature adds 0). Moses' ``negate``, ``soft`` and ``max-unknowns`` are not offered.

The constraints are the target side as the decoder produces it: on a system with ``[processing]`` (one
``pysmt train`` made) each line is prepared as the target side was (tokenized, truecased), so it is given
as the output reads (raw text); with ``prepared = true`` (``decode --prepared``) lines are taken as model
tokens, split on spaces.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pysmt.config import SystemConfig
from pysmt.errors import FeatureError
from pysmt.features.base import FORBIDDEN, Scores, StatefulFeature
from pysmt.features.parameters import parameter
from pysmt.files.textio import read_lines
from pysmt.phrases import Sentence, TranslationOption

#: The state of a hypothesis that left its constraint (never extended: its extensions are forbidden).
OFF = -1


@dataclass(frozen=True, kw_only=True)
class ConstraintParameters:
    path: Path = parameter(help="the constraints: one target line per input line (Moses' -constraint)")
    prepared: bool = parameter(
        False, help="the lines are model tokens already (decode --prepared), not prepared as the target side"
    )


class ConstrainedDecoding(StatefulFeature[int]):
    """0 for output on the way to the input line's constraint, forbidden otherwise (Moses' ConstrainedDecoding)."""

    default_label = "ConstrainedDecoding"
    parameters = ConstraintParameters
    tunable = False

    def __init__(self, name: str, constraints: list[tuple[str, ...]], path: str) -> None:
        super().__init__(name, 1)
        self.constraints = constraints
        self.path = path
        self.target: tuple[str, ...] = ()

    @classmethod
    def from_config(cls, name: str, params: ConstraintParameters, system: SystemConfig) -> ConstrainedDecoding:
        prepare = None
        processing = system.processing
        if processing is not None and not params.prepared:
            from pysmt.text_processing import TextProcessor  # sacremoses loads only for systems that process text

            prepare = TextProcessor(processing.target_language, processing.truecase_target, processing.tokenize).prepare
        constraints = [tuple((prepare(text) if prepare else text).split()) for _, text in read_lines(params.path)]
        return cls(name, constraints, str(params.path))

    def default_weights(self) -> list[float]:
        return [1.0]

    def forces_output(self) -> bool:
        """Always (:class:`~pysmt.features.base.ForcesOutput`): only the line's constraint is allowed."""
        return True

    def begin_sentence(self, sentence: Sentence) -> None:
        if sentence.index >= len(self.constraints):
            raise FeatureError(
                f"feature {self.name}: the constraint file {self.path} has {len(self.constraints):,} lines, "
                f"none for input line {sentence.index + 1}"
            )
        self.target = self.constraints[sentence.index]

    def initial_state(self, sentence: Sentence) -> int:
        return 0

    def extend(self, state: int, option: TranslationOption) -> tuple[Scores, int]:
        end = state + len(option.target)
        if state == OFF or self.target[state:end] != option.target:
            return (FORBIDDEN,), OFF
        return (0.0,), end

    def final(self, state: int) -> Scores | None:
        return (FORBIDDEN,) if state != len(self.target) else None
