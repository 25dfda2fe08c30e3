"""``pysmt rescore``: add stateful features' scores to a Moses n-best list, instead of using them in search.

Each entry's target sentence is scored as one request per feature (the whole sentence appended to
the empty hypothesis, then its end), through the same array interface the search uses
(:meth:`~pysmt.features.base.StatefulFeature.score_batch`), so a language-model feature gives
exactly the score it gives in search, where a sentence's score does not depend on how it was cut
into phrases. Stateless features score phrase pairs, which an n-best list does not keep, so they
cannot be added this way. The new scores are appended to each line's features, the total adds
them with their weights (0 when none is given: ``pysmt tune --features`` learns them), and each
sentence's list is sorted again by the new totals. What the features return is checked as in
search (:class:`~pysmt.search.plugin_results.StatefulCalls`); an entry a feature forbids (scores
-inf) is dropped, as the search would never have given it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import groupby
from pathlib import Path
from typing import Any

import numpy as np

from pysmt.config import SystemConfig
from pysmt.decoder import SystemRecipe
from pysmt.decoding.cluster import SHARDS_PER_ACTOR, Cluster, Worker, shards
from pysmt.errors import FeatureError, PysmtError, at_line
from pysmt.features.base import FORBIDDEN, StatefulFeature
from pysmt.features.registry import build_features
from pysmt.files.formats import format_score, parse_features
from pysmt.files.textio import atomic_writer, read_lines
from pysmt.phrases import PhrasePair, Sentence, TranslationOption
from pysmt.running.torch_threads import DECODING_THREADS, set_torch_threads
from pysmt.search.plugin_results import StatefulCalls

NbestLine = tuple[int, str, str, float]  # sentence id, words, features field, total


def read_entries(path: Path) -> Iterator[NbestLine]:
    """The entries of a Moses n-best list, checked line by line."""
    for line_no, line in read_lines(path):
        fields = line.split(" ||| ")
        if len(fields) < 4:
            raise at_line(path, line_no, "expected 'id ||| words ||| features ||| total'")
        try:
            parse_features(fields[2])
            yield int(fields[0]), fields[1].strip(), fields[2].strip(), float(fields[3])
        except ValueError as err:
            raise at_line(path, line_no, f"bad n-best line ({err})") from None


def check_labels(nbest_path: Path, labels: list[str], system: list[str]) -> None:
    """Refuse a list whose features are not the system's: its totals and tuned weights would not match."""
    if labels != system:
        missing, foreign = [n for n in system if n not in labels], [n for n in labels if n not in system]
        differences = "; ".join(
            part
            for part in (
                f"it lacks {', '.join(missing)}" if missing else "",
                f"it has {', '.join(foreign)}" if foreign else "",
            )
            if part
        )
        raise PysmtError(
            f"{nbest_path}: its features ({' '.join(labels)}) are not the system's "
            f"({' '.join(system)}{'; in another order' if not differences else ''})"
            f"{': ' + differences if differences else ''}: was it decoded with this -c config?"
        )


def sentence_scores(calls: StatefulCalls, index: int, sentences: list[str]) -> np.ndarray:
    """A feature's scores of whole target sentences, ``(len(sentences), num_scores)``, checked as in search."""
    options = [
        TranslationOption(0, 0, PhrasePair("", tuple(words.split()), table=None, table_scores=None), k)
        for k, words in enumerate(sentences)
    ]
    empty = calls.start(Sentence((), index), options)
    scores = np.zeros((len(options), calls.num_scores))
    for begin in range(0, len(options), calls.buffer_size):  # calls of at most buffer_size requests, as in search
        k = min(calls.buffer_size, len(options) - begin)
        scores[begin : begin + k], _ = calls.score_batch(
            np.full(k, empty, dtype=np.int64), np.arange(begin, begin + k, dtype=np.int32), np.ones(k, dtype=bool)
        )
    calls.feature.end_sentence()
    return scores


