"""The KenLM n-gram language model feature (Moses' ``KENLM``).

Scores are KenLM's log10 probabilities times ln 10. The sentence starts in the ``<s>`` context and
``</s>`` is scored when the source is fully covered. The future-cost estimate of a phrase is its
probability without left context (lower-order n-grams for its first words), as Moses estimates it.
Words the LM does not know get its ``<unk>`` probability. KenLM's state is minimal (only the
context the model can still use), so equal states mean equal futures and recombination is exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pysmt import _core
from pysmt.config import SystemConfig
from pysmt.errors import PysmtError
from pysmt.features.base import CompiledScores, CompiledTwin, StatefulFeature
from pysmt.features.parameters import parameter
from pysmt.models.language_model import check_model_file, load_kenlm
from pysmt.phrases import PhrasePair, Sentence, TranslationOption

#: A KenLM state as the Python search sees it: its length, words and backoffs as bytes.
State = bytes


@dataclass(frozen=True, kw_only=True)
class KenLMParameters:
    path: Path = parameter(help="the model: ARPA (plain or compressed) or a KenLM binary")
    order: int | None = parameter(None, help="its order (checked against the model)")
    num_features: int = parameter(1, help="1 (Moses' OOV feature is not supported)")


class KenLMFeature(StatefulFeature[State], CompiledTwin[_core.KenLMTwin], CompiledScores):
    default_label = "LM"
    parameters = KenLMParameters

    def __init__(self, name: str, model: _core.LanguageModel) -> None:
        super().__init__(name, 1)
        self.model = model
        self.begin = model.begin_state()
        #: (state, target phrase) -> (scores, new state): search applies the same phrase to the same
        #: LM context many times (hypotheses differing only in coverage); cleared per sentence.
        self.cache: dict[tuple[State, tuple[str, ...]], tuple[tuple[float], State]] = {}

    @classmethod
    def check_config(cls, name: str, params: KenLMParameters, system: SystemConfig) -> None:
        if params.num_features != 1:
            raise PysmtError(f"feature {name}: only num-features=1 is supported (no OOV feature)")
        check_model_file(params.path)

    @classmethod
    def from_config(cls, name: str, params: KenLMParameters, system: SystemConfig) -> KenLMFeature:
        model = load_kenlm(params.path)
        if params.order not in (None, model.order):
            raise PysmtError(f"feature {name}: order={params.order} but {params.path} is a {model.order}-gram model")
        return cls(name, model)

    def evaluate_in_isolation(self, phrases: Sequence[PhrasePair]) -> tuple[None, np.ndarray]:
        estimate = self.model.estimate
        estimates = [estimate(list(pair.target)) for pair in phrases]
        return None, np.array(estimates, dtype=np.float64).reshape(len(phrases), 1)

    def initial_state(self, sentence: Sentence) -> State:
        return self.begin

    def extend(self, state: State, option: TranslationOption) -> tuple[tuple[float], State]:
        key = (state, option.target)
        cached = self.cache.get(key)
        if cached is None:
            score, new_state = self.model.extend(state, list(option.target))
            cached = self.cache[key] = ((score,), new_state)
        return cached

    def end_sentence(self) -> None:
        self.cache.clear()

    def final(self, state: State) -> tuple[float]:
        return (self.model.final(state),)

    def core_feature(self) -> _core.KenLMTwin:
        return _core.KenLMTwin(self.model)

    def core_scores(self) -> _core.LanguageModelEstimates:
        return _core.LanguageModelEstimates(self.model)
