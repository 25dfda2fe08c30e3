"""The decoder features: ``rnn`` (log p(target | source) by the encoder-decoder) and ``wp``.

Both find the model directory from their ``model`` parameter, by default ``rnn/`` beside the
system's config (where ``pysmt rnn train --out SYSTEM/rnn`` puts it), so ``pysmt decode
--features rnn,wp`` works on a system with a trained model.

``rnn`` is a per-sentence feature (``context_free = False``): the decoder hands it every
translation option of a sentence at once, and it scores the pairs it has not seen before in one
sorted, padded batch ("buffered phrase batching"); scores are cached across sentences.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from pysmt.config import SystemConfig
from pysmt.features.base import Feature
from pysmt.search.options import PhrasePair, TranslationOption
from rnn_feature.store import TARGET_VOCAB
from rnn_feature.vocabulary import Shortlist

#: Cached pair scores kept across sentences before the cache is emptied.
CACHE_LIMIT = 2_000_000


def model_directory(params: dict[str, Any], system: SystemConfig) -> Path:
    return Path(params["model"]) if "model" in params else system.directory / "rnn"


class RnnFeature(Feature):
    """``log p(target phrase | source phrase)`` by the RNN Encoder-Decoder: one score."""

    default_label: ClassVar[str] = "RNN"
    context_free: ClassVar[bool] = False

    def __init__(self, name: str, directory: Path, device: str = "auto", batch_size: int = 512) -> None:
        super().__init__(name, 1)
        from rnn_feature.store import load_model

        self.model, self.source, self.target = load_model(directory, device)
        self.batch_size = batch_size
        self.cache: dict[tuple[str, tuple[str, ...]], float] = {}

    @classmethod
    def from_config(cls, name: str, params: dict[str, Any], system: SystemConfig) -> RnnFeature:
        return cls(name, model_directory(params, system), str(params.get("device", "auto")),
                   int(params.get("batch-size", 512)))

    def evaluate(self, phrases: Sequence[PhrasePair] | Sequence[TranslationOption]
                 ) -> tuple[np.ndarray | None, np.ndarray | None]:
        from rnn_feature.scoring import score_phrases

        pairs = [option.pair if isinstance(option, TranslationOption) else option for option in phrases]
        keys = [(pair.source, tuple(pair.target)) for pair in pairs]
        missing = list(dict.fromkeys(key for key in keys if key not in self.cache))
        if missing:
            if len(self.cache) + len(missing) > CACHE_LIMIT:
                self.cache.clear()
            scores = score_phrases(self.model, self.source, self.target,
                                   [(source.split(), target) for source, target in missing], self.batch_size)
            self.cache.update(zip(missing, scores.tolist()))
        return np.array([[self.cache[key]] for key in keys]), None


class ShortlistPenaltyFeature(Feature):
    """The paper's WP: minus the number of target words outside the networks' target shortlist."""

    default_label: ClassVar[str] = "WP"

    def __init__(self, name: str, shortlist: Shortlist) -> None:
        super().__init__(name, 1)
        self.shortlist = shortlist

    @classmethod
    def from_config(cls, name: str, params: dict[str, Any], system: SystemConfig) -> ShortlistPenaltyFeature:
        path = Path(params["shortlist"]) if "shortlist" in params else model_directory(params, system) / TARGET_VOCAB
        return cls(name, Shortlist.load(path))

    def evaluate(self, phrases: Sequence[PhrasePair] | Sequence[TranslationOption]
                 ) -> tuple[np.ndarray | None, np.ndarray | None]:
        counts = [sum(word not in self.shortlist for word in pair.target) for pair in phrases]  # type: ignore[union-attr]
        return -np.array(counts, dtype=np.float64)[:, None], None
