"""The decoder: a system config turned into a function from a source line to translations.

Built from paths (the config file, ``--features``, ``--param``, ``--weights``: a :class:`SystemRecipe`),
the one way every command, cluster actor, server worker and test builds one (:meth:`Decoder.from_paths`),
or from a :class:`~pysmt.config.SystemConfig` already read.
"""

from __future__ import annotations

import gc
import math
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

import numpy as np

from pysmt.config import ProcessingConfig, SearchConfig, SearchOverrides, SystemConfig
from pysmt.config_files import configure_system
from pysmt.errors import FeatureError, PysmtError
from pysmt.features.base import FORBIDDEN, Feature, ForcesOutput, TranslationFeature, scores_translations
from pysmt.features.registry import add_feature_types, build_features, given_rescoring_weights
from pysmt.files.markup import Markup, XmlInput, parse_markup, split_tags
from pysmt.phrases import Sentence
from pysmt.running.torch_threads import DECODING_THREADS, set_torch_threads
from pysmt.search.compiled import CompiledSearch
from pysmt.search.compiled_options import CompiledOptions
from pysmt.search.engine import BuiltSentence, CompiledEngine, Engine, PythonEngine, Step
from pysmt.search.markup_options import WITH_OPTIONS, SentenceMarkup
from pysmt.search.model import LogLinearModel, weighted_columns
from pysmt.search.options import OptionBuilder
from pysmt.search.plugin_results import HUGE, checked_translation_scores, no_translation
from pysmt.search.reordering_constraint import ReorderingConstraint

if TYPE_CHECKING:
    from pysmt.text_processing import TextProcessor


def text_processors(processing: ProcessingConfig | None) -> tuple[TextProcessor | None, TextProcessor | None]:
    """The source and target preparation a system was trained with, or (None, None)."""
    if processing is None:
        return None, None
    from pysmt.text_processing import TextProcessor  # sacremoses loads only for systems that process text

    return (
        TextProcessor(processing.source_language, processing.truecase_source, processing.tokenize),
        TextProcessor(processing.target_language, processing.truecase_target, processing.tokenize),
    )


@dataclass
class Candidate:
    """One complete translation with its feature scores (unweighted) and total."""

    words: list[str]
    scores: np.ndarray
    total: float
    #: Source-target word links (Pharaoh ``s-t``) in Moses' order (``Hypothesis::OutputAlignment``): phrase by phrase
    #: in target order, each phrase's links sorted by source, then target position, as Moses' ``AlignmentInfo`` (a
    #: set) holds them.
    alignment: list[tuple[int, int]]
    #: The phrases it is made of, in target order: (source start, source end, target start, target end),
    #: ends exclusive (Moses' phrase alignment, ``translate``'s ``align`` in its server).
    phrases: list[tuple[int, int, int, int]] = field(default_factory=list)
    #: The target positions of the unknown words it passes through unchanged (no table translates them).
    unknown: list[int] = field(default_factory=list)


@dataclass
class Translation:
    """The decoder's answer for one input line: the best translation first, then the rest of the n-best list."""

    index: int
    hypotheses: list[Candidate]
    #: The text written as the translation: ``best``, post-processed when the system has [processing].
    output: str = ""
    #: The hypothesis written as the translation: the first (the best model score) unless MBR chose another.
    chosen: int = 0
    #: What the writer warns of on stderr, in input order (a malformed tag read as text: ``Decoder.markup_as_text``).
    warning: str | None = None

    @property
    def best(self) -> str:
        return " ".join(self.hypotheses[self.chosen].words) if self.hypotheses else ""


@contextmanager
def at_input_line(index: int) -> Iterator[None]:
    """A feature's error raised inside names the input line (``index`` + 1) it happened on."""
    try:
        yield
    except FeatureError as err:
        raise FeatureError(f"input line {index + 1}: {err}") from None


#: Characters an input line may hold per word of ``max_sentence_length`` (100,000 at the default 1,000 words):
#: a longer line is not translated, nor even prepared (a 2 MB line took a minute to tokenize).
CHARACTERS_PER_WORD = 100


