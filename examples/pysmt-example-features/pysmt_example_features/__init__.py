"""Example pysmt feature plugins, templates for your own (see docs/writing-a-feature.md).

* ``length-ratio`` (stateless, context-free): log of target length over source length of each
  phrase pair, so tuning can prefer longer or shorter phrases.
* ``repeated-word`` (stateful): -1 for every target word equal to the word before it, across phrase
  boundaries too; its state is the last target word.
* ``repeated-word-batched``: the same scores through the array interface that the search calls
  (``start`` and ``score_batch``), the template for a feature that scores whole batches at once,
  such as a neural language model. Its states are ids into a per-sentence list of last words.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from pysmt.plugin import (
    BatchedStatefulFeature,
    Feature,
    NoParameters,
    PhrasePair,
    Sentence,
    StatefulFeature,
    SystemConfig,
    TranslationOption,
)


class LengthRatioFeature(Feature):
    default_label = "LengthRatio"

    @classmethod
    def from_config(cls, name: str, params: NoParameters, system: SystemConfig) -> LengthRatioFeature:
        return cls(name, 1)

    def default_weights(self) -> list[float]:
        return [0.0]  # neutral until tuned

    def evaluate_in_isolation(self, pairs: Sequence[PhrasePair]) -> tuple[np.ndarray, None]:
        ratios = [[math.log(len(p.target) / len(p.source.split()))] for p in pairs]
        return np.array(ratios, dtype=np.float64), None  # (len(pairs), num_scores) floats; no estimates


class RepeatedWordFeature(StatefulFeature):
    default_label = "RepeatedWord"

    @classmethod
    def from_config(cls, name: str, params: NoParameters, system: SystemConfig) -> RepeatedWordFeature:
        return cls(name, 1)

    def default_weights(self) -> list[float]:
        return [1.0]

    def initial_state(self, sentence: Sentence) -> str | None:
        return None

    def extend(self, state: str | None, option: TranslationOption) -> tuple[tuple[float], str | None]:
        repeats = 0
        for word in option.target:
            repeats += word == state
            state = word
        return (-float(repeats),), state


class BatchedRepeatedWordFeature(BatchedStatefulFeature):
    default_label = "RepeatedWord"
    buffer_size = 1000  # the most requests the search sends in one call

    @classmethod
    def from_config(cls, name: str, params: NoParameters, system: SystemConfig) -> BatchedRepeatedWordFeature:
        return cls(name, 1)

    def default_weights(self) -> list[float]:
        return [1.0]

    def start(self, sentence: Sentence, options: Sequence[TranslationOption]) -> int:
        self.targets = [option.target for option in options]  # requests name options by index
        self.last_words: list[str | None] = [None]  # state id -> last target word; 0: the empty hypothesis
        self.ids: dict[str | None, int] = {None: 0}
        return 0

    def score_batch(self, states: np.ndarray, options: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        scores = np.zeros((len(states), 1))
        new_states = np.zeros(len(states), dtype=np.int64)
        for k, (state, option) in enumerate(zip(states.tolist(), options.tolist())):
            last, repeats = self.last_words[state], 0
            for word in self.targets[option]:
                repeats += word == last
                last = word
            scores[k, 0] = -float(repeats)  # nothing more at the sentence end (ends[k])
            new_states[k] = self.ids.setdefault(last, len(self.last_words))
            if new_states[k] == len(self.last_words):
                self.last_words.append(last)
        return scores, new_states
