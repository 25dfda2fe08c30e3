"""Everything a feature plugin needs, from one place::

    from pysmt.plugin import Feature, Path, PysmtError, TranslationOption, parameter

* the base classes: :class:`Feature` (stateless: ``evaluate_in_isolation`` or
  ``evaluate_with_source_context``), :class:`StatefulFeature` (``extend``),
  :class:`BatchedStatefulFeature` (the array interface: ``start`` and ``score_batch``),
  :class:`TranslationFeature` (complete translations after the search: ``score_translations``);
* what features see: :class:`PhrasePair`, :class:`TranslationOption`, :class:`Sentence` and
  :class:`SystemConfig` (the system, whose ``directory`` relative defaults start from);
* a feature's parameters: a dataclass set as its ``parameters``, each field declared with
  :func:`parameter` (default, help) and annotated with its kind: ``int``, ``float``, ``bool``, ``str``
  or :class:`Path` (pathlib's: a file or folder, made absolute and checked to exist), optionally
  ``| None``; :class:`NoParameters` for a feature that takes none;
* errors: :class:`PysmtError` for a user's mistake (``PysmtError("feature NAME: ...")``: pysmt adds
  the config file), :class:`FeatureError` is what the decoder raises for a feature's unusable
  result;
* ``FORBIDDEN`` (-inf): the score that forbids a translation;
* :class:`ContextTable`: compiled bookkeeping for an n-gram feature (its states are numbered contexts of
  the last n - 1 target words; the CSLM uses it), see ``docs/writing-a-feature.md``;
* scores stored with a binary phrase table: :class:`StoredScores` (what a per-sentence feature
  declares to have the decoder read them), :class:`StoredColumns` (to have them count as the table's
  own columns, in the table limit's ranking), :func:`stored_scores` (reading them) and
  :class:`ScoreWriter` (storing them, as ``pysmt rnn score`` does);
* :func:`table_coverage_warnings`: a neural model's most frequent target words against the binary phrase
  tables' vocabularies, for a feature's ``check_config`` (a model of the other language, found before
  any table loads);
* compiled work in place of Python: :class:`CompiledScores` with :class:`WordScores` (a context-free
  score or estimate that sums a value per target word, computed by the option builder), and
  :class:`CompiledScorer` (a stateful feature's scorer in C or C++: ``pysmt/compiled_scorer.h``).

Tests use :mod:`pysmt.testing`. The contract itself is documented in ``docs/writing-a-feature.md``.
"""

from pathlib import Path

from pysmt._contexts import ContextTable
from pysmt._core import WordScores
from pysmt.config import SystemConfig
from pysmt.errors import FeatureError, PysmtError
from pysmt.features.base import (
    FORBIDDEN,
    BatchedStatefulFeature,
    CompiledScorer,
    CompiledScores,
    Feature,
    StatefulFeature,
    StoredColumns,
    StoredScores,
    TranslationFeature,
)
from pysmt.features.coverage import table_coverage_warnings
from pysmt.features.parameters import NoParameters, parameter
from pysmt.models.binary_table import stored_scores
from pysmt.models.binary_writer import ScoreWriter
from pysmt.phrases import PhrasePair, Sentence, TranslationOption

__all__ = [
    "FORBIDDEN",
    "BatchedStatefulFeature",
    "CompiledScorer",
    "CompiledScores",
    "ContextTable",
    "Feature",
    "FeatureError",
    "NoParameters",
    "Path",
    "PhrasePair",
    "PysmtError",
    "ScoreWriter",
    "Sentence",
    "StatefulFeature",
    "TranslationFeature",
    "StoredColumns",
    "StoredScores",
    "SystemConfig",
    "TranslationOption",
    "WordScores",
    "parameter",
    "stored_scores",
    "table_coverage_warnings",
]
