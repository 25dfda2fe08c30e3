"""Everything a plugin needs from pysmt, from one place::

    from pysmt.plugin import Feature, Path, PysmtError, TranslationOption, parameter

The feature contract, imported from ``pysmt.plugin`` itself:

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
* ``FORBIDDEN`` (-inf): the score that forbids a translation; :class:`ForcesOutput` for a feature that forces
  each line's output (forced decoding), so that a line it forced nothing reachable for is an empty line, not an
  error;
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

What a plugin with models to train and commands of its own needs besides, one topic a module:

* :mod:`pysmt.plugin.neural`: devices, checkpoints, hyperparameters saved in them, a resumable
  training run (its job record, limits, the loop) and a model's vocabulary coverage;
* :mod:`pysmt.plugin.files`: pysmt's text I/O (compressed or not, written atomically), checks that
  outputs are never inputs, array files, progress bars, errors that name a file's line;
* :mod:`pysmt.plugin.commands`: click options made from dataclass fields, ``--threads`` for torch;
* :mod:`pysmt.plugin.systems`: a trained system as pysmt reads it: its config, its binary phrase
  table, its text preparation, its phrase table filtered to an input.

The contract's names load on first use (:func:`__getattr__`; the errors and ``Path`` at once): the
contract needs pysmt's compiled core, and the errors and the neural, file and command helpers must
import without it, on a lent GPU machine that trains a plugin's model with its own Python
(``rnn_feature.device_run``).

Tests use :mod:`pysmt.testing`. The contract itself is documented in ``docs/writing-a-feature.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pysmt.errors import FeatureError, PysmtError

if TYPE_CHECKING:  # what __getattr__ returns, as the type checker sees it
    from pysmt.plugin.contract import (
        FORBIDDEN,
        BatchedStatefulFeature,
        CompiledScorer,
        CompiledScores,
        ContextTable,
        Feature,
        ForcesOutput,
        NoParameters,
        PhrasePair,
        ScoreWriter,
        Sentence,
        StatefulFeature,
        StoredColumns,
        StoredScores,
        SystemConfig,
        TranslationFeature,
        TranslationOption,
        WordScores,
        parameter,
        stored_scores,
        table_coverage_warnings,
    )

#: The feature contract's names (:mod:`pysmt.plugin.contract` lists the same; a test keeps them equal).
__all__ = [
    "FORBIDDEN",
    "BatchedStatefulFeature",
    "CompiledScorer",
    "CompiledScores",
    "ContextTable",
    "Feature",
    "FeatureError",
    "ForcesOutput",
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


def __getattr__(name: str) -> object:
    """A name of the feature contract, loaded with it on first use (and kept). Any other name is no attribute, so
    that ``from pysmt.plugin import neural`` imports the submodule without loading the contract."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from pysmt.plugin import contract

    value = getattr(contract, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The contract's names too, before they are loaded (for ``dir()`` and completion)."""
    return sorted(set(globals()) | set(__all__))
