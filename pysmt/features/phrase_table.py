"""The phrase table as a feature: it proposes the phrase pairs and scores them with the table's columns.

Moses name: ``PhraseDictionaryMemory``. Parameters (:class:`PhraseTableParameters`): ``path`` (text or
gzip, or a binary table folder written by ``pysmt binarize``, made with the same ``log-scores``),
``num-features`` (score columns), ``table-limit`` (default 20; 0 keeps all), ``log-scores`` (true when
the table already stores log scores instead of probabilities).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pysmt import _core
from pysmt.config import SystemConfig
from pysmt.errors import PysmtError
from pysmt.features.base import Feature, PhraseSource
from pysmt.features.parameters import parameter
from pysmt.models.phrase_table import PhraseTable, check_phrase_table
from pysmt.phrases import PhrasePair


@dataclass(frozen=True, kw_only=True)
class PhraseTableParameters:
    path: Path = parameter(help="the table: text or gzip, or a folder written by pysmt binarize")
    num_features: int | None = parameter(None, help="its number of score columns (checked against the table)")
    table_limit: int = parameter(20, help="translations kept per source phrase, best first (0: all)")
    log_scores: bool = parameter(False, help="the table holds log scores, not probabilities")


class PhraseTableFeature(Feature, PhraseSource):
    """Proposes translations from a Moses phrase table; its scores are the table's (logged) columns."""

    default_label = "TranslationModel"
    parameters = PhraseTableParameters

    def __init__(self, name: str, table: PhraseTable, table_limit: int = 20) -> None:
        super().__init__(name, table.num_scores)
        self.table = table
        self.table_limit = table_limit

    @classmethod
    def check_config(cls, name: str, params: PhraseTableParameters, system: SystemConfig) -> None:
        if params.table_limit < 0:
            raise PysmtError(f"feature {name}: table-limit must be 0 (keep all) or more, not {params.table_limit}")
        found = check_phrase_table(params.path, log_scores=params.log_scores)
        if params.num_features not in (None, found) and found is not None:
            raise PysmtError(f"feature {name}: num-features={params.num_features} but {params.path} has {found} scores")

    @classmethod
    def from_config(cls, name: str, params: PhraseTableParameters, system: SystemConfig) -> PhraseTableFeature:
        table = PhraseTable(params.path, log_scores=params.log_scores)
        if params.num_features not in (None, table.num_scores):
            raise PysmtError(
                f"feature {name}: num-features={params.num_features} but {table.path} has {table.num_scores} scores"
            )
        return cls(name, table, params.table_limit)

    def translations(self, source: str) -> list[PhrasePair]:
        """Every target side of ``source`` (unscored, unpruned), in table order."""
        return [
            PhrasePair(
                source,
                entry.target,
                table=self.name,
                table_scores=entry.scores,
                alignment=entry.alignment,
                entry=entry.row,
            )
            for entry in self.table.lookup(source)
        ]

    def core_table(self) -> _core.PhraseTableView:
        return self.table.view

    def pair(self, entry: int, source: str) -> PhrasePair:
        found = self.table.entry(entry)
        return PhrasePair(
            source, found.target, table=self.name, table_scores=found.scores, alignment=found.alignment, entry=entry
        )

    def evaluate_in_isolation(self, phrases: Sequence[PhrasePair]) -> tuple[np.ndarray | None, np.ndarray | None]:
        scores = np.zeros((len(phrases), self.num_scores))
        for k, pair in enumerate(phrases):
            if pair.table == self.name:
                scores[k] = pair.table_scores
        return scores, None
