"""The decoder features: ``rnn`` (log p(target | source) by the encoder-decoder) and ``wp``.

Both find the model directory from their ``model`` parameter, by default ``rnn/`` beside the
system's config (where ``pysmt rnn train --out SYSTEM/rnn`` puts it), so ``pysmt decode
--features rnn,wp`` works on a system with a trained model; elsewhere ``model = "DIR"`` in the
feature's ``[[feature]]`` section or ``--param rnn.model=DIR`` names it.

``rnn`` is a per-sentence feature (``context_free = False``): the decoder hands it every
translation option of a sentence at once, and it scores the pairs it has not seen before in one
sorted, padded batch ("buffered phrase batching"); scores are cached across sentences.

Scores of a binary phrase table's pairs stored beforehand by the same model (``pysmt rnn score
--phrase-table SYSTEM-bin/TABLE``: a :class:`~pysmt.plugin.StoredScores` column) are read instead: the
decoder takes them for the options they cover and asks the network only about the rest (other
tables' pairs, unknown words), so decoding with the RNN costs what decoding without it does.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from pysmt.neural import coverage_warning
from pysmt.plugin import (Feature, Parameters, PhrasePair, PysmtError, SystemConfig, TranslationOption, WordScores,
                          stored_scores)
from rnn_feature.store import TARGET_VOCAB, resolve_device, stored_by
from rnn_feature.vocabulary import Shortlist

if TYPE_CHECKING:
    import torch

#: Cached pair scores kept across sentences before the cache is emptied.
CACHE_LIMIT = 2_000_000


def model_directory(name: str, params: Parameters, system: SystemConfig) -> Path:
    """The ``model`` parameter (made absolute, and filled with ``rnn/`` beside the config when that exists)."""
    if "model" not in params:
        raise PysmtError(f"feature {name}: no RNN model: {system.directory / 'rnn'} does not exist; train one there "
                         f"with `pysmt rnn train --phrase-table TABLE --out {system.directory / 'rnn'}`, or name its "
                         f"folder with model = \"DIR\" in the feature's [[feature]] section or "
                         f"--param {name}.model=DIR")
    return Path(params["model"])


class RnnFeature(Feature):
    """``log p(target phrase | source phrase)`` by the RNN Encoder-Decoder: one score."""

    default_label: ClassVar[str] = "RNN"
    context_free: ClassVar[bool] = False
    parameters: ClassVar[dict[str, type]] = {"model": Path, "device": str, "batch-size": int}
    default_paths: ClassVar[dict[str, str]] = {"model": "rnn"}

    def __init__(self, name: str, directory: Path, device: str | torch.device = "auto", batch_size: int = 512) -> None:
        super().__init__(name, 1)
        from rnn_feature.store import load_model

        self.model, self.source, self.target = load_model(directory, device)
        self.batch_size = batch_size
        self.directory = directory
        self.cache: dict[tuple[str, tuple[str, ...]], float] = {}
        self.coverage_checked = False
        #: Scores of phrase tables' entries stored by this model, by phrase-table feature name (:meth:`use_stored`).
        self.stored: dict[str, np.ndarray] = {}

    @classmethod
    def check_config(cls, name: str, params: Parameters, system: SystemConfig) -> None:
        from rnn_feature.store import check_model

        directory = model_directory(name, params, system)
        if params.get("batch-size", 512) < 1:
            raise PysmtError(f"feature {name}: batch-size must be at least 1, not {params['batch-size']}")
        resolve_device(params.get("device", "auto"), f"feature {name}: device =")
        check_model(directory)

    @classmethod
    def from_config(cls, name: str, params: Parameters, system: SystemConfig) -> RnnFeature:
        device = resolve_device(params.get("device", "auto"), f"feature {name}: device =")
        feature = cls(name, model_directory(name, params, system), device, params.get("batch-size", 512))
        feature.use_stored(system)
        return feature

    def use_stored(self, system: SystemConfig) -> None:
        """Take the scores this model stored with the system's binary phrase tables; say on stderr when a table
        stores another model's (they are not used)."""
        made_by = stored_by(self.directory)
        for spec in system.features:
            path = Path(str(spec.params.get("path", "")))
            if spec.type != "phrase-table" or not path.is_dir():
                continue
            for name, (values, record) in stored_scores(path).items():
                if record.get("made_by", {}).get("feature") != "rnn" or record.get("scores") != 1:
                    continue
                if record["made_by"] == made_by:
                    self.stored[spec.name] = values
                else:
                    print(f"feature {self.name}: the RNN scores stored in {path} ({name}) were made by another model "
                          f"than {self.directory}; they are not used (store this model's with pysmt rnn score)",
                          file=sys.stderr, flush=True)

    def stored_scores(self, table: str) -> np.ndarray | None:
        return self.stored.get(table)

    def evaluate(self, phrases: Sequence[PhrasePair] | Sequence[TranslationOption]
                 ) -> tuple[np.ndarray | None, np.ndarray | None]:
        from rnn_feature.scoring import score_phrases

        pairs = [option.pair if isinstance(option, TranslationOption) else option for option in phrases]
        found = np.full(len(pairs), np.nan)  # stored scores first
        for k, pair in enumerate(pairs):
            stored = self.stored.get(pair.table or "") if pair.entry >= 0 else None
            if stored is not None:
                found[k] = stored[pair.entry, 0]
        keys = [(pair.source, tuple(pair.target)) for pair in pairs]
        if not self.coverage_checked:
            self.check_coverage(keys)
        asked = [key for key, value in zip(keys, found.tolist()) if value != value]
        missing = list(dict.fromkeys(key for key in asked if key not in self.cache))
        if missing:
            if len(self.cache) + len(missing) > CACHE_LIMIT:
                self.cache.clear()
            scores = score_phrases(self.model, self.source, self.target,
                                   [(source.split(), target) for source, target in missing], self.batch_size)
            self.cache.update(zip(missing, scores.tolist()))
        return np.array([[value if value == value else self.cache[key]] for key, value in zip(keys, found.tolist())]), \
            None


    def check_coverage(self, keys: Sequence[tuple[str, tuple[str, ...]]]) -> None:
        """Warn once (on stderr) when the model knows few of the first phrase pairs' words, on either side
        (an RNN trained in the other direction knows a quarter of them)."""
        sources = [w for source, _ in keys for w in source.split()]
        targets = [w for _, target in keys for w in target]
        for words, vocabulary, what in ((sources, self.source, "source"), (targets, self.target, "target")):
            if len(words) >= 10:
                self.coverage_checked = True
                warning = coverage_warning(self.name, words, vocabulary, f"first phrase pairs' {what} words",
                                           self.directory)
                if warning:
                    print(warning, file=sys.stderr, flush=True)


