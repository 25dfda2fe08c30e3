"""The feature-plugin contract: everything the decoder knows about a feature.

A feature contributes ``num_scores`` dense scores (natural-log based, as Moses) to the log-linear
model, each with one weight. It is registered under the entry-point group ``pysmt.features``
(``name = "module:Class"``) and built from its config section by :meth:`Feature.from_config`.

Three kinds, from cheapest to most involved:

* :class:`Feature` (stateless): scores a phrase pair in isolation through :meth:`Feature.evaluate`,
  for all candidate phrase pairs at once (one batch). With ``context_free = True`` the scores
  depend on the phrase pair only: the decoder scores each pair once, before the table limit, and
  caches it across sentences (Moses' *EvaluateInIsolation*). With ``context_free = False`` it is
  called once per sentence over all translation options that survived the table limit, which
  carry their source span (Moses' *EvaluateWithSourceContext*); the sentence is given to
  :meth:`Feature.begin_sentence` first. This is where a neural phrase model scores every option of
  a sentence in one batch.
* :class:`StatefulFeature`: scores that depend on the translation so far (language models,
  reordering). ``extend`` maps (state, option) to scores and a new state; states must be hashable
  and equal exactly when every future score is equal, because the decoder recombines hypotheses
  with equal states.
* :class:`BatchedStatefulFeature`: a stateful feature that collects requests and scores them in one
  batch (a neural LM). The decoder calls :meth:`BatchedStatefulFeature.flush` before any stack is
  pruned or expanded and whenever :meth:`BatchedStatefulFeature.buffer_full` says so; scores must be
  identical to the unbatched path (which :meth:`BatchedStatefulFeature.extend` provides for free).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from pysmt.errors import PysmtError

if TYPE_CHECKING:
    from pysmt.config import SystemConfig
    from pysmt.search.hypothesis import Hypothesis
    from pysmt.search.options import PhrasePair, Sentence, TranslationOption

Scores = tuple[float, ...]


class Feature:
    """A stateless feature. Subclasses set ``default_label`` and implement ``from_config``/``evaluate``."""

    #: Prefix of the feature's default name (``LM`` gives ``LM0``, ``LM1``...).
    default_label: ClassVar[str] = "Feature"
    #: The parameters a config section may give, with their kind: ``int``, ``float``, ``bool``,
    #: ``str`` or ``Path`` (a file or folder, relative to the config file, which must exist). Any
    #: other key is an error naming the file, the feature and the key, so a misspelling never
    #: passes silently; ``from_config`` receives the values converted and paths made absolute.
    parameters: ClassVar[dict[str, type]] = {}
    #: Defaults of ``Path`` parameters, relative to the system's folder (the RNN's ``{"model": "rnn"}``).
    #: They are resolved when the config is read, so a config that ``tune`` or ``filter`` writes
    #: elsewhere keeps pointing at the same files.
    default_paths: ClassVar[dict[str, str]] = {}
    #: Whether MERT may change its weights (Moses' ``tuneable``).
    tunable: ClassVar[bool] = True
    #: Scores depend on the phrase pair alone: scored once, before the table limit, and cached.
    context_free: ClassVar[bool] = True

    def __init__(self, name: str, num_scores: int) -> None:
        self.name = name
        self.num_scores = num_scores

    @classmethod
    def from_config(cls, name: str, params: dict[str, Any], system: SystemConfig) -> Feature:
        """Build the feature from its config section (``params``, paths already absolute)."""
        raise NotImplementedError

    def default_weights(self) -> list[float] | None:
        """Weights used when the config gives none; None makes a missing weight an error."""
        return None if self.tunable else [1.0] * self.num_scores

    def evaluate(self, phrases: Sequence[PhrasePair] | Sequence[TranslationOption]
                 ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Scores and future-cost estimates of many phrase pairs in isolation, in one batch.

        Returns two ``(len(phrases), num_scores)`` arrays (or None for all zeros): the scores that
        become part of the model score, and estimates that only guide the search (future cost and
        the table limit), such as a language model's score of a phrase without its left context.
        """
        return None, None

    def begin_sentence(self, sentence: Sentence) -> None:
        """Per-sentence set-up, called before the sentence's options are evaluated."""

    def end_sentence(self) -> None:
        """Release per-sentence memory."""


class StatefulFeature(Feature):
    """A feature whose scores depend on the translation built so far."""

    context_free: ClassVar[bool] = True

    def initial_state(self, sentence: Sentence) -> Hashable:
        """The state of the empty hypothesis."""
        raise NotImplementedError

    def extend(self, state: Hashable, hypothesis: Hypothesis, option: TranslationOption) -> tuple[Scores, Hashable]:
        """Scores of appending ``option`` to ``hypothesis`` (whose state is ``state``), and the new state."""
        raise NotImplementedError

    def final(self, state: Hashable) -> Scores | None:
        """Scores added when the hypothesis covers the whole sentence (an LM's ``</s>``); None = zeros."""
        return None


class BatchedStatefulFeature(StatefulFeature):
    """A stateful feature whose scores are computed in batches; ``extend`` is derived from the batch path."""

    def request(self, state: Hashable, hypothesis: Hypothesis, option: TranslationOption | None) -> tuple[int, Hashable]:
        """Queue the scores of appending ``option`` (None: the end of the sentence); return a ticket and the new state."""
        raise NotImplementedError

    def flush(self) -> None:
        """Score every queued request in one batch; their tickets become resolvable."""
        raise NotImplementedError

    def result(self, ticket: int) -> Scores:
        """The scores of a flushed request; valid until :meth:`end_sentence`."""
        raise NotImplementedError

    def buffer_full(self) -> bool:
        """True when the feature wants a flush before more requests arrive."""
        return False

    def extend(self, state: Hashable, hypothesis: Hypothesis, option: TranslationOption) -> tuple[Scores, Hashable]:
        ticket, new_state = self.request(state, hypothesis, option)
        self.flush()
        return self.result(ticket), new_state

    def final(self, state: Hashable) -> Scores | None:
        ticket, _ = self.request(state, None, None)  # type: ignore[arg-type]
        self.flush()
        return self.result(ticket)


def require_param(params: dict[str, Any], key: str, feature: str) -> Any:
    """A mandatory config parameter, with an error naming the feature when it is missing."""
    if key not in params:
        raise PysmtError(f"feature {feature}: missing parameter {key!r}")
    return params[key]
