"""The decoder features: ``rnn`` (log p(target | source) by the encoder-decoder) and ``wp``.

Both find the model directory from their ``model`` parameter, by default ``rnn/`` beside the
system's config (where ``pysmt rnn train --out SYSTEM/rnn`` puts it), so ``pysmt decode
--features rnn,wp`` works on a system with a trained model; elsewhere ``model = "DIR"`` in the
feature's ``[[feature]]`` section or ``--param rnn.model=DIR`` names it.

``rnn`` is a per-sentence feature (``evaluate_with_source_context``): the decoder hands it every
translation option of a sentence at once, and it scores the pairs it has not seen before in one
sorted, padded batch ("buffered phrase batching"); scores are cached across sentences.

Scores of a binary phrase table's pairs stored beforehand by the same model (``pysmt rnn score
--phrase-table SYSTEM-bin/TABLE``: a :class:`~pysmt.plugin.StoredScores` column) are read instead: the
decoder takes them for the options they cover and asks the network only about the rest (other
tables' pairs, unknown words), so decoding with the RNN costs what decoding without it does.

``mode`` says where stored scores enter the model. ``search`` (the default): in the search, after the
table limit chose the options, as the network's scores do. ``column``: as an extra column of the phrase
table (Moses' semantics, the paper's way: a :class:`~pysmt.plugin.StoredColumns` column), scored with the
table's pairs in isolation, so that they take part, with the feature's weight, in the table limit's
ranking; pairs without stored scores (other tables', unknown words) get the network's scores in the search,
as under ``search``. A column must exist: ``mode = "column"`` without this model's scores stored with
any phrase table is an error naming the table and the ``pysmt rnn score`` command.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from pysmt.plugin import (
    Feature,
    PhrasePair,
    PysmtError,
    SystemConfig,
    TranslationOption,
    WordScores,
    parameter,
    stored_scores,
    table_coverage_warnings,
)
from pysmt.plugin.neural import coverage_warning
from rnn_feature.store import TARGET_VOCAB, resolve_device, stored_by
from rnn_feature.vocabulary import Shortlist

if TYPE_CHECKING:
    import torch

#: Cached pair scores kept across sentences before the cache is emptied.
CACHE_LIMIT = 2_000_000

#: The weights the features start at when a config gives none (``--features rnn,wp``, ``pysmt tune``'s first
#: iteration), as Moses' features declare theirs: ``rnn``'s natural-log ``p(target phrase | source phrase)`` is
#: a translation model's column (Moses' TM columns: 0.2); ``wp``'s score is minus the words outside the
#: shortlist, so a small positive weight makes each such word cost a little (0.1: half a phrase penalty), against
#: the network's [UNK] probability, kinder than the rare word's own (README, WP).
RNN_WEIGHT, WP_WEIGHT = 0.2, 0.1


#: Where the stored scores enter the model (the ``mode`` parameter; the first is the default).
MODES = ("search", "column")

#: Where ``pysmt rnn train --out SYSTEM/rnn`` puts the model: the features' default.
MODEL_HELP = "the model folder: train one with `pysmt rnn train --phrase-table TABLE --out SYSTEM/rnn`"


@dataclass(frozen=True, kw_only=True)
class RnnParameters:
    model: Path = parameter(Path("rnn"), help=MODEL_HELP)
    device: str = parameter("auto", help="cpu, cuda[:N] or auto (a GPU when there is one)")
    batch_size: int = parameter(512, help="phrase pairs scored in one batch")
    mode: str = parameter(
        "search",
        help="search: scores enter after the table limit; column: the scores pysmt rnn score stored with a "
        "binary phrase table are its extra column, ranked by the table limit (Moses' semantics)",
    )


@dataclass(frozen=True, kw_only=True)
class ShortlistPenaltyParameters:
    model: Path | None = parameter(Path("rnn"), help=MODEL_HELP + " (its target shortlist is used)")
    shortlist: Path | None = parameter(None, help="a shortlist file, one word a line (instead of the model's)")


def stored_tables(system: SystemConfig) -> list[tuple[str, Path, list[tuple[str, np.ndarray, dict]]]]:
    """The system's phrase tables (feature name, path) with the RNN scores stored with them (their name, values
    and record; none for a text table)."""
    tables = []
    for spec in system.features:
        if spec.type != "phrase-table":
            continue
        path = Path(str(spec.params.get("path", "")))
        found = [
            (stored, values, record)
            for stored, (values, record) in (stored_scores(path).items() if path.is_dir() else [])
            if isinstance(record.get("made_by"), dict)
            and record["made_by"].get("feature") == "rnn"
            and record.get("scores") == 1
        ]
        tables.append((spec.name, path, found))
    return tables


def made_by_this(record: dict, made_by: dict[str, str]) -> bool:
    """Whether stored scores were made by this model (:func:`~rnn_feature.store.stored_by`); their record may say
    more (``pairs_for``: only the pairs of ``rnn score --pairs-for``'s files were scored, the others are NaN)."""
    return all(record["made_by"].get(key) == value for key, value in made_by.items())


class RnnFeature(Feature):
    """``log p(target phrase | source phrase)`` by the RNN Encoder-Decoder: one score."""

    default_label: ClassVar[str] = "RNN"
    parameters = RnnParameters

    def __init__(self, name: str, params: RnnParameters, device: torch.device) -> None:
        super().__init__(name, 1)
        from rnn_feature.store import load_model

        self.model, self.source, self.target = load_model(params.model, device)
        self.batch_size = params.batch_size
        self.directory = params.model
        self.mode = params.mode
        self.cache: dict[tuple[str, tuple[str, ...]], float] = {}
        self.coverage_checked = False
        #: Scores of phrase tables' entries stored by this model, by phrase-table feature name (:meth:`use_stored`).
        self.stored: dict[str, np.ndarray] = {}

    @classmethod
    def check_config(cls, name: str, params: RnnParameters, system: SystemConfig) -> None:
        from rnn_feature.store import check_model

        if params.batch_size < 1:
            raise PysmtError(f"feature {name}: batch-size must be at least 1, not {params.batch_size}")
        resolve_device(params.device, f"feature {name}: device =")
        if params.mode not in MODES:
            raise PysmtError(f"feature {name}: mode must be {' or '.join(MODES)}, not {params.mode!r}")
        check_model(params.model)
        if params.mode == "column":
            cls.check_column(name, params, system)
        target = Shortlist.load(params.model / TARGET_VOCAB).words[2:]  # most frequent first, after the symbols
        for warning in table_coverage_warnings(name, target, params.model, system):
            print(warning, file=sys.stderr, flush=True)

    @classmethod
    def check_column(cls, name: str, params: RnnParameters, system: SystemConfig) -> None:
        """Refuse ``mode = "column"`` when no phrase table stores this model's scores: Moses' column must exist."""
        made_by = stored_by(params.model)
        tables = stored_tables(system)
        if any(made_by_this(record, made_by) for _, _, found in tables for _, _, record in found):
            return
        if not tables:
            raise PysmtError(f"feature {name}: mode = column needs a phrase table, and the system has none")
        why = [
            f"{path} is a text table (binarize the system with pysmt binarize)"
            if not path.is_dir()
            else f"{path} stores another model's"
            if found
            else f"{path} stores none"
            for _, path, found in tables
        ]
        binary = [path for _, path, _ in tables if path.is_dir()]
        raise PysmtError(
            f"feature {name}: mode = column needs the scores of {params.model} stored with the phrase table "
            f"(its extra column), but {'; '.join(why)}: store them with pysmt rnn score --model {params.model} "
            f"--phrase-table {binary[0] if binary else 'SYSTEM-bin/TABLE'}"
        )

    def default_weights(self) -> list[float]:
        return [RNN_WEIGHT]

    @classmethod
    def from_config(cls, name: str, params: RnnParameters, system: SystemConfig) -> RnnFeature:
        feature = cls(name, params, resolve_device(params.device, f"feature {name}: device ="))
        feature.use_stored(system)
        return feature

    def use_stored(self, system: SystemConfig) -> None:
        """Take the scores this model stored with the system's binary phrase tables; say on stderr when a table
        stores another model's (they are not used)."""
        made_by = stored_by(self.directory)
        for table, path, found in stored_tables(system):
            for stored, values, record in found:
                if made_by_this(record, made_by):
                    self.stored[table] = values
                else:
                    print(
                        f"feature {self.name}: the RNN scores stored in {path} ({stored}) were made by another model "
                        f"than {self.directory}; they are not used (store this model's with pysmt rnn score)",
                        file=sys.stderr,
                        flush=True,
                    )

    def stored_scores(self, table: str) -> np.ndarray | None:
        """This model's scores stored with ``table``, read instead of the network's (``mode = "search"``)."""
        return self.stored.get(table) if self.mode == "search" else None

    def stored_columns(self, table: str) -> np.ndarray | None:
        """This model's scores stored with ``table`` as the table's extra column (``mode = "column"``)."""
        return self.stored.get(table) if self.mode == "column" else None

    def evaluate_with_source_context(self, options: Sequence[TranslationOption]) -> tuple[np.ndarray, None]:
        """A sentence's options scored in one batch (what the decoder asks, after the table limit)."""
        return self.score_pairs([option.pair for option in options]), None

    def score_pairs(self, pairs: Sequence[PhrasePair]) -> np.ndarray:
        """``log p(target | source)`` of each pair, as a (pairs x 1) array: stored scores where the pair's table
        has them, the cache's, and the network's for the others (those not seen before, in one batch)."""
        from rnn_feature.scoring import score_phrases

        found = np.full(len(pairs), np.nan)  # stored scores first
        for k, pair in enumerate(pairs):
            stored = self.stored.get(pair.table or "") if pair.entry >= 0 else None
            if stored is not None:
                found[k] = stored[pair.entry, 0]
        keys = [(pair.source, tuple(pair.target)) for pair in pairs]
        if not self.coverage_checked:  # on table pairs: unknown words are unknown to every model (and, with
            # mode = column, nearly all the network is asked about)
            self.check_coverage([key for key, pair in zip(keys, pairs) if not pair.unknown])
        asked = [key for key, value in zip(keys, found.tolist()) if value != value]
        missing = list(dict.fromkeys(key for key in asked if key not in self.cache))
        if missing:
            if len(self.cache) + len(missing) > CACHE_LIMIT:
                self.cache.clear()
            scores = score_phrases(
                self.model,
                self.source,
                self.target,
                [(source.split(), target) for source, target in missing],
                self.batch_size,
            )
            self.cache.update(zip(missing, scores.tolist()))
        return np.array([[value if value == value else self.cache[key]] for key, value in zip(keys, found.tolist())])

    def check_coverage(self, keys: Sequence[tuple[str, tuple[str, ...]]]) -> None:
        """Warn once (on stderr) when the model knows few of the first phrase pairs' words, on either side
        (an RNN trained in the other direction knows a quarter of them)."""
        sources = [w for source, _ in keys for w in source.split()]
        targets = [w for _, target in keys for w in target]
        for words, vocabulary, what in ((sources, self.source, "source"), (targets, self.target, "target")):
            if len(words) >= 10:
                self.coverage_checked = True
                warning = coverage_warning(
                    self.name, words, vocabulary, f"first phrase pairs' {what} words", self.directory
                )
                if warning:
                    print(warning, file=sys.stderr, flush=True)


class ShortlistPenaltyFeature(Feature):
    """The paper's WP: minus the number of target words outside the networks' target shortlist."""

    default_label: ClassVar[str] = "WP"
    parameters = ShortlistPenaltyParameters

    def __init__(self, name: str, shortlist: Shortlist) -> None:
        super().__init__(name, 1)
        self.shortlist = shortlist

    @classmethod
    def check_config(cls, name: str, params: ShortlistPenaltyParameters, system: SystemConfig) -> None:
        cls.shortlist_path(name, params, system)

    @classmethod
    def shortlist_path(cls, name: str, params: ShortlistPenaltyParameters, system: SystemConfig) -> Path:
        """The ``shortlist`` parameter, else the RNN model's target vocabulary."""
        if params.shortlist is not None:
            return params.shortlist
        if params.model is None:
            raise PysmtError(
                f'feature {name}: no shortlist: give shortlist = "FILE", or model = "DIR" (an RNN '
                f"model folder; {system.directory / 'rnn'} does not exist), in its section or with "
                f"--param {name}.shortlist=FILE"
            )
        return params.model / TARGET_VOCAB

    def default_weights(self) -> list[float]:
        return [WP_WEIGHT]

    @classmethod
    def from_config(
        cls, name: str, params: ShortlistPenaltyParameters, system: SystemConfig
    ) -> ShortlistPenaltyFeature:
        return cls(name, Shortlist.load(cls.shortlist_path(name, params, system)))

    def evaluate_in_isolation(self, phrases: Sequence[PhrasePair]) -> tuple[np.ndarray | None, np.ndarray | None]:
        counts = [sum(word not in self.shortlist for word in pair.target) for pair in phrases]
        return -np.array(counts, dtype=np.float64)[:, None], None

    def core_scores(self) -> WordScores:
        """:meth:`evaluate_in_isolation`, computed by the decoder's compiled option builder: -1 per target word
        outside the shortlist (its two symbols are no words)."""
        words = self.shortlist.words[2:]
        return WordScores(words=words, values=[0.0] * len(words), fallback=-1.0, estimate=False)
