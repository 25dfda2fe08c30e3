"""The feature-plugin contract: everything the decoder knows about a feature.

A feature contributes ``num_scores`` dense scores (natural-log based, as Moses) to the log-linear
model, each with one weight. It is registered under the entry-point group ``pysmt.features``
(``name = "module:Class"``), declares the parameters of its config section as a dataclass
(``parameters``: :mod:`pysmt.features.parameters`) and is built from a section's values by
:meth:`Feature.from_config`.

Three kinds, from cheapest to most involved:

* :class:`Feature` (stateless) implements one of two hooks, each called with a whole batch:
  :meth:`Feature.evaluate_in_isolation` scores phrase pairs alone (their scores depend on the pair
  only): the decoder scores each pair once, before the table limit, and caches it across sentences
  (Moses' *EvaluateInIsolation*); :meth:`Feature.evaluate_with_source_context` scores a sentence's
  translation options, which carry their source span, once per sentence, after the table limit
  (Moses' *EvaluateWithSourceContext*); the sentence is given to :meth:`Feature.begin_sentence`
  first. This is where a neural phrase model scores every option of a sentence in one batch.
* :class:`StatefulFeature`: scores that depend on the translation so far (language models,
  reordering). ``extend(state, option)`` maps a state and an option to scores and a new state;
  states must be hashable and equal exactly when every future score is equal, because the decoder
  recombines hypotheses with equal states. ``final(state)`` scores the end of the sentence.
* :class:`BatchedStatefulFeature`: a stateful feature that scores whole batches of requests as
  arrays (a neural LM): :meth:`StatefulFeature.score_batch` is what it implements.

pysmt's own features also declare what the compiled core computes for them (:class:`PhraseSource`'s
table arrays, :class:`CompiledScores`, :class:`CompiledTwin`); a plugin needs none of that.

How the search calls stateful features (the array interface): for each sentence,
:meth:`StatefulFeature.start` gives the id of the empty hypothesis' state; then
:meth:`StatefulFeature.score_batch` receives arrays of requests (a parent state id, an option
index, whether the sentence ends after that option) and returns an array of scores and one of new
state ids, equal ids meaning equal states. Identical requests are asked once per sentence. The
built-in features (KenLM, distortion, lexicalized reordering) declare compiled twins in the core
(:class:`CompiledTwin`); every other stateful feature is called this way, a batch at a time, never
once per hypothesis: :class:`StatefulFeature` implements ``score_batch`` on top of ``extend``, and
:class:`BatchedStatefulFeature` lets a feature implement it directly.

What the search guarantees for features scored in batches (``docs/writing-a-feature.md``):

* no hypothesis is compared, recombined, pruned or expanded before all its scores are known;
* normal search requests every candidate it builds, in batches of at most ``buffer_size``
  requests, and adds them to their stacks in the order it built them, so its result does not
  depend on the batch size;
* cube pruning takes candidates off its heap in rounds of ``pops-per-round`` (a ``[search]``
  setting) and scores the candidates that those pops make reachable together, before the next
  round; the heap is always ordered on complete scores. Requests are made for the candidates
  that enter the heap (the first of every edge, and the neighbours of what was popped), not for
  every pair of hypothesis and option;
* the n-best lists do not depend on ``buffer_size``; a huge beam finds the best derivation, as
  exhaustive search does.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any, ClassVar, Generic, Protocol, TypeVar, runtime_checkable

import numpy as np

from pysmt import _core
from pysmt.config import SystemConfig
from pysmt.errors import FeatureError
from pysmt.features.parameters import NoParameters
from pysmt.phrases import PhrasePair, Sentence, TranslationOption

Scores = tuple[float, ...]
#: A stateful feature's states: hashable, equal exactly when every future score is equal.
State = TypeVar("State", bound=Hashable)

#: A score that forbids a translation (the documented hard constraint): an option or extension with
#: it never enters a stack, whatever the feature's weight.
FORBIDDEN = -math.inf


class Feature:
    """A stateless feature. Subclasses set ``default_label`` and ``parameters`` and implement ``from_config`` and
    one of ``evaluate_in_isolation`` and ``evaluate_with_source_context``."""

    #: Prefix of the feature's default name (``LM`` gives ``LM0``, ``LM1``...).
    default_label: ClassVar[str] = "Feature"
    #: The parameters its config section may give: a dataclass (:mod:`pysmt.features.parameters`), whose
    #: fields are their kinds, defaults and help. Any other key is an error naming the file, the feature
    #: and the key, so a misspelling never passes silently; ``check_config`` and ``from_config`` receive
    #: an instance, values converted and paths made absolute.
    parameters: ClassVar[type] = NoParameters
    #: Whether MERT may change its weights (Moses' ``tuneable``).
    tunable: ClassVar[bool] = True

    def __init__(self, name: str, num_scores: int) -> None:
        self.name = name
        self.num_scores = num_scores

    @classmethod
    def check_config(cls, name: str, params: Any, system: SystemConfig) -> None:
        """Check a config section (``params``: an instance of ``parameters``) before anything is loaded; raise
        ``PysmtError("feature NAME: ...")``.

        Called for every feature of a system before the first ``from_config``, so that a mistake in
        any section is reported in a second, not after minutes of loading other models. Parameters
        the section must give are checked already; override it for checks of values, such as a batch
        size of at least 1, that need no model (or a model's kind, read in milliseconds).
        """

    @classmethod
    def from_config(cls, name: str, params: Any, system: SystemConfig) -> Feature:
        """Build the feature from its config section (``params``: an instance of ``parameters``, paths absolute),
        loading its models."""
        raise NotImplementedError

    def default_weights(self) -> list[float] | None:
        """Weights used when the config gives none; None makes a missing weight an error.

        The decoder looks for an override of this method on the class before loading anything: a
        tunable feature that does not define it needs weights in the config (or ``--weights``).
        """
        return None if self.tunable else [1.0] * self.num_scores

    def evaluate_in_isolation(self, pairs: Sequence[PhrasePair]) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Scores and future-cost estimates of phrase pairs alone, in one batch (Moses' *EvaluateInIsolation*):
        what depends on the pair only, asked once per pair, before the table limit, and cached across
        sentences.

        Returns two ``(len(pairs), num_scores)`` arrays (or None for all zeros): the scores that
        become part of the model score, and estimates that only guide the search (future cost and
        the table limit), such as a language model's score of a phrase without its left context.
        """
        return None, None

    def evaluate_with_source_context(
        self, options: Sequence[TranslationOption]
    ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Scores and estimates of a sentence's translation options, in one batch per sentence (Moses'
        *EvaluateWithSourceContext*): an option carries its source span, and the sentence was given to
        :meth:`begin_sentence`. Asked after the table limit (which its scores take no part in). Returns
        what :meth:`evaluate_in_isolation` returns, for ``options``. A feature implements one of the two."""
        return None, None

    def begin_sentence(self, sentence: Sentence) -> None:
        """Per-sentence set-up, called before the sentence's options are evaluated."""

    def end_sentence(self) -> None:
        """Release per-sentence memory."""


class TranslationFeature(Feature):
    """A feature of complete translations (a sentence-level model): it takes no part in the search, but scores
    each line's n-best translations afterwards, all of them in one call, and its weighted scores re-rank them
    before the 1-best is written (the rescoring pass, Moses' n-best reranking).

    The decoder asks for ``[search] rescore-size`` distinct translations of a line, adds every translation
    feature's scores to each entry's score vector (so n-best lists carry them as columns and the tuner can
    learn their weights), totals each entry with the rescoring weights (:attr:`FeatureSpec.rescoring_weights
    <pysmt.config.FeatureSpec.rescoring_weights>`, or the weights where none are given) and sorts the list by
    that total. ``pysmt rescore`` scores an n-best list file the same way.
    """

    def score_translations(self, sentence: Sentence, translations: Sequence[tuple[str, ...]]) -> np.ndarray:
        """Scores of complete translations of ``sentence``: a ``(len(translations), num_scores)`` array of finite
        numbers (or :data:`FORBIDDEN` for a translation the feature rules out). ``translations`` are target words
        as the search produced them (tokenized, before the system's post-processing), distinct, best first; score
        them together: batching them is what makes a neural model fast enough here."""
        raise NotImplementedError


def scores_translations(feature: Feature | type[Feature]) -> bool:
    """Whether a feature (or its class) scores complete translations after the search (:class:`TranslationFeature`)."""
    cls = feature if isinstance(feature, type) else type(feature)
    return issubclass(cls, TranslationFeature)


def in_isolation(feature: Feature | type[Feature]) -> bool:
    """Whether a feature (or its class) implements :meth:`Feature.evaluate_in_isolation`."""
    cls = feature if isinstance(feature, type) else type(feature)
    return cls.evaluate_in_isolation is not Feature.evaluate_in_isolation


def with_source_context(feature: Feature | type[Feature]) -> bool:
    """Whether a feature (or its class) scores each sentence's options (:meth:`Feature.evaluate_with_source_context`)
    rather than phrase pairs alone."""
    cls = feature if isinstance(feature, type) else type(feature)
    return cls.evaluate_with_source_context is not Feature.evaluate_with_source_context


class StatefulFeature(Feature, Generic[State]):
    """A feature whose scores depend on the translation built so far; ``State`` is the type of its states
    (``StatefulFeature[bytes]``: any hashable type, opaque to the search)."""

    #: The most requests the search sends in one :meth:`score_batch` call (it may send fewer).
    buffer_size: int = 10_000

    def initial_state(self, sentence: Sentence) -> State:
        """The state of the empty hypothesis."""
        raise NotImplementedError

    def extend(self, state: State, option: TranslationOption) -> tuple[Scores, State]:
        """Scores of appending ``option`` to a hypothesis whose state is ``state``, and the new state."""
        raise NotImplementedError

    def final(self, state: State) -> Scores | None:
        """Scores added when the hypothesis covers the whole sentence (an LM's ``</s>``); None = zeros."""
        return None

    # -- the array interface the search calls (implemented here on top of extend and final) ------

    def start(self, sentence: Sentence, options: Sequence[TranslationOption]) -> int:
        """Begin a sentence's search over ``options`` (requests name them by index); the empty hypothesis' state id."""
        self._options = options
        self._states: list[State] = []
        self._ids: dict[State, int] = {}
        return self._state_id(self.initial_state(sentence), "initial_state", "the sentence start")

    def score_batch(self, states: np.ndarray, options: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Score a batch of requests: option ``options[k]`` appended to state ``states[k]``, plus the sentence's
        end when ``ends[k]``. Returns a ``(len(states), num_scores)`` array of scores and the new states' ids."""
        scores = np.zeros((len(states), self.num_scores))
        new_states = np.zeros(len(states), dtype=np.int64)
        for k, (state_id, index, end) in enumerate(zip(states.tolist(), options.tolist(), ends.tolist())):
            option = self._options[index]
            step = self.extend(self._states[state_id], option)
            if not (isinstance(step, (tuple, list)) and len(step) == 2):
                raise FeatureError(
                    f"feature {self.name}: extend returned a {type(step).__name__}, expected a pair "
                    f"(scores, new state), for option {option.describe()}"
                )
            delta, state = step
            scores[k] = self._scores(delta, "extend", option)
            if end:
                final = self.final(state)
                if final is not None:
                    scores[k] += self._scores(final, "final", option)
            new_states[k] = self._state_id(state, "extend", f"option {option.describe()}")
        return scores, new_states

    def _scores(self, values: Any, method: str, option: TranslationOption) -> np.ndarray:
        """``num_scores`` numbers that ``method`` returned, or an error naming the feature and the option."""
        try:
            if len(values) == self.num_scores:
                return np.array(values, dtype=np.float64)
        except (TypeError, ValueError):
            pass
        raise FeatureError(
            f"feature {self.name}: {method} returned scores {values!r}, expected {self.num_scores} "
            f"number(s), for option {option.describe()}"
        )

    def _state_id(self, state: State, method: str, request: str) -> int:
        """The id of a state (numbering a new one), or an error when the state is not hashable."""
        try:
            known = self._ids.setdefault(state, len(self._ids))
        except TypeError:
            raise FeatureError(
                f"feature {self.name}: {method} returned a state of type {type(state).__name__}, "
                f"expected a hashable value, for {request}"
            ) from None
        if known == len(self._states):
            self._states.append(state)
        return known


class BatchedStatefulFeature(StatefulFeature[int]):
    """A stateful feature that implements :meth:`score_batch` itself, on arrays (a neural LM).

    It keeps its own state ids: :meth:`start` returns the empty hypothesis' one, and
    :meth:`score_batch` the new ones; equal ids must mean equal states. ``buffer_size`` bounds the
    requests per call; the scores must not depend on how requests are split into calls.
    """

    def start(self, sentence: Sentence, options: Sequence[TranslationOption]) -> int:
        raise NotImplementedError

    def score_batch(self, states: np.ndarray, options: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError


@runtime_checkable
class PhraseSource(Protocol):
    """A feature that supplies translation candidates (a phrase table): each source phrase of a sentence
    is looked up in every such feature, and the best ``table_limit`` of its pairs are kept (0: all).
    Its scores are its table's columns, for its own pairs (zeros for the others).

    ``translations`` is what the Python option builder (:mod:`pysmt.search.options`) asks; the
    compiled one reads the table's typed arrays (``core_table``) and asks nothing of Python.
    """

    table_limit: int

    def translations(self, source: str) -> list[PhrasePair]:
        """The phrase pairs of a source phrase (its words joined by spaces), fresh objects the caller may score."""
        ...

    def core_table(self) -> _core.PhraseTableView:
        """The table's arrays, as the compiled option builder reads them."""
        ...

    def pair(self, entry: int, source: str) -> PhrasePair:
        """The phrase pair of the table's entry ``entry`` (``source``: its source phrase), unscored."""
        ...


Twin = TypeVar("Twin", bound=_core.CompiledFeature, covariant=True)


@runtime_checkable
class CompiledTwin(Protocol[Twin]):
    """A stateful feature whose scores the compiled core computes itself (the built-in KenLM, distortion
    and lexicalized reordering features), with a C++ twin in ``pysmt/_core`` that computes exactly what
    the feature's ``extend`` and ``final`` compute; the Python ``extend`` stays the specification, which
    the reference search uses and the tests compare against. The twin prepares what it needs of each
    sentence's options in the core (``CompiledFeature::prepare``).

    The twin must be part of the compiled core, so this is for pysmt's own features: a plugin's
    stateful feature is called through its array interface (:meth:`StatefulFeature.score_batch`).
    """

    def core_feature(self) -> Twin:
        """The compiled twin, made once per model (the search sets its weights before each sentence)."""
        ...


@runtime_checkable
class CompiledScores(Protocol):
    """A context-free feature whose scores in isolation the compiled option builder computes itself (the
    built-in penalties' and the KenLM estimate; a plugin's per-word sums with
    :class:`pysmt._core.WordScores`): exactly what the feature's ``evaluate_in_isolation`` gives a phrase pair,
    which stays the specification. Every other feature scoring pairs alone is asked from Python, once per sentence,
    for the phrase pairs the builder has not seen before.
    """

    def core_scores(self) -> _core.IsolationScores | None:
        """The compiled scores, made once per model; None for a feature that scores nothing in isolation
        (its ``evaluate_in_isolation`` returns ``(None, None)``)."""
        ...


@runtime_checkable
class CompiledScorer(Protocol):
    """A plugin's stateful feature that hands the compiled search a scorer written in C or C++ (the C
    interface ``pysmt/compiled_scorer.h``, under :func:`pysmt.get_include`), which the search calls
    directly instead of :meth:`StatefulFeature.score_batch`: no Python call per batch of requests, and
    no Python objects for the sentence's options. It must compute exactly what ``start`` and
    ``score_batch`` compute (state ids may differ: only their equality counts), which stay the
    feature's contract for the Python reference search. See ``docs/writing-a-feature.md``.
    """

    def compiled_scorer(self) -> Any:
        """The scorer: a PyCapsule named ``pysmt.compiled_scorer`` holding a ``pysmt_scorer *`` valid while the
        feature lives, the same one at every call; or None to be called from Python after all."""
        ...


@runtime_checkable
class ForcesOutput(Protocol):
    """A feature that may force each line's output (forced decoding: ``decode --constraint``, Moses'
    ``ConstrainedDecoding``): it forbids every translation but the one it forces, so a line no translation reaches
    is one it forced nothing reachable for, which the decoder writes as an empty line (as Moses does), not the
    error a line every translation of which features forbade is otherwise."""

    def forces_output(self) -> bool:
        """Whether this feature, as configured, forces the output."""
        ...


@runtime_checkable
class StoredScores(Protocol):
    """A per-sentence feature (:meth:`Feature.evaluate_with_source_context`) whose scores of a phrase table's
    pairs were computed beforehand and stored with the table (a binary table's ``stored/`` scores, see
    :mod:`pysmt.models.binary_table`; ``pysmt rnn score`` stores the RNN's): the compiled option
    builder reads them for the options they cover, and asks ``evaluate_with_source_context`` only about
    the others (other tables' pairs, unknown words), so a sentence costs what it would without the feature.

    ``evaluate_with_source_context`` must give the stored numbers for the pairs they cover
    (:attr:`PhrasePair.entry` is a pair's row in its table), and no estimates for them, so that both
    option builders agree.
    """

    def stored_scores(self, table: str) -> np.ndarray | None:
        """The feature's scores of phrase table ``table``'s entries (the phrase-table feature's name): an
        (entries x ``num_scores``) array, NaN where an entry has none; None when none are stored."""
        ...


@runtime_checkable
class StoredColumns(Protocol):
    """A per-sentence feature (:meth:`Feature.evaluate_with_source_context`) whose scores stored with a phrase
    table are that table's own columns (Moses' extra phrase-table column): read by both option builders
    when they score the table's pairs in isolation, so that they take part in the table limit's ranking
    (weighted by the feature's weights), before the sentence's options are chosen. ``pysmt rnn score``'s
    scores are such a column under the RNN's ``mode = "column"``.

    A pair a column covers (a row without NaN) is not asked of ``evaluate_with_source_context`` (its
    per-sentence score is 0 there); the others (other tables' pairs, unknown words) are, after the table
    limit. For a table with a column, :meth:`StoredScores.stored_scores` is not read.
    """

    def stored_columns(self, table: str) -> np.ndarray | None:
        """The feature's scores of phrase table ``table``'s entries as the table's columns: an (entries x
        ``num_scores``) array, NaN where an entry has none; None when the table has no such column."""
        ...
