"""The KenLM n-gram language model feature (Moses' ``KENLM``).

Scores are KenLM's log10 probabilities times ln 10. The sentence starts in the ``<s>`` context and
``</s>`` is scored when the source is fully covered. The future-cost estimate of a phrase is its
probability without left context (lower-order n-grams for its first words), as Moses estimates it.
Words the LM does not know get its ``<unk>`` probability. KenLM's state is minimal (only the
context the model can still use), so equal states mean equal futures and recombination is exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import kenlm
import numpy as np

from pysmt.config import SystemConfig
from pysmt.errors import PysmtError
from pysmt.features.base import StatefulFeature, require_param
from pysmt.models.language_model import LOG10_TO_LN, load_kenlm
from pysmt.search.hypothesis import Hypothesis
from pysmt.search.options import PhrasePair, Sentence, TranslationOption


class KenLMFeature(StatefulFeature):
    default_label = "LM"
    parameters: ClassVar[dict[str, type]] = {"path": Path, "order": int, "num-features": int}

    def __init__(self, name: str, model: kenlm.Model) -> None:
        super().__init__(name, 1)
        self.model = model
        self.begin = kenlm.State()
        model.BeginSentenceWrite(self.begin)
        #: (state, target phrase) -> (scores, new state): search applies the same phrase to the same
        #: LM context many times (hypotheses differing only in coverage); cleared per sentence.
        self.cache: dict[tuple[kenlm.State, tuple[str, ...]], tuple[tuple[float], kenlm.State]] = {}

    @classmethod
    def from_config(cls, name: str, params: dict[str, Any], system: SystemConfig) -> KenLMFeature:
        model = load_kenlm(require_param(params, "path", name))
        order = params.get("order", model.order)
        if order != model.order:
            raise PysmtError(f"feature {name}: order={order} but {params['path']} is a {model.order}-gram model")
        if params.get("num-features", 1) != 1:
            raise PysmtError(f"feature {name}: only num-features=1 is supported (no OOV feature)")
        return cls(name, model)

    def evaluate(self, phrases: Sequence[PhrasePair]) -> tuple[None, np.ndarray]:
        score = self.model.score
        estimates = [[score(" ".join(pair.target), bos=False, eos=False) * LOG10_TO_LN] for pair in phrases]
        return None, np.array(estimates, dtype=np.float64).reshape(len(phrases), 1)

    def initial_state(self, sentence: Sentence) -> kenlm.State:
        return self.begin

    def extend(self, state: kenlm.State, hypothesis: Hypothesis,
               option: TranslationOption) -> tuple[tuple[float], kenlm.State]:
        key = (state, option.target)
        cached = self.cache.get(key)
        if cached is None:
            base_score = self.model.BaseScore
            total = 0.0
            for word in option.target:
                out = kenlm.State()
                total += base_score(state, word, out)
                state = out
            cached = self.cache[key] = ((total * LOG10_TO_LN,), state)
        return cached

    def end_sentence(self) -> None:
        self.cache.clear()

    def final(self, state: kenlm.State) -> tuple[float]:
        return (self.model.BaseScore(state, "</s>", kenlm.State()) * LOG10_TO_LN,)
