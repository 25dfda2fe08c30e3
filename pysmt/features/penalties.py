"""Word, phrase and unknown-word penalties, with Moses' values.

* ``WordPenalty``: minus the number of target words (with Moses' usual weight -1 it rewards length).
* ``PhrasePenalty``: 1 per phrase pair.
* ``UnknownWordPenalty``: -100 (Moses' floor of log 0) for an unknown word passed through; not tuned.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pysmt import _core
from pysmt.config import SystemConfig
from pysmt.features.base import CompiledScores, Feature
from pysmt.features.parameters import ScoreCount
from pysmt.models.scores import LOWEST_SCORE
from pysmt.phrases import PhrasePair


class WordPenaltyFeature(Feature, CompiledScores):
    default_label = "WordPenalty"
    parameters = ScoreCount

    @classmethod
    def from_config(cls, name: str, params: ScoreCount, system: SystemConfig) -> WordPenaltyFeature:
        return cls(name, 1)

    def evaluate_in_isolation(self, phrases: Sequence[PhrasePair]) -> tuple[np.ndarray, None]:
        return -np.array([[len(pair.target)] for pair in phrases], dtype=np.float64), None

    def core_scores(self) -> _core.WordPenaltyScores:
        return _core.WordPenaltyScores()


class PhrasePenaltyFeature(Feature, CompiledScores):
    default_label = "PhrasePenalty"
    parameters = ScoreCount

    @classmethod
    def from_config(cls, name: str, params: ScoreCount, system: SystemConfig) -> PhrasePenaltyFeature:
        return cls(name, 1)

    def evaluate_in_isolation(self, phrases: Sequence[PhrasePair]) -> tuple[np.ndarray, None]:
        return np.ones((len(phrases), 1)), None

    def core_scores(self) -> _core.PhrasePenaltyScores:
        return _core.PhrasePenaltyScores()


class UnknownWordPenaltyFeature(Feature, CompiledScores):
    default_label = "UnknownWordPenalty"
    parameters = ScoreCount
    tunable = False

    @classmethod
    def from_config(cls, name: str, params: ScoreCount, system: SystemConfig) -> UnknownWordPenaltyFeature:
        return cls(name, 1)

    def evaluate_in_isolation(self, phrases: Sequence[PhrasePair]) -> tuple[np.ndarray, None]:
        return np.array([[LOWEST_SCORE if pair.unknown else 0.0] for pair in phrases]), None

    def core_scores(self) -> _core.UnknownWordScores:
        return _core.UnknownWordScores(LOWEST_SCORE)