class Rescorer:
    """The features of types ``added`` in ``config``, built once, rescoring one sentence's entries at a time."""

    def __init__(self, config: SystemConfig, added: list[str]) -> None:
        specs = [spec for spec in config.features if spec.type in added]
        set_torch_threads(DECODING_THREADS)
        self.features, self.weights = build_features(config, specs, missing_weight=0.0)
        for feature in self.features:
            if not isinstance(feature, StatefulFeature):
                raise PysmtError(
                    f"feature {feature.name} scores phrase pairs, which an n-best list does not keep: "
                    "rescore adds stateful features (language models) only"
                )
        self.calls = [StatefulCalls(feature) for feature in self.features]  # type: ignore[arg-type]

    def sentence(self, nbest_name: str, index: int, entries: list[NbestLine]) -> list[str]:
        """The lines of sentence ``index``'s rescored entries, best first (those a feature forbids left out)."""
        try:
            columns = [sentence_scores(c, index, [words for _, words, _, _ in entries]) for c in self.calls]
        except FeatureError as err:
            raise FeatureError(f"{nbest_name}, sentence {index}: {err}") from None
        rescored = []
        for k, (_, words, old, total) in enumerate(entries):
            if any(FORBIDDEN in column[k] for column in columns):
                continue  # a forbidden translation, as the search would never have given it
            added_text = " ".join(
                f"{f.name}= " + " ".join(format_score(v) for v in column[k])
                for f, column in zip(self.features, columns)
            )
            total += sum(float(np.dot(w, column[k])) for w, column in zip(self.weights, columns))
            rescored.append((total, f"{index} ||| {words} ||| {old} {added_text} ||| {format_score(total)}\n"))
        if not rescored:
            raise FeatureError(
                f"{nbest_name}, sentence {index}: every entry is forbidden (scored -inf) by "
                f"feature {', '.join(c.name for c in self.calls if c.forbidden)}"
            )
        rescored.sort(key=lambda item: -item[0])
        return [line for _, line in rescored]


class RescoringActor(Worker):
    """A :class:`Rescorer` on a cluster node (``pysmt rescore --cluster``), built there from the recipe's paths."""

    def build(self, recipe: SystemRecipe, *args: Any) -> Rescorer:
        (added,) = args
        return Rescorer(recipe.configure(), added)

    def rescore(self, shard: list[tuple[int, list[NbestLine]]], nbest_name: str) -> tuple[str, list[list[str]]]:
        rescorer = self.loaded()
        return self.node, [rescorer.sentence(nbest_name, index, entries) for index, entries in shard]


def sentences(nbest_path: Path, config: SystemConfig, added: list[str]) -> Iterator[tuple[int, list[NbestLine]]]:
    """Each sentence's entries, checked: the list's features are the system's, without the added ones yet."""
    system = [spec.name for spec in config.features if spec.type not in added]
    new = [spec.name for spec in config.features if spec.type in added]
    for number, (index, group) in enumerate(groupby(read_entries(nbest_path), key=lambda entry: entry[0])):
        entries = list(group)
        names = [name for name, _ in parse_features(entries[0][2])[0]]
        for name in new:
            if name in names:
                raise PysmtError(f"{nbest_path}: the entries already have {name}= scores")
        if number == 0:
            check_labels(nbest_path, names, system)
        yield index, entries


def rescore(
    config: SystemConfig, added: list[str], nbest_path: Path, out_path: Path, cluster: Cluster | None = None
) -> int:
    """Write ``nbest_path`` with the features of types ``added`` (in ``config``) scored; return the entries.

    With ``cluster`` (its actors: :class:`RescoringActor`), sentences are rescored
    there in shards of about equal numbers of entries, and written in the same order.
    """
    written = 0
    with atomic_writer(out_path) as out:
        if cluster is None:
            rescorer = Rescorer(config, added)
            results: Iterable[list[str]] = (
                rescorer.sentence(str(nbest_path), index, entries)
                for index, entries in sentences(nbest_path, config, added)
            )
        else:
            groups = list(sentences(nbest_path, config, added))
            parts = shards(groups, SHARDS_PER_ACTOR * len(cluster.actors), size=lambda group: len(group[1]))
            results = (
                lines
                for part in cluster.ordered(parts, lambda actor, part: actor.rescore.remote(part, str(nbest_path)))
                for lines in part
            )
        for lines in results:
            out.writelines(lines)
            written += len(lines)
    return written
