"""How a feature's text table becomes a binary one: which features have binarizable tables, and the
loader settings each binary table records.

Shared by ``pysmt binarize`` (:mod:`pysmt.binarize`) and ``pysmt train``'s binarize step
(:mod:`pysmt.training.pipeline`), two commands that may not import each other: both write tables that
load exactly as the text ones would for the feature that names them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pysmt.config import FeatureSpec
from pysmt.features.parameters import values_of
from pysmt.features.registry import feature_class
from pysmt.models.binary_table import PHRASE_TABLE, REORDERING_TABLE
from pysmt.models.binary_writer import binarize_table

#: Feature types whose table can be binarized, and the kind of binary table each becomes.
BINARIZABLE = {"phrase-table": PHRASE_TABLE, "lexical-reordering": REORDERING_TABLE}


def table_options(spec: FeatureSpec) -> dict[str, Any]:
    """The loader settings a feature reads its table with, which the binary table records."""
    params = values_of(feature_class(spec.type).parameters, spec.name, spec.params)
    if spec.type == "phrase-table":
        return {"log_scores": params.log_scores}
    from pysmt.features.lexical_reordering import ReorderingModelType

    kind = ReorderingModelType(params.model)
    return {"num_scores": kind.table_scores, "source_only": kind.source_only}


def binarize_feature_table(
    spec: FeatureSpec, out_dir: Path, memory: int, temp_dir: Path | None, settings: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Binarize the text table a phrase-table or lexical-reordering feature names into ``out_dir``; return its
    header. ``settings``: :func:`table_options` of ``spec`` when the caller checked them before any work."""
    return binarize_table(
        spec.params["path"],
        out_dir,
        BINARIZABLE[spec.type],
        memory=memory,
        temp_dir=temp_dir,
        **(settings if settings is not None else table_options(spec)),
    )
