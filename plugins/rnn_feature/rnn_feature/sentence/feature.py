"""The features of complete translations: ``sentence`` (a left-to-right sentence model) and ``sentence-r2l``
(one trained with ``--right-to-left``), each two scores: log p(e | f) of the whole translation and its
number of subwords (the count lets the tuner counter the model's preference for short translations).

They re-rank each line's n-best list after the search (:class:`pysmt.plugin.TranslationFeature`): the
decoder hands them the line's distinct translations at once. Their models are found as the ``rnn``
feature's is: by default ``sentence/`` (``sentence-r2l/``) beside the system's config, where
``pysmt sentence train --system SYSTEM --out SYSTEM/sentence`` puts one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np

from pysmt.plugin import PysmtError, Sentence, SystemConfig, TranslationFeature, parameter
from pysmt.plugin.neural import resolve_device


@dataclass(frozen=True, kw_only=True)
class SentenceParameters:
    model: Path = parameter(
        Path("sentence"), help="the model folder: train one with `pysmt sentence train --system SYSTEM --out DIR`"
    )
    device: str = parameter("auto", help="cpu, cuda[:N] or auto (a GPU when there is one)")
    batch_size: int = parameter(256, help="prefixes of the hypotheses' prefix tree scored in one batch")


@dataclass(frozen=True, kw_only=True)
class RightToLeftParameters(SentenceParameters):
    model: Path = parameter(
        Path("sentence-r2l"),
        help="the model folder: train one with `pysmt sentence train --system SYSTEM --right-to-left --out DIR`",
    )


class SentenceFeature(TranslationFeature):
    """log p(e | f) of a complete translation by the attention encoder-decoder, and its subword count."""

    default_label: ClassVar[str] = "Sentence"
    parameters: ClassVar[type] = SentenceParameters
    right_to_left: ClassVar[bool] = False

    def __init__(self, name: str, params: SentenceParameters) -> None:
        super().__init__(name, 2)
        from rnn_feature.sentence.scoring import SentenceScorer

        self.scorer = SentenceScorer(params.model, resolve_device(params.device), params.batch_size)

    @classmethod
    def check_config(cls, name: str, params: SentenceParameters, system: SystemConfig) -> None:
        from rnn_feature.sentence.store import MODEL, load_checkpoint

        if params.batch_size < 1:
            raise PysmtError(f"feature {name}: batch-size must be at least 1, not {params.batch_size}")
        resolve_device(params.device, f"feature {name}: device =")
        state = load_checkpoint(params.model / MODEL, mapped=True)
        if bool(state["hyperparameters"].get("right_to_left")) != cls.right_to_left:
            trained, wanted = (
                ("right-to-left", "sentence-r2l") if not cls.right_to_left else ("left-to-right", "sentence")
            )
            raise PysmtError(f"feature {name}: {params.model} holds a {trained} model; use it as feature {wanted}")

    @classmethod
    def from_config(cls, name: str, params: SentenceParameters, system: SystemConfig) -> SentenceFeature:
        return cls(name, params)

    def default_weights(self) -> list[float]:
        """0.1 on the log-probability (a tenth of a language model's weight, per the scale of natural-log
        scores over subwords), and 0.15 per subword: about the mean negative log-probability of a subword times
        0.1, so the feature starts out preferring translations the model finds better than average per subword,
        not shorter ones."""
        return [0.1, 0.15]

    def score_translations(self, sentence: Sentence, translations: Sequence[tuple[str, ...]]) -> np.ndarray:
        return self.scorer.score(sentence.words, translations)


class RightToLeftFeature(SentenceFeature):
    """The same on a model trained on reversed targets (``pysmt sentence train --right-to-left``)."""

    default_label: ClassVar[str] = "SentenceR2L"
    parameters: ClassVar[type] = RightToLeftParameters
    right_to_left: ClassVar[bool] = True
