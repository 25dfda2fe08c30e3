"""The phrase table as a feature: it proposes the phrase pairs and scores them with the table's columns.

Moses name: ``PhraseDictionaryMemory``. Parameters: ``path`` (text or gzip, or a binary table
folder written by ``pysmt binarize``, made with the same ``log-scores``), ``num-features``
(score columns), ``table-limit`` (default 20; 0 keeps all), ``log-scores`` (true when the table
already stores log scores instead of probabilities).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from pysmt import _core
from pysmt.config import SystemConfig
from pysmt.errors import PysmtError
from pysmt.features.base import Feature, Parameters, PhraseSource, require_param
from pysmt.models.phrase_table import PhraseTable, check_phrase_table
from pysmt.phrases import PhrasePair


class PhraseTableFeature(Feature, PhraseSource):
    """Proposes translations from a Moses phrase table; its scores are the table's (logged) columns."""

    default_label = "TranslationModel"
    parameters: ClassVar[dict[str, type]] = {"path": Path, "num-features": int, "table-limit": int, "log-scores": bool}

    def __init__(self, name: str, table: PhraseTable, table_limit: int = 20) -> None:
        super().__init__(name, table.num_scores)
        self.table = table
        self.table_limit = table_limit

    @classmethod
    def check_config(cls, name: str, params: Parameters, system: SystemConfig) -> None:
        super().check_config(name, params, system)
        check_phrase_table(require_param(params, "path", name), log_scores=params.get("log-scores", False))

    @classmethod
    def from_config(cls, name: str, params: dict[str, Any], system: SystemConfig) -> PhraseTableFeature:
        table = PhraseTable(require_param(params, "path", name), log_scores=params.get("log-scores", False))
        declared = params.get("num-features", table.num_scores)
        if declared != table.num_scores:
            raise PysmtError(f"feature {name}: num-features={declared} but {table.path} has {table.num_scores} scores")
        limit = params.get("table-limit", 20)
        if limit < 0:
            raise PysmtError(f"feature {name}: table-limit must be 0 (keep all) or more, not {limit}")
        return cls(name, table, limit)

    def translations(self, source: str) -> list[PhrasePair]:
        """Every target side of ``source`` (unscored, unpruned), in table order."""
        return [PhrasePair(source, entry.target, table=self.name, table_scores=entry.scores, alignment=entry.alignment,
                           entry=entry.row) for entry in self.table.lookup(source)]

    def core_table(self) -> _core.PhraseTableView:
        return self.table.view

    def pair(self, entry: int, source: str) -> PhrasePair:
        found = self.table.entry(entry)
        return PhrasePair(source, found.target, table=self.name, table_scores=found.scores, alignment=found.alignment,
                          entry=entry)

    def evaluate(self, phrases: Sequence[PhrasePair]) -> tuple[np.ndarray | None, np.ndarray | None]:
        scores = np.zeros((len(phrases), self.num_scores))
        for k, pair in enumerate(phrases):
            if pair.table == self.name:
                scores[k] = pair.table_scores
        return scores, None
