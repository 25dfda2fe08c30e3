"""sacrebleu scoring and paired significance tests, as `pysmt evaluate` and `pysmt experiment` report them.

Scores are sacrebleu's own objects and numbers (corpus BLEU and chrF with their default settings,
on raw detokenized text), so a figure here is the figure ``sacrebleu REF -i HYP -m bleu chrf``
prints, and every score carries its signature. The paired test is sacrebleu's paired bootstrap
resampling (``sacrebleu.significance.PairedTest`` with ``test_type="bs"``, 1,000 resamples, its
fixed seed ``SACREBLEU_SEED`` = 12345 unless the environment sets another): the same inputs give
the same p-values.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.significance import PairedTest

from pysmt.errors import PysmtError
from pysmt.files.textio import read_lines, require_file

#: Resamples of the paired bootstrap test (sacrebleu's default).
BOOTSTRAP_SAMPLES = 1000


@dataclass(frozen=True)
class Scores:
    """Corpus BLEU and chrF of one output, with sacrebleu's signatures and BLEU's formatted line."""

    bleu: float
    chrf: float
    bleu_signature: str
    chrf_signature: str
    bleu_text: str


def read_text(path: Path, label: str) -> list[str]:
    """The lines of a text file (plain or gzip, UTF-8 checked); a missing file is an error naming ``label``."""
    require_file(path, label)
    return [text for _, text in read_lines(path)]


def check_parallel(hypotheses: Sequence[str], references: Sequence[Sequence[str]], where: str) -> None:
    """Every reference has one line per hypothesis line (sacrebleu would fail with a traceback)."""
    for reference in references:
        if len(reference) != len(hypotheses):
            raise PysmtError(f"{where}: {len(hypotheses):,} output lines but {len(reference):,} reference lines")


def score(hypotheses: Sequence[str], references: Sequence[Sequence[str]], where: str = "output") -> Scores:
    """sacrebleu's corpus BLEU and chrF of ``hypotheses`` against ``references`` (one list per reference)."""
    check_parallel(hypotheses, references, where)
    bleu, chrf = BLEU(), CHRF()
    bleu_score = bleu.corpus_score(list(hypotheses), [list(r) for r in references])
    chrf_score = chrf.corpus_score(list(hypotheses), [list(r) for r in references])
    return Scores(
        bleu_score.score, chrf_score.score, str(bleu.get_signature()), str(chrf.get_signature()), str(bleu_score)
    )


def p_value(result: object) -> float:
    """The p-value of a system's paired test result (sacrebleu types the results loosely)."""
    value = getattr(result, "p_value", None)
    if value is None:
        raise ValueError(f"sacrebleu's paired test gave no p-value: {result!r}")
    return float(value)


def paired_bootstrap(
    systems: Mapping[str, Sequence[str]], references: Sequence[Sequence[str]], samples: int = BOOTSTRAP_SAMPLES
) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    """p-values of each system against the first (the baseline), for BLEU and chrF, by paired bootstrap.

    Returns ``{system: {"bleu": p, "chrf": p}}`` for every system but the first, and the test's
    signatures ``{"bleu": ..., "chrf": ...}`` (they name the resamples and the seed). A system
    whose output equals the baseline's gets p = 1: sacrebleu's test would give it its smallest
    p-value, 1 / (samples + 1), since no resample differs by more than the observed 0.
    """
    named = list(systems.items())
    if not named:
        raise ValueError("paired_bootstrap needs a baseline")
    for name, hypotheses in named:
        check_parallel(hypotheses, references, name)
    same = {name for name, hypotheses in named[1:] if list(hypotheses) == list(named[0][1])}
    different = [named[0], *((name, hyps) for name, hyps in named[1:] if name not in same)]
    p_values = {name: {"bleu": 1.0, "chrf": 1.0} for name in same}
    test = PairedTest(
        different, {"bleu": BLEU(), "chrf": CHRF()}, [list(r) for r in references], test_type="bs", n_samples=samples
    )
    signatures, results = test() if len(different) > 1 else (test._signatures, {})
    keys = dict(zip(("bleu", "chrf"), signatures))  # sacrebleu renames the metrics (BLEU, chrF2)
    for k, (name, _) in enumerate(different[1:], start=1):
        p_values[name] = {metric: p_value(results[key][k]) for metric, key in keys.items()}
    p_of = {name: p_values[name] for name, _ in named[1:]}
    return p_of, {metric: str(signatures[key]) for metric, key in keys.items()}


def mean_sd(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (n - 1, as Clark et al. 2011 report); sd is NaN for one value."""
    if not values:
        raise ValueError("mean_sd of no values")
    mean = statistics.fmean(values)
    return mean, statistics.stdev(values) if len(values) > 1 else math.nan
