"""Lexicalized reordering (Moses' phrase-based ``LexicalReordering``).

The ``model`` parameter (``type=`` in moses.ini) uses Moses' names, e.g. ``msd-bidirectional-fe`` (6 scores),
``msd-backward-fe``, ``wbe-msd-bidirectional-fe-allff``, ``monotonicity-bidirectional-f``,
``mslr-bidirectional-fe``, ``leftright-backward-fe``. Orientations, as Moses computes them from
source spans: monotone (this phrase starts right after the previous one), swap (it ends right
before the previous one), discontinuous otherwise; the first phrase is monotone if it starts the
sentence. The backward model scores each phrase's orientation with that phrase's table entry; the
forward model scores it with the previous phrase's entry (nothing for the first phrase, nothing at
the sentence end). Only the slot of the orientation taken gets a score; a pair missing from the
table scores 0 (or ``default-scores``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pysmt import _core
from pysmt._core import Orientation, ReorderingModel, orientation_count
from pysmt.config import SystemConfig
from pysmt.errors import PysmtError
from pysmt.features.base import CompiledScores, CompiledTwin, StatefulFeature
from pysmt.features.parameters import parameter
from pysmt.models.reordering_table import ReorderingTable, check_reordering_table
from pysmt.phrases import PhrasePair, Sentence, TranslationOption

State = tuple[int, int, tuple[float, ...] | None] | None


class ReorderingModelType:
    """A parsed Moses reordering ``type`` string.

    The models (``msd``, ``mslr``, ``monotonicity``, ``leftright``) and their orientations (Moses'
    ``ReorderingType`` values, the table's column of each) are defined once, in the compiled core
    (``pysmt/features/_lexical_reordering.hpp``), and exported: :class:`~pysmt._core.ReorderingModel`
    and :class:`~pysmt._core.Orientation`.
    """

    def __init__(self, spec: str) -> None:
        tokens = spec.lower().split("-")
        models = [ReorderingModel.__members__[t] for t in tokens if t in ReorderingModel.__members__]
        if len(models) != 1 or "hier" in tokens:
            raise PysmtError(
                f"lexicalized reordering type {spec!r} is not supported (phrase-based msd, mslr, "
                "monotonicity or leftright models; not hierarchical)"
            )
        self.model = models[0]
        self.orientations = orientation_count(self.model)
        self.backward = "forward" not in tokens
        self.forward = "forward" in tokens or "bidirectional" in tokens
        self.source_only = "fe" not in tokens
        self.collapse = "collapseff" in tokens
        self.table_scores = self.orientations * (int(self.backward) + int(self.forward))
        self.num_scores = (1 if self.collapse else self.orientations) * (int(self.backward) + int(self.forward))

    def first(self, start: int) -> Orientation:
        """Orientation of the first phrase."""
        if self.model == ReorderingModel.leftright:
            return Orientation.R
        if start == 0:
            return Orientation.M
        return {
            ReorderingModel.msd: Orientation.D,
            ReorderingModel.mslr: Orientation.DR,
            ReorderingModel.monotonicity: Orientation.NM,
        }[self.model]

    def orientation(self, prev_start: int, prev_end: int, start: int, end: int) -> Orientation:
        """Orientation of ``[start, end)`` after ``[prev_start, prev_end)`` (exclusive ends)."""
        if self.model == ReorderingModel.leftright:
            return Orientation.R if prev_end - 1 <= start else Orientation.L
        if start == prev_end:
            return Orientation.M
        if self.model == ReorderingModel.monotonicity:
            return Orientation.NM
        if prev_start == end:
            return Orientation.S
        if self.model == ReorderingModel.msd:
            return Orientation.D
        return Orientation.DR if start >= prev_end else Orientation.DL


@dataclass(frozen=True, kw_only=True)
class LexicalReorderingParameters:
    model: str = parameter(help="Moses' type, e.g. wbe-msd-bidirectional-fe-allff")
    path: Path = parameter(help="the table: text or gzip, or a folder written by pysmt binarize")
    num_features: int | None = parameter(None, help="its number of scores (checked against the model)")
    default_scores: str | None = parameter(None, help="comma-separated probabilities for pairs the table lacks")


def default_scores(name: str, text: str | None, kind: ReorderingModelType) -> tuple[float, ...] | None:
    """The logged ``default-scores`` (comma-separated probabilities) of a feature, or one line saying what is wrong."""
    if text is None:
        return None
    try:
        values = [float(v) for v in text.split(",")]
    except ValueError:
        raise PysmtError(f"feature {name}: default-scores must be comma-separated probabilities") from None
    if len(values) != kind.table_scores or not all(0 < v <= 1 for v in values):
        raise PysmtError(f"feature {name}: default-scores needs {kind.table_scores} probabilities in (0, 1]")
    return tuple(np.log(values).tolist())


class LexicalReorderingFeature(StatefulFeature[State], CompiledTwin[_core.LexicalReorderingTwin], CompiledScores):
    default_label = "LexicalReordering"
    parameters = LexicalReorderingParameters

    def __init__(
        self,
        name: str,
        kind: ReorderingModelType,
        table: ReorderingTable,
        default_scores: tuple[float, ...] | None = None,
    ) -> None:
        super().__init__(name, kind.num_scores)
        self.kind = kind
        self.table = table
        self.default_scores = default_scores
        self.rows: dict[PhrasePair, tuple[float, ...] | None] = {}
        per_direction = 1 if kind.collapse else kind.orientations
        self.forward_table_offset = kind.orientations if kind.backward else 0
        # Score slot of each orientation, per direction (collapsed models have one slot per direction).
        forward_offset = per_direction if kind.backward else 0
        self.backward_slots = [0 if kind.collapse else o for o in range(kind.orientations)]
        self.forward_slots = [forward_offset + slot for slot in self.backward_slots]

    @classmethod
    def check_config(cls, name: str, params: LexicalReorderingParameters, system: SystemConfig) -> None:
        kind = ReorderingModelType(params.model)
        if params.num_features not in (None, kind.num_scores):
            raise PysmtError(
                f"feature {name}: model {params.model} has {kind.num_scores} scores, "
                f"num-features says {params.num_features}"
            )
        default_scores(name, params.default_scores, kind)
        check_reordering_table(params.path, kind.table_scores, kind.source_only)

    @classmethod
    def from_config(
        cls, name: str, params: LexicalReorderingParameters, system: SystemConfig
    ) -> LexicalReorderingFeature:
        kind = ReorderingModelType(params.model)
        table = ReorderingTable(params.path, num_scores=kind.table_scores, source_only=kind.source_only)
        return cls(name, kind, table, default_scores(name, params.default_scores, kind))

    def evaluate_in_isolation(self, phrases: Sequence[PhrasePair]) -> tuple[None, None]:
        """Look up (once per phrase pair) the table entry that ``extend`` will need."""
        for pair in phrases:
            row = None if pair.unknown else self.table.lookup(pair.source, " ".join(pair.target))
            self.rows[pair] = row if row is not None else self.default_scores
        return None, None

    def initial_state(self, sentence: Sentence) -> State:
        return None

    def extend(self, state: State, option: TranslationOption) -> tuple[tuple[float, ...], State]:
        kind = self.kind
        row = self.rows[option.pair]
        scores = [0.0] * self.num_scores
        if state is None:
            orientation = int(kind.first(option.start))  # the table column it scores
            previous_row = None
        else:
            prev_start, prev_end, previous_row = state
            orientation = int(kind.orientation(prev_start, prev_end, option.start, option.end))
        if row is not None and kind.backward:
            scores[self.backward_slots[orientation]] = row[orientation]
        if previous_row is not None:
            scores[self.forward_slots[orientation]] = previous_row[self.forward_table_offset + orientation]
        return tuple(scores), (option.start, option.end, row if kind.forward else None)

    def core_feature(self) -> _core.LexicalReorderingTwin:
        """The twin, which looks each option's row up in the table itself (as ``evaluate_in_isolation`` does here)."""
        kind = self.kind
        return _core.LexicalReorderingTwin(
            self.num_scores,
            kind.model,
            kind.backward,
            kind.forward,
            self.backward_slots,
            self.forward_slots,
            self.forward_table_offset,
            self.table.view,
            kind.source_only,
            list(self.default_scores or ()),
        )

    def core_scores(self) -> None:
        """Nothing is scored in isolation (``evaluate_in_isolation`` only looks rows up, for ``extend``)."""
        return None