class MalformedMarkup(PysmtError):
    """A line whose markup does not read (``--xml-input``); the message names the input line."""


@contextmanager
def markup_errors(index: int) -> Iterator[None]:
    """A malformed tag (``--xml-input``), whatever reading the markup found wrong, is one line naming the input line
    (``index`` + 1). :mod:`pysmt.files.markup` checks every attribute itself (a ``span="²"``, a zone beyond the line are
    its :class:`~pysmt.files.markup.MarkupError`), so any other exception here is a bug, and shown whole."""
    try:
        yield
    except PysmtError as err:
        raise MalformedMarkup(f"input line {index + 1}: malformed markup: {err}") from None


@contextmanager
def paused_gc() -> Iterator[None]:
    """Python's cyclic garbage collector paused (and restored as it was) for a sentence's work.

    A sentence's options, hypotheses and arrays form no reference cycles, yet they number tens of
    thousands, which sets off the collector over and over (a quarter to a third of decoding time,
    perf-measured); reference counting still frees them. As Mercurial's ``nogc`` does.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


class Decoder:
    """Builds the features of a system once and translates sentences with them."""

    def __init__(
        self,
        config: SystemConfig,
        extra_features: list[str] | None = None,
        algorithm: Literal["normal", "cube"] | None = None,
        missing_weight: float | None = None,
        engine: Literal["auto", "python"] = "auto",
        xml_input: XmlInput | None = None,
        markup_as_text: bool = False,
    ) -> None:
        """``engine="auto"`` builds options and searches in the compiled core; ``"python"`` with the Python
        option builder and search, the readable reference the compiled core is tested against (both give
        the same results). ``xml_input`` is Moses' ``-xml-input``: how markup in the input lines is read
        (:mod:`pysmt.files.markup`; None: as the config says, else ``pass-through``: as words). ``markup_as_text``:
        a line whose markup does not read is translated as text, with a warning (``decode``, as Moses does),
        not refused (:class:`MalformedMarkup`: ``--xml-strict``, and a server's client gets the error).

        Every feature's section and weights are checked before any model is loaded. torch (a neural
        plugin's) runs on one intra-op thread in a decoding process (:mod:`pysmt.running.torch_threads`).

        Features of complete translations (:class:`~pysmt.features.base.TranslationFeature`) take no part in the
        search: ``model`` (what option building and both searches see) holds the others, and :meth:`translate`
        re-ranks each line's distinct translations with them afterwards (the rescoring pass).
        """
        set_torch_threads(DECODING_THREADS)
        self.built_from = (config, extra_features, algorithm, missing_weight, engine, xml_input, markup_as_text)
        self.xml_input: XmlInput = xml_input or config.xml_input or "pass-through"
        self.markup_as_text = markup_as_text
        self.config = config
        self.search: SearchConfig = replace(config.search, algorithm=algorithm or config.search.algorithm)
        self.specs = add_feature_types(config, extra_features or [])
        #: Every feature, in config order: the n-best lists' columns (:meth:`nbest_labels`) and :attr:`weights`.
        self.features, weights = build_features(config, self.specs, missing_weight)
        #: Each feature's columns in a candidate's score vector (config order): ``offsets[k]:offsets[k + 1]``.
        self.offsets: list[int] = np.cumsum([0] + [f.num_scores for f in self.features]).tolist()
        self.dims = self.offsets[-1]
        #: The features of complete translations, by number in ``features``: the rescoring pass's.
        self.rescorers: list[tuple[int, TranslationFeature]] = [
            (k, cast(TranslationFeature, f)) for k, f in enumerate(self.features) if scores_translations(f)
        ]
        #: The numbers of the features the search sees (all but the rescorers), in config order.
        self.searched = [k for k, f in enumerate(self.features) if not scores_translations(f)]
        #: Where the search model's columns go in a candidate's score vector (only with rescorers: without, the two
        #: vectors are one).
        self.search_columns = np.concatenate(
            [np.arange(self.offsets[k], self.offsets[k + 1]) for k in self.searched] or [np.zeros(0, dtype=np.int64)]
        )
        self.given_rescoring = given_rescoring_weights(config, self.specs, self.features)
        self.model = LogLinearModel([self.features[k] for k in self.searched], [weights[k] for k in self.searched])
        self._install_weights(weights)
        #: Whether a feature forces each line's output (``decode --constraint``): a line no translation reaches is
        #: then an empty line, not an error.
        self.constrained = any(isinstance(f, ForcesOutput) and f.forces_output() for f in self.features)
        max_source = max(
            (f.table.max_source_length for f in self.model.phrase_tables if hasattr(f, "table")),
            default=self.search.max_phrase_length,
        )
        max_phrase_length = min(self.search.max_phrase_length, max(max_source, 1))
        #: The Python option builder (the reference, and what engine="python" uses).
        self.options = OptionBuilder(self.model, max_phrase_length)
        self.source_text, self.target_text = text_processors(config.processing)
        #: The compiled core's option builder and search (None with engine="python"), chosen here once: the decoder
        #: calls :attr:`engine` without asking which it is.
        self.compiled = CompiledSearch(self.model) if engine == "auto" else None
        self.compiled_options = CompiledOptions(self.model, max_phrase_length) if engine == "auto" else None
        self.engine: Engine = (
            CompiledEngine(self.model, self.compiled_options, self.compiled)
            if self.compiled is not None and self.compiled_options is not None
            else PythonEngine(self.model, self.options)
        )
        first = cast(Feature, self.model.phrase_tables[0]) if self.model.phrase_tables else None
        #: The table whose columns markup options' log(prob) fills (Moses': the first), and its column count.
        self.markup_table = (first.name, first.num_scores) if first is not None else None

    @property
    def weights(self) -> list[list[float]]:
        """Every feature's weights, in config order (the search's features' and the rescorers')."""
        return [self.all_weights[lo:hi].tolist() for lo, hi in zip(self.offsets, self.offsets[1:])]

    @property
    def rescoring_weights(self) -> list[list[float]]:
        """Every feature's weights in the rescoring pass's totals, in config order (used only with rescorers)."""
        return [self.rescoring[lo:hi].tolist() for lo, hi in zip(self.offsets, self.offsets[1:])]

    def _install_weights(
        self, weights: Sequence[Sequence[float]], rescoring: Sequence[Sequence[float]] | None = None
    ) -> None:
        """Every feature's weights (config order), and the rescoring pass's: ``rescoring``, or where None each
        feature's ``rescoring-weights`` from the config, else its ``weights``."""
        if len(weights) != len(self.features) or (rescoring is not None and len(rescoring) != len(self.features)):
            raise ValueError(f"expected weights for {len(self.features)} features")
        self.all_weights = (
            np.concatenate([np.asarray(w, dtype=np.float64) for w in weights]) if weights else np.zeros(0)
        )
        if rescoring is None:
            rescoring = [given if given is not None else w for given, w in zip(self.given_rescoring, weights)]
        self.rescoring = (
            np.concatenate([np.asarray(w, dtype=np.float64) for w in rescoring]) if rescoring else np.zeros(0)
        )
        if self.all_weights.shape != (self.dims,) or self.rescoring.shape != (self.dims,):
            raise ValueError(f"expected {self.dims} weights in all, one per score")

    @classmethod
    def from_paths(
        cls,
        config: str | os.PathLike[str],
        features: Sequence[str] = (),
        params: Sequence[str] = (),
        weights: str | os.PathLike[str] | None = None,
        *,
        algorithm: Literal["normal", "cube"] | None = None,
        missing_weight: float | None = None,
        engine: Literal["auto", "python"] = "auto",
        overrides: SearchOverrides = SearchOverrides(),
        xml_input: XmlInput | None = None,
    ) -> Decoder:
        """The decoder of a system config file with ``features`` added (as ``--features`` adds them), ``params``
        set (``FEATURE.key=value``, as ``--param``), ``weights`` read from a file (as ``--weights``) and the
        command line's search settings (``overrides``: ``--stack`` ... ``--weight-overwrite``)."""
        return SystemRecipe(
            os.fspath(config),
            tuple(features),
            tuple(params),
            os.fspath(weights) if weights is not None else None,
            algorithm,
            missing_weight,
            engine,
            overrides,
            xml_input,
        ).build()

    def __reduce__(self) -> tuple[Any, ...]:
        """A decoder pickles as what it was built from and its weights, and is built again where it is
        unpickled (a ``spawn`` or ``forkserver`` worker): its models travel as paths, never as objects."""
        return _rebuilt, (self.built_from, self.weights, self.rescoring_weights)

    def set_weights(self, weights: list[list[float]], rescoring: list[list[float]] | None = None) -> None:
        """New weights (one list per feature, in config order: :attr:`weights`); cached options are rescored lazily.

        The rescoring pass (a system with features of complete translations) totals with ``rescoring`` (one list
        per feature), or, where it is None, with each feature's ``rescoring-weights`` as the config gives them and
        else with the weights just set. So ``pysmt tune``, which sets the weights it decodes with, gets n-best
        lists whose totals and order are those weights' on a system without separate rescoring weights (what it
        tunes, translation features included); a config's separate rescoring weights (``tune --rerank``'s) stay
        in force until ``rescoring`` replaces them."""
        self._install_weights(weights, rescoring)
        self.model.set_weights([weights[k] for k in self.searched])
        self.options.cache.clear()  # the reference builder's, which tests ask beside either engine
        self.engine.set_weights()

    def forget_options(self) -> None:
        """Drop the phrase pairs ranked so far (kept across sentences): the next sentences score them again."""
        self.options.cache.clear()  # the reference builder's, which tests ask beside either engine
        self.engine.forget_options()

    def build_options(self, sentence: Sentence, markup: SentenceMarkup | None = None) -> BuiltSentence:
        """A sentence's options (with its ``markup``'s), as the engine builds them; the features have begun the
        sentence."""
        return self.engine.build(sentence, markup)

    def read_markup(
        self, line: str, index: int, as_text: bool = False
    ) -> tuple[tuple[str, ...], SentenceMarkup | None, Markup | None]:
        """A line's words, its markup options and its markup (both None when the line is read as words: ``--xml-input
        pass-through``, the default, or ``as_text``: a malformed line, as Moses reads it)."""
        if self.xml_input == "pass-through" or as_text:
            return tuple(line.split()), None, None
        with markup_errors(index):
            markup = parse_markup(line, keep_options=self.xml_input in WITH_OPTIONS)
        if not markup.options:
            return markup.words, None, markup
        return markup.words, SentenceMarkup(self.xml_input, markup.options, self.markup_table, markup.words), markup

    def warm_caches(self, lines: Iterable[str]) -> None:
        """Build the options of ``lines`` (model tokens, as :meth:`translate` takes them) and drop them.

        What stays is what features keep across sentences: the RNN's phrase-pair scores, the CSLM's
        phrase terms. A tuning run forks fresh workers for every pass over its dev set, and their
        caches die with them; warmed here first, every pass's workers inherit the scores
        (copy-on-write) instead of computing them again. A line too long to translate (:meth:`too_long`) is
        skipped here too: its options would cost what its search does.
        """
        with paused_gc():
            try:
                for index, line in enumerate(lines):
                    words, markup, _ = self.read_markup(line, index)
                    if words and not self.too_long(len(words), len(line)):
                        try:
                            with at_input_line(index):
                                self.build_options(Sentence(words, index), markup)  # begins the sentence for features
                        finally:
                            self.model.end_sentence()
            finally:
                self.forget_options()  # rebuilt by each sentence's search, with the weights of the moment

    def too_long(self, words: int, characters: int = 0) -> str:
        """Why a line of so many words (model tokens) or characters (raw, tags included) is not translated; "" when
        it is. Its search would need memory quadratic in its words (a 2 MB line ran out of memory and stopped the
        run), and preparing it time linear in its characters (tokenizing 2 MB took a minute): the characters are
        judged before the line is prepared, the words after."""
        limit = self.search.max_sentence_length
        if words > limit:
            return f"{words:,} words, more than --max-sentence-length {limit:,}"
        if characters > limit * CHARACTERS_PER_WORD:
            return (
                f"{characters:,} characters, more than {limit * CHARACTERS_PER_WORD:,} "
                f"({CHARACTERS_PER_WORD} a word of --max-sentence-length {limit:,})"
            )
        return ""

    def untranslated(self, index: int, too_long: str = "") -> Translation:
        """An empty translation: of an empty line, or of one too long to translate (``too_long``: why, as
        :meth:`too_long` says it), with a warning naming the line; the lines after it are translated."""
        empty = Translation(index, [Candidate([], np.zeros(self.dims), 0.0, [])])
        if too_long:
            empty.warning = f"input line {index + 1}: {too_long}: not translated (an empty line written)"
        return empty

    def translate(
        self, line: str, index: int = 0, nbest_size: int = 1, distinct: bool = False, as_text: bool = False
    ) -> Translation:
        """Translate one tokenized line; ``nbest_size`` > 1 also returns the runners-up.

        A feature's unusable result, or a sentence left with no translation of finite model score
        (features forbade every way to translate it, or scores overflowed), is a
        :class:`~pysmt.errors.FeatureError` naming the input line (``index`` + 1) and the feature; under a feature
        that forces the output (:class:`~pysmt.features.base.ForcesOutput`: ``--constraint``) a line no translation
        reaches is a translation without hypotheses (an empty line, as in Moses). A line's markup is read as
        ``xml_input`` says (``as_text``: as words, tags included); a malformed tag is a :class:`MalformedMarkup` naming
        the line.

        With features of complete translations the search gives ``max(nbest_size, rescore-size)`` distinct
        translations, whatever ``distinct`` says (Moses' n-best reranking re-ranks distinct strings: a string
        repeated would only repeat its scores), and the rescoring pass (:meth:`rescored`) re-ranks them: the
        n-best list returned is then distinct, ordered by the rescoring totals, and ``nbest_size`` long at most.
        """
        words, markup, tags = self.read_markup(line, index, as_text)
        why = self.too_long(len(words))
        if not words or why:
            return self.untranslated(index, why)
        with markup_errors(index):
            constraint = ReorderingConstraint.of(len(words), tags.walls, tags.zones) if tags else None
        with paused_gc(), at_input_line(index):
            sentence = Sentence(words, index)
            try:
                built = self.build_options(sentence, markup)
                size = max(nbest_size, 1)
                extracted, unique = (max(size, self.search.rescore_size), True) if self.rescorers else (size, distinct)
                found = built.search(self.search, extracted, unique, constraint)
                candidates = [self._describe(steps, scores) for steps, scores in found]
                if not candidates and self.constrained:
                    return Translation(index, [])  # no translation reaches the line's constraint: Moses' empty line
                if not candidates or not all(math.isfinite(c.total) for c in candidates):
                    raise FeatureError(
                        no_translation(
                            self.model.features, self.model.offsets, built.options(), list(self.model.calls.values())
                        )
                    )
            finally:
                self.model.end_sentence()
            if self.rescorers:
                candidates = self.rescored(sentence, candidates, size)
            return Translation(index, candidates)

    def rescored(self, sentence: Sentence, candidates: list[Candidate], size: int) -> list[Candidate]:
        """The rescoring pass: ``candidates`` (the search's distinct translations of ``sentence``, best first, their
        score vectors the search model's) scored by every feature of complete translations in one call each, their
        scores put in their columns (:meth:`nbest_labels`), totalled with the rescoring weights over every feature,
        sorted by those totals (best first; ties keep the search's order) and cut to ``size``.

        A translation a feature forbids (scores -inf) is dropped; a line left with none is a
        :class:`~pysmt.errors.FeatureError` naming the features, as is a total too large to add up."""
        translations = [tuple(c.words) for c in candidates]
        scores = np.zeros((len(candidates), self.dims))
        scores[:, self.search_columns] = np.array([c.scores for c in candidates]).reshape(len(candidates), -1)
        forbidding = []
        for k, feature in self.rescorers:
            found = checked_translation_scores(feature, sentence, translations)
            if not (found > FORBIDDEN).all():
                forbidding.append(feature.name)
            scores[:, self.offsets[k] : self.offsets[k + 1]] = found
        with np.errstate(all="ignore"):  # a forbidden row's -inf times 0 is dropped below; overflow is reported
            totals = weighted_columns(scores, self.rescoring)
        allowed = (scores > FORBIDDEN).all(axis=1) if forbidding else np.ones(len(candidates), dtype=bool)
        if not allowed.any():
            raise FeatureError(
                f"no translation is left: feature {', '.join(forbidding)} forbade all {len(candidates)} translations "
                "the search gave (score_translations scored them -inf)"
            )
        if not np.isfinite(totals[allowed]).all():
            largest = [
                (f.name, np.abs(scores[allowed, self.offsets[k] : self.offsets[k + 1]]).max())
                for k, f in self.rescorers
            ]
            huge = [f"{name} ({value:g})" for name, value in largest if value >= HUGE]
            raise FeatureError(
                "no translation with a finite rescoring total"
                + (f": the scores of feature {', '.join(huge)} are too large to add up" if huge else "")
            )
        kept = []
        for i in np.flatnonzero(allowed).tolist():
            candidate = candidates[i]
            candidate.scores, candidate.total = scores[i], float(totals[i])
            kept.append(candidate)
        kept.sort(key=lambda c: -c.total)  # stable: equal totals keep the search's order
        return kept[:size]

    def _describe(self, steps: Sequence[Step], scores: np.ndarray) -> Candidate:
        """A derivation (its options, first to last, and unweighted scores) as a candidate."""
        words: list[str] = []
        alignment: list[tuple[int, int]] = []
        phrases = []
        unknown: list[int] = []
        for option in steps:
            target_offset = len(words)
            if option.unknown:
                unknown.extend(range(target_offset, target_offset + len(option.target)))
            links = sorted({(int(s), int(t)) for s, _, t in (link.partition("-") for link in option.alignment.split())})
            alignment.extend((option.start + s, target_offset + t) for s, t in links)
            phrases.append((option.start, option.end, target_offset, target_offset + len(option.target)))
            words.extend(option.target)
        with np.errstate(all="ignore"):  # a total that overflowed is reported by translate
            total = float(weighted_columns(scores[None, :], self.model.weights)[0])
        return Candidate(words, scores, total, alignment, phrases, unknown)

    def preprocess(self, line: str, index: int = 0, as_text: bool = False) -> str:
        """Raw input to model tokens, as the system was trained (unchanged for systems without [processing]):
        :func:`prepare_source` with the decoder's preparation and ``xml_input``."""
        return prepare_source(self.source_text, self.xml_input, line, index, as_text)

    def postprocess(self, line: str) -> str:
        """Model tokens back to raw text (detruecase, detokenize)."""
        return self.target_text.restore(line) if self.target_text else line

    def nbest_labels(self) -> list[tuple[str, int, int]]:
        """(label, first index, last index + 1) of each feature in the score vector, for n-best lists: every feature
        in config order, features of complete translations included."""
        return [(f.name, self.offsets[k], self.offsets[k + 1]) for k, f in enumerate(self.features)]


