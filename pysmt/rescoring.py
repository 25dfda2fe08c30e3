"""``pysmt rescore``: add stateful features' scores, or features of complete translations', to a Moses n-best list.

A stateful feature scores each entry's target sentence as one request (the whole sentence appended to
the empty hypothesis, then its end), through the same array interface the search uses
(:meth:`~pysmt.features.base.StatefulFeature.score_batch`), so a language-model feature gives
exactly the score it gives in search, where a sentence's score does not depend on how it was cut
into phrases. A feature of complete translations (:class:`~pysmt.features.base.TranslationFeature`, a
sentence model) scores a sentence's distinct entries in one call, as the decoder's rescoring pass does; it
sees the source sentence, read from the input the list was decoded from (``--src``: :class:`SourceText`) and
prepared as ``decode`` prepares it. Stateless features score phrase pairs, which an n-best list does not keep, so
they cannot be added this way.

The new scores are appended to each line's features, and the total becomes the rescoring total, as the decoder's
rescoring pass makes it: the list's total (its features weighted as decoded) plus the added features' scores
weighted by their rescoring weights (their ``rescoring-weights`` in the config, else their weights: those the feature
declares when none is given, else 0; ``pysmt tune --features`` learns them), and, for a listed feature that the
config gives separate ``rescoring-weights``, its scores weighted by the difference between those and its weights.
Each sentence's list is sorted again by the new totals (ties keep the list's order). What the features return is
checked as in search (:mod:`~pysmt.search.plugin_results`); an entry a feature forbids (scores -inf) is dropped, as
the search would never have given it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Any

import numpy as np

from pysmt.config import SystemConfig
from pysmt.decoder import SystemRecipe, source_words, text_processors
from pysmt.decoding.cluster import SHARDS_PER_ACTOR, Cluster, Worker, shards
from pysmt.errors import FeatureError, PysmtError, at_line
from pysmt.features.base import FORBIDDEN, Feature, StatefulFeature, TranslationFeature, scores_translations
from pysmt.features.registry import build_features, feature_class, given_rescoring_weights, translation_feature_names
from pysmt.files.formats import format_score, parse_features
from pysmt.files.markup import XmlInput
from pysmt.files.textio import atomic_writer, read_lines
from pysmt.phrases import PhrasePair, Sentence, TranslationOption
from pysmt.running.torch_threads import DECODING_THREADS, set_torch_threads
from pysmt.search.plugin_results import StatefulCalls, checked_translation_scores

NbestLine = tuple[int, str, str, float]  # sentence id, words, features field, total
#: One sentence of a list: its id, its entries, and its source words (None when no added feature reads them).
Group = tuple[int, list[NbestLine], tuple[str, ...] | None]


@dataclass(frozen=True)
class SourceText:
    """``rescore --src``: the input an n-best list was decoded from, as ``decode`` was given it (a line per sentence
    id, counted from 0), which features of complete translations read. Prepared as ``decode`` prepares it: the
    system's ``[processing]`` unless ``prepared`` (``decode --prepared``), its markup read as ``xml_input`` says
    (``decode --xml-input``; None: as the config says, else pass-through)."""

    path: Path
    prepared: bool = False
    xml_input: XmlInput | None = None

    def reader(self, config: SystemConfig, nbest_path: Path) -> Callable[[int], tuple[str, ...]]:
        """The words of sentence ``id`` as decode's search saw them; an id beyond the file's lines is an error
        naming both files."""
        lines = [text for _, text in read_lines(self.path)]
        prepare = None if self.prepared else text_processors(config.processing)[0]
        mode: XmlInput = self.xml_input or config.xml_input or "pass-through"

        def words(index: int) -> tuple[str, ...]:
            if not 0 <= index < len(lines):
                raise PysmtError(
                    f"--src {self.path} has {len(lines):,} lines, but {nbest_path} has sentence {index} (ids count "
                    "the input's lines from 0): is it the input the list was decoded from?"
                )
            return source_words(prepare, mode, lines[index], index)

        return words


def added_translation_features(config: SystemConfig, added: list[str]) -> list[str]:
    """The names of the features of types ``added`` that score complete translations (known before loading)."""
    return translation_feature_names([spec for spec in config.features if spec.type in added])


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


def translation_scores(
    feature: TranslationFeature, index: int, sentences: list[str], source: tuple[str, ...] | None
) -> np.ndarray:
    """A feature of complete translations' scores of an entry's target sentences, ``(len(sentences), num_scores)``:
    the distinct ones asked in one call, as the decoder's rescoring pass asks them, checked as there."""
    if source is None:
        raise PysmtError(f"feature {feature.name} scores complete translations of the input: give it with --src")
    distinct = list(dict.fromkeys(sentences))
    scores = checked_translation_scores(feature, Sentence(source, index), [tuple(s.split()) for s in distinct])
    row = {sentence: k for k, sentence in enumerate(distinct)}
    return scores[[row[sentence] for sentence in sentences]].reshape(len(sentences), feature.num_scores)


def listed_changes(config: SystemConfig, added: list[str]) -> dict[str, np.ndarray]:
    """For each feature already in the list (not of the types ``added``) that the config gives ``rescoring-weights``
    of their own: those minus its weights, what its scores add to the list's total in the rescoring total."""
    changes = {}
    for spec in config.features:
        if spec.type in added or spec.rescoring_weights is None:
            continue
        if spec.weights is None or len(spec.weights) != len(spec.rescoring_weights):
            have = "no weights" if spec.weights is None else f"{len(spec.weights)} weights"
            raise PysmtError(
                f"{config.path}: feature {spec.name} has {len(spec.rescoring_weights)} rescoring-weights and {have}: "
                "rescore re-totals a list decoded with its weights by both"
            )
        change = np.subtract(spec.rescoring_weights, spec.weights)
        if change.any():
            changes[spec.name] = change
    return changes


