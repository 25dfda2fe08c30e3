"""Example pysmt feature plugins, templates for your own (see docs/writing-a-feature.md).

* ``length-ratio`` (stateless, context-free): log of target length over source length of each
  phrase pair, so tuning can prefer longer or shorter phrases.
* ``repeated-word`` (stateful): -1 for every target word equal to the word before it, across phrase
  boundaries too; its state is the last target word.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from pysmt.features.base import Feature, StatefulFeature


class LengthRatioFeature(Feature):
    default_label = "LengthRatio"

    @classmethod
    def from_config(cls, name: str, params: dict[str, Any], system: Any) -> "LengthRatioFeature":
        return cls(name, 1)

    def default_weights(self) -> list[float]:
        return [0.0]  # neutral until tuned

    def evaluate(self, phrases: Sequence[Any]) -> tuple[np.ndarray, None]:
        ratios = [[math.log(len(p.target) / len(p.source.split()))] for p in phrases]
        return np.array(ratios), None


class RepeatedWordFeature(StatefulFeature):
    default_label = "RepeatedWord"

    @classmethod
    def from_config(cls, name: str, params: dict[str, Any], system: Any) -> "RepeatedWordFeature":
        return cls(name, 1)

    def default_weights(self) -> list[float]:
        return [1.0]

    def initial_state(self, sentence: Any) -> str | None:
        return None

    def extend(self, state: str | None, option: Any) -> tuple[tuple[float], str | None]:
        repeats = 0
        for word in option.target:
            repeats += word == state
            state = word
        return (-float(repeats),), state
