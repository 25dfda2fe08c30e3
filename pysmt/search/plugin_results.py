"""What features return, checked where it enters the search: the same checks for both engines.

Every score a feature gives reaches the search through this module: what its evaluation hook returns
(stateless features, through :class:`~pysmt.search.model.LogLinearModel`), and what ``start`` and
``score_batch`` return (stateful plugin features, which the Python search and the compiled core
alike call through :class:`StatefulCalls`). A plugin's mistake is therefore found at once, in one
place, and reported as a :class:`~pysmt.errors.FeatureError` naming the feature, the method, what
was expected and what came, and the request (source and target phrase): never a hang, a silently
empty line or scrambled scores.

The checks cost little: the type, shape and dtype of each returned array, and its values in one
vectorized comparison.

* Scores are numpy float arrays of shape ``(n, num_scores)``, one row per request. Each value is
  finite, or ``-inf``: a *forbidden* translation (a hard constraint). An option or extension with a
  ``-inf`` score never enters a stack, whatever the feature's weight (a weight of 0 or below does
  not turn the constraint into ``nan`` or a reward). NaN and ``+inf`` are errors.
* Estimates (future cost and table limit only) are float arrays of the same shape, all finite.
* State ids are numpy integer arrays of shape ``(n,)``; ``start`` returns an ``int``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from pysmt.errors import FeatureError
from pysmt.features.base import FORBIDDEN, StatefulFeature, with_source_context

if TYPE_CHECKING:
    from pysmt.features.base import Feature, TranslationFeature
    from pysmt.phrases import PhrasePair, Sentence, SentenceOptions, TranslationOption

#: Scores of this size or more may overflow when a few are added up and weighted: named when no
#: translation is left with a finite model score. (A batch whose values sum within it is checked in
#: one reduction.)
HUGE = 1e300


def what(value: Any) -> str:
    """A returned value as an error message describes it."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}"
    return f"a {type(value).__name__}"


class Requests:
    """The requests of one call, named only when an error message needs them: ``'a' -> 'x' and 4 more``."""

    def __init__(self, count: int, describe: Callable[[int], str]) -> None:
        self.count = count
        self.describe = describe

    def __str__(self) -> str:
        if not self.count:
            return "no requests"
        return self.describe(0) + (f" and {self.count - 1} more" if self.count > 1 else "")