class ShortlistPenaltyFeature(Feature):
    """The paper's WP: minus the number of target words outside the networks' target shortlist."""

    default_label: ClassVar[str] = "WP"
    parameters: ClassVar[dict[str, type]] = {"model": Path, "shortlist": Path}
    default_paths: ClassVar[dict[str, str]] = {"model": "rnn"}

    def __init__(self, name: str, shortlist: Shortlist) -> None:
        super().__init__(name, 1)
        self.shortlist = shortlist

    @classmethod
    def check_config(cls, name: str, params: Parameters, system: SystemConfig) -> None:
        cls.shortlist_path(name, params, system)

    @classmethod
    def shortlist_path(cls, name: str, params: Parameters, system: SystemConfig) -> Path:
        """The ``shortlist`` parameter, else the RNN model's target vocabulary."""
        if "shortlist" in params:
            return Path(params["shortlist"])
        return model_directory(name, params, system) / TARGET_VOCAB

    @classmethod
    def from_config(cls, name: str, params: Parameters, system: SystemConfig) -> ShortlistPenaltyFeature:
        return cls(name, Shortlist.load(cls.shortlist_path(name, params, system)))

    def evaluate(self, phrases: Sequence[PhrasePair]) -> tuple[np.ndarray | None, np.ndarray | None]:
        counts = [sum(word not in self.shortlist for word in pair.target) for pair in phrases]
        return -np.array(counts, dtype=np.float64)[:, None], None

    def core_scores(self) -> WordScores:
        """:meth:`evaluate`, computed by the decoder's compiled option builder: -1 per target word outside the
        shortlist (its two symbols are no words)."""
        words = self.shortlist.words[2:]
        return WordScores(words=words, values=[0.0] * len(words), fallback=-1.0, estimate=False)
