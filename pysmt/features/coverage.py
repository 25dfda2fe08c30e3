"""A neural model's coverage of the system, checked before any table loads.

A model of the other language or direction (an RNN trained en->fr on a fr->en system, a CSLM of the
source language) still gives numbers: every word is unknown to it. Its most frequent target words
(its shortlist's first words) are compared with each binary phrase table's target vocabulary, read in
milliseconds from two arrays: on Multi30k, the 500 most frequent target words of the system's own RNN
are all in its table's vocabulary, those of its source side (English, as a reversed model's would be)
20% of them. Text tables are skipped, their vocabulary being known only once loaded; the neural
features also warn at the first sentence, from the words they are asked about.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pysmt.config import SystemConfig
from pysmt.models.binary_table import target_vocabulary
from pysmt.neural import LOW_COVERAGE

#: How many of a model's most frequent target words are looked up.
FREQUENT_WORDS = 500
#: Below this many words, a shortlist says too little to warn about.
FEWEST_WORDS = 50


def table_coverage_warnings(feature: str, shortlist: Sequence[str], model: Path, system: SystemConfig) -> list[str]:
    """One warning for each binary phrase table of ``system`` whose target vocabulary holds fewer than
    :data:`~pysmt.neural.LOW_COVERAGE` of the model's :data:`FREQUENT_WORDS` most frequent target words
    (``shortlist``: its words, most frequent first, without its symbols)."""
    words = list(shortlist[:FREQUENT_WORDS])
    if len(words) < FEWEST_WORDS:
        return []
    warnings = []
    for spec in system.features:
        table = Path(str(spec.params.get("path", "")))
        if spec.type != "phrase-table" or not table.is_dir():
            continue
        vocabulary = target_vocabulary(table)
        if vocabulary is None:
            continue
        covered = sum(1 for word in words if word in vocabulary) / len(words)
        if covered < LOW_COVERAGE:
            warnings.append(
                f"pysmt: warning: feature {feature}: only {covered:.0%} of the {len(words)} most frequent target "
                f"words of {model} are in the target vocabulary of {table}; was it trained on this system's "
                "languages, direction and tokenization?"
            )
    return warnings
