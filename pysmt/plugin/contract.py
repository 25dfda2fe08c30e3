"""The feature contract, as :mod:`pysmt.plugin` offers it: import these names from ``pysmt.plugin``
(which loads this module on first use; its docstring says what each name is for)."""

from pathlib import Path

from pysmt._contexts import ContextTable
from pysmt._core import WordScores
from pysmt.config import SystemConfig
from pysmt.errors import FeatureError, PysmtError
from pysmt.features.base import (
    FORBIDDEN,
    BatchedStatefulFeature,
    CompiledScorer,
    CompiledScores,
    Feature,
    ForcesOutput,
    StatefulFeature,
    StoredColumns,
    StoredScores,
    TranslationFeature,
)
from pysmt.features.coverage import table_coverage_warnings
from pysmt.features.parameters import NoParameters, parameter
from pysmt.models.binary_table import stored_scores
from pysmt.models.binary_writer import ScoreWriter
from pysmt.phrases import PhrasePair, Sentence, TranslationOption

__all__ = [
    "FORBIDDEN",
    "BatchedStatefulFeature",
    "CompiledScorer",
    "CompiledScores",
    "ContextTable",
    "Feature",
    "FeatureError",
    "ForcesOutput",
    "NoParameters",
    "Path",
    "PhrasePair",
    "PysmtError",
    "ScoreWriter",
    "Sentence",
    "StatefulFeature",
    "TranslationFeature",
    "StoredColumns",
    "StoredScores",
    "SystemConfig",
    "TranslationOption",
    "WordScores",
    "parameter",
    "stored_scores",
    "table_coverage_warnings",
]