def pair_of(result: Any, name: str, method: str, expected: str, requests: Requests) -> tuple[Any, Any]:
    """The two parts of a method's returned pair."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise FeatureError(
            f"feature {name}: {method} returned {what(result)}, expected a pair {expected}, for {requests}"
        )
    return result[0], result[1]


def checked_scores(
    value: Any, columns: int, name: str, method: str, kind: str, requests: Requests
) -> tuple[np.ndarray, float]:
    """``value`` as a C-contiguous float64 array of a row per request and ``columns`` columns, its values
    checked; with the values' sum.

    ``kind`` is ``"score"`` (finite, or -inf) or ``"estimate"`` (finite). One reduction checks the
    usual case: a sum within ``HUGE`` means no NaN and no infinity; otherwise each value is looked at.
    """
    rows = requests.count
    if not (isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.shape == (rows, columns)):
        raise FeatureError(
            f"feature {name}: {method} returned {kind}s as {what(value)}, expected a float array of "
            f"shape ({rows}, {columns}) ({rows} requests x {columns} {kind}s), for {requests}"
        )
    array = np.ascontiguousarray(value, dtype=np.float64)
    with np.errstate(all="ignore"):
        total = float(array.sum())
        if -HUGE < total < HUGE:
            return array, total
        bad = ~(array < math.inf) if kind == "score" else ~np.isfinite(array)
    if not bad.any():
        return array, total
    row, column = (int(i) for i in np.argwhere(bad)[0])
    rule = "finite, or -inf to forbid a translation" if kind == "score" else "finite"
    raise FeatureError(
        f"feature {name}: {method} returned {array[row, column]} as {kind} {column + 1} of "
        f"{requests.describe(row)} ({kind}s must be {rule})"
    )


def checked_evaluation(
    feature: Feature, items: Sequence[PhrasePair] | Sequence[TranslationOption]
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """What the feature's hook returns for ``items``, checked: ``(scores, estimates)``, each an array or None
    (``evaluate_with_source_context`` of a sentence's options, or ``evaluate_in_isolation`` of phrase pairs)."""
    method = "evaluate_with_source_context" if with_source_context(feature) else "evaluate_in_isolation"
    result = getattr(feature, method)(items)
    n, name = len(items), feature.name
    requests = Requests(n, lambda row: items[row].describe())
    scores, estimates = pair_of(
        result,
        name,
        method,
        f"(scores, estimates), each None or a float array of shape ({n}, {feature.num_scores})",
        requests,
    )
    if scores is not None:
        scores = checked_scores(scores, feature.num_scores, name, method, "score", requests)[0]
    if estimates is not None:
        estimates = checked_scores(estimates, feature.num_scores, name, method, "estimate", requests)[0]
    return scores, estimates


def checked_translation_scores(
    feature: TranslationFeature, sentence: Sentence, translations: Sequence[tuple[str, ...]]
) -> np.ndarray:
    """What a feature of complete translations returns for ``translations`` of ``sentence`` (the rescoring pass, and
    ``pysmt rescore``), checked as search scores are: a float64 array ``(len(translations), num_scores)`` of finite
    numbers or -inf (a translation it forbids). Its ``end_sentence`` is called after, whatever happened."""
    requests = Requests(len(translations), lambda row: f"translation {' '.join(translations[row])!r}")
    try:
        scores = feature.score_translations(sentence, translations)
    finally:
        feature.end_sentence()
    return checked_scores(scores, feature.num_scores, feature.name, "score_translations", "score", requests)[0]


class StatefulCalls:
    """A stateful plugin feature's array interface as the search calls it, every return checked.

    Both engines call the feature only through this: the Python search in
    :meth:`~pysmt.search.model.LogLinearModel.resolve`, the compiled core from C++. It also keeps,
    per sentence, what is needed to explain a sentence left with no translation: how many
    requests the feature forbade (scored -inf), and the largest score it gave.
    """

    def __init__(self, feature: StatefulFeature) -> None:
        self.feature = feature
        self.name = feature.name
        self.num_scores = feature.num_scores
        size = feature.buffer_size
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
            raise FeatureError(f"feature {self.name}: buffer_size must be a positive int, not {size!r}")
        self.buffer_size = int(size)
        overridden = type(feature).score_batch is not StatefulFeature.score_batch
        self.method = "score_batch" if overridden else "extend/final (through StatefulFeature.score_batch)"
        self.options: Sequence[TranslationOption] = ()
        self.asked = self.forbidden = 0
        self.forbidden_example = ""
        self.largest = 0.0

    def start(self, sentence: Sentence, options: Sequence[TranslationOption]) -> int:
        """Begin a sentence; the empty hypothesis' state id."""
        state = self.feature.start(sentence, options)
        if isinstance(state, bool) or not isinstance(state, (int, np.integer)):
            raise FeatureError(
                f"feature {self.name}: start returned {what(state)}, expected the empty "
                f"hypothesis' state id (an int), for a sentence of {len(sentence)} words"
            )
        self.options = options
        self.asked = self.forbidden = 0
        self.forbidden_example = ""
        self.largest = 0.0
        return int(state)

    def request(self, states: np.ndarray, options: np.ndarray, ends: np.ndarray, row: int) -> str:
        """One request in words: ``option 'a' -> 'x' after state 3, at the sentence end``."""
        option = int(options[row])
        text = self.options[option].describe() if 0 <= option < len(self.options) else f"number {option}"
        return f"option {text} after state {int(states[row])}" + (", at the sentence end" if ends[row] else "")

    def score_batch(self, states: np.ndarray, options: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The feature's ``score_batch``, checked: float64 scores ``(k, num_scores)`` and int64 state ids ``(k,)``."""
        k = len(states)
        requests = Requests(k, lambda row: self.request(states, options, ends, row))
        scores, new_states = pair_of(
            self.feature.score_batch(states, options, ends),
            self.name,
            self.method,
            f"(scores, new state ids): arrays of shape ({k}, {self.num_scores}) and ({k},)",
            requests,
        )
        scores, total = checked_scores(scores, self.num_scores, self.name, self.method, "score", requests)
        if not (isinstance(new_states, np.ndarray) and new_states.dtype.kind in "iu" and new_states.shape == (k,)):
            raise FeatureError(
                f"feature {self.name}: {self.method} returned new state ids as {what(new_states)}, "
                f"expected an integer array of shape ({k},), for {requests}"
            )
        self.asked += k
        if not -HUGE < total < HUGE:
            self.note_extremes(scores, requests)
        return scores, np.ascontiguousarray(new_states, dtype=np.int64)

    def note_extremes(self, scores: np.ndarray, requests: Requests) -> None:
        """Note a batch's forbidden requests (keeping the first as an example) and its largest finite score."""
        finite = scores[scores > FORBIDDEN]
        self.largest = max(self.largest, float(np.abs(finite).max()) if len(finite) else 0.0)
        forbidden = (scores == FORBIDDEN).any(axis=1)
        if forbidden.any() and not self.forbidden:
            self.forbidden_example = requests.describe(int(np.argmax(forbidden)))
        self.forbidden += int(forbidden.sum())


def no_translation(
    features: Sequence[Feature], offsets: Sequence[int], options: SentenceOptions, calls: Sequence[StatefulCalls]
) -> str:
    """Why a sentence was left without a translation of finite model score, naming the features to blame.

    Either features forbade (scored -inf) every way to translate it, or scores so large that
    their weighted sum overflowed.
    """
    blamed, huge = [], []
    scores = np.array([option.scores for option in options.options]).reshape(len(options.options), offsets[-1])
    for k, feature in enumerate(features):
        column = scores[:, offsets[k] : offsets[k + 1]]
        forbidden = (column == FORBIDDEN).any(axis=1)
        if forbidden.any():
            example = options.options[int(np.argmax(forbidden))].describe()
            hook = "evaluate_with_source_context" if with_source_context(feature) else "evaluate_in_isolation"
            blamed.append(
                f"feature {feature.name} forbade {int(forbidden.sum())} of {len(forbidden)} translation "
                f"options ({hook} scored them -inf), e.g. {example}"
            )
        finite = column[column > FORBIDDEN]
        if len(finite) and np.abs(finite).max() >= HUGE:
            huge.append(f"{feature.name} ({np.abs(finite).max():g})")
    for call in calls:
        if call.forbidden:
            blamed.append(
                f"feature {call.name} forbade {call.forbidden} of {call.asked} extensions "
                f"({call.method} scored them -inf), e.g. {call.forbidden_example}"
            )
        if call.largest >= HUGE:
            huge.append(f"{call.name} ({call.largest:g})")
    if blamed:
        return "no translation is left: " + "; ".join(blamed)
    if huge:
        return (
            f"no translation with a finite model score: the scores of feature {', '.join(huge)} are too large to add up"
        )
    return "no translation with a finite model score"