def prepare_source(
    source_text: TextProcessor | None, xml_input: XmlInput, line: str, index: int = 0, as_text: bool = False
) -> str:
    """Raw input to model tokens by ``source_text`` (a system's ``[processing]``; None: unchanged).

    When markup is read (``xml_input``, not ``as_text``), only the text between tags is prepared, the tags kept
    as they are (a translation in a tag is the model's target tokens, as Moses takes it); the text is truecased
    as one sentence. A malformed tag is a :class:`MalformedMarkup` naming the input line (``index`` + 1)."""
    if not source_text:
        return line
    if xml_input == "pass-through" or as_text:
        return source_text.prepare(line)
    with markup_errors(index):
        pieces = split_tags(line)
    tokens = [source_text.tokens(text).split() if not tag else [] for tag, text in pieces]
    cased = source_text.truecase(" ".join(t for words in tokens for t in words)).split()
    if len(cased) != sum(map(len, tokens)):  # the truecaser changed the count: each piece on its own
        cased = [t for words in tokens for t in source_text.truecase(" ".join(words)).split()]
    out, taken = [], 0
    for (tag, text), words in zip(pieces, tokens):
        out.append(text if tag else " ".join(cased[taken : taken + len(words)]))
        taken += len(words)
    return " ".join(piece for piece in out if piece)