class Rescorer:
    """The features of types ``added`` in ``config``, built once, rescoring one sentence's entries at a time."""

    def __init__(self, config: SystemConfig, added: list[str]) -> None:
        specs = [spec for spec in config.features if spec.type in added]
        set_torch_threads(DECODING_THREADS)
        for spec in specs:  # known before anything loads
            cls = feature_class(spec.type)
            if not (issubclass(cls, StatefulFeature) or scores_translations(cls)):
                raise PysmtError(phrase_pairs(spec.name))
        self.changes = listed_changes(config, added)
        self.features, weights = build_features(config, specs, missing_weight=0.0)
        given = given_rescoring_weights(config, specs, self.features)
        #: The added features' weights in the rescoring totals: their rescoring-weights, else their weights.
        self.weights = [r if r is not None else w for r, w in zip(given, weights)]
        self.scorers: list[Callable[[int, list[str], tuple[str, ...] | None], np.ndarray]] = []
        for feature in self.features:
            self.scorers.append(scorer(feature))
        self.config = config

    def sentence(
        self, nbest_name: str, index: int, entries: list[NbestLine], source: tuple[str, ...] | None = None
    ) -> list[str]:
        """The lines of sentence ``index``'s rescored entries, best first (those a feature forbids left out);
        ``source``: its source words, for features of complete translations."""
        try:
            sentences = [words for _, words, _, _ in entries]
            columns = [score(index, sentences, source) for score in self.scorers]
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
            if self.changes:
                total += self.listed_change(nbest_name, index, old)
            total += sum(float(np.dot(w, column[k])) for w, column in zip(self.weights, columns))
            rescored.append((total, f"{index} ||| {words} ||| {old} {added_text} ||| {format_score(total)}\n"))
        if not rescored:
            forbidding = [f.name for f, column in zip(self.features, columns) if (column == FORBIDDEN).any()]
            raise FeatureError(
                f"{nbest_name}, sentence {index}: every entry is forbidden (scored -inf) by "
                f"feature {', '.join(forbidding)}"
            )
        rescored.sort(key=lambda item: -item[0])  # stable: equal totals keep the list's order
        return [line for _, line in rescored]

    def listed_change(self, nbest_name: str, index: int, listed: str) -> float:
        """What an entry's listed scores (its features field) add to its total when the config gives some of their
        features rescoring weights of their own (:func:`listed_changes`)."""
        labels, values = parse_features(listed)
        change, at = 0.0, 0
        for name, count in labels:
            delta = self.changes.get(name)
            if delta is not None:
                if len(delta) != count:
                    raise PysmtError(
                        f"{nbest_name}, sentence {index}: {name} has {count} scores, but {len(delta)} "
                        f"rescoring-weights in {self.config.path}"
                    )
                change += float(np.dot(delta, values[at : at + count]))
            at += count
        return change


def scorer(feature: Feature) -> Callable[[int, list[str], tuple[str, ...] | None], np.ndarray]:
    """How ``feature`` scores a sentence's entries (its id, their target sentences, its source words)."""
    if isinstance(feature, StatefulFeature):
        calls = StatefulCalls(feature)
        return lambda index, sentences, source: sentence_scores(calls, index, sentences)
    if isinstance(feature, TranslationFeature):
        return lambda index, sentences, source: translation_scores(feature, index, sentences, source)
    raise PysmtError(phrase_pairs(feature.name))


def phrase_pairs(name: str) -> str:
    return (
        f"feature {name} scores phrase pairs, which an n-best list does not keep: rescore adds stateful features "
        "(language models) and features of complete translations (sentence models) only"
    )


class RescoringActor(Worker):
    """A :class:`Rescorer` on a cluster node (``pysmt rescore --cluster``), built there from the recipe's paths."""

    def build(self, recipe: SystemRecipe, *args: Any) -> Rescorer:
        (added,) = args
        return Rescorer(recipe.configure(), added)

    def rescore(self, shard: list[Group], nbest_name: str) -> tuple[str, list[list[str]]]:
        rescorer = self.loaded()
        return self.node, [rescorer.sentence(nbest_name, index, entries, source) for index, entries, source in shard]


def sentences(
    nbest_path: Path,
    config: SystemConfig,
    added: list[str],
    source: Callable[[int], tuple[str, ...]] | None = None,
) -> Iterator[Group]:
    """Each sentence's entries, checked (the list's features are the system's, without the added ones yet), with
    its source words when ``source`` reads them."""
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
        yield index, entries, source(index) if source is not None else None


def rescore(
    config: SystemConfig,
    added: list[str],
    nbest_path: Path,
    out_path: Path,
    cluster: Cluster | None = None,
    source: SourceText | None = None,
) -> int:
    """Write ``nbest_path`` with the features of types ``added`` (in ``config``) scored; return the entries.

    Features of complete translations read each sentence's source from ``source`` (``--src``), prepared here. With
    ``cluster`` (its actors: :class:`RescoringActor`), sentences are rescored there in shards of about equal numbers
    of entries, and written in the same order.
    """
    needing = added_translation_features(config, added)
    if needing and source is None:
        raise PysmtError(
            f"feature {', '.join(needing)} scores complete translations of the input: give the input the list was "
            "decoded from with --src FILE"
        )
    words = source.reader(config, nbest_path) if source is not None and needing else None
    written = 0
    with atomic_writer(out_path) as out:
        if cluster is None:
            rescorer = Rescorer(config, added)
            results: Iterable[list[str]] = (
                rescorer.sentence(str(nbest_path), *group) for group in sentences(nbest_path, config, added, words)
            )
        else:
            groups = list(sentences(nbest_path, config, added, words))
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