def source_words(source_text: TextProcessor | None, xml_input: XmlInput, line: str, index: int = 0) -> tuple[str, ...]:
    """The words of a raw input line as ``decode`` gives them to the search, and a feature of complete translations
    sees them (:class:`~pysmt.phrases.Sentence`): prepared by ``source_text`` (:func:`prepare_source`), its markup
    read as ``xml_input`` says, tags left out; a line whose markup does not read is read as text, tags as words,
    as ``decode`` reads it (without ``--xml-strict``)."""
    try:
        text = prepare_source(source_text, xml_input, line, index)
        if xml_input == "pass-through":
            return tuple(text.split())
        with markup_errors(index):
            return parse_markup(text, keep_options=xml_input in WITH_OPTIONS).words
    except MalformedMarkup:
        return tuple(prepare_source(source_text, xml_input, line, index, as_text=True).split())


@dataclass(frozen=True)
class SystemRecipe:
    """How to build a decoder from paths: what a command is told (``-c``, ``--features``, ``--param``,
    ``--weights``, ``--search``, the search settings ``--stack`` ... ``--weight-overwrite``), and what a cluster
    actor or a server worker is sent instead of a decoder
    (paths travel, models do not: each builds the system itself, where binarized tables are memory-mapped
    and shared)."""

    config: str
    features: tuple[str, ...] = ()
    params: tuple[str, ...] = ()
    weights: str | None = None
    algorithm: Literal["normal", "cube"] | None = None
    missing_weight: float | None = None
    engine: Literal["auto", "python"] = "auto"
    overrides: SearchOverrides = SearchOverrides()
    #: How markup in the input is read (``--xml-input``; None: as the config says, else pass-through).
    xml_input: XmlInput | None = None
    #: A line whose markup does not read is translated as text, with a warning (``decode``; not ``--xml-strict``).
    markup_as_text: bool = False

    #: The working folder the command was typed in: ``--param`` values are resolved against it wherever the system is
    #: built, each as its feature declares the key (a ``Path`` parameter made absolute; any other kind left as typed).
    base: str = field(default_factory=os.getcwd)

    def __post_init__(self) -> None:
        """The config and weights made absolute where the command was typed: actors and workers build the system in
        other working folders (``-c moses.ini``, typed in the system's folder, names nothing there). Absolute paths
        stay as they are."""
        object.__setattr__(self, "config", os.path.abspath(self.config))
        if self.weights is not None:
            object.__setattr__(self, "weights", os.path.abspath(self.weights))
        object.__setattr__(self, "base", os.path.abspath(self.base))

    def configure(self) -> SystemConfig:
        """The system's config as the command line makes it (nothing loaded, every model file checked to exist)."""
        return configure_system(
            self.config, self.features, self.params, self.weights, self.overrides, params_base=Path(self.base)
        )

    def build(self, config: SystemConfig | None = None) -> Decoder:
        """The decoder, from ``config`` when the caller has read it already (:meth:`configure`)."""
        return Decoder(
            config or self.configure(),
            algorithm=self.algorithm,
            missing_weight=self.missing_weight,
            engine=self.engine,
            xml_input=self.xml_input,
            markup_as_text=self.markup_as_text,
        )


def _rebuilt(
    built_from: tuple[Any, ...], weights: list[list[float]], rescoring: list[list[float]] | None = None
) -> Decoder:
    decoder = Decoder(*built_from)
    decoder.set_weights(weights, rescoring)
    return decoder
