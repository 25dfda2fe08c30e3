"""Scores of every tuned run: dev BLEU of the weights MERT kept, test BLEU and chrF, paired tests, weights.

The dev score is that of the tuning iteration whose weights the tuned config took (``pysmt tune``
keeps the weights whose decode scored the best dev BLEU; its ``weights.txt`` repeats them), so it
is the figure MERT saw, computed again by sacrebleu with its signature. Each configuration's test
output is compared with the baseline's output *of the same optimizer seed* by sacrebleu's paired
bootstrap resampling.

A row that re-ranks another's tuned config (``pysmt tune --rerank``) decodes the dev set once: its
iterations re-rank that decode's n-best lists, so its dev BLEU is the one the tuner recorded for the kept
iteration (sacrebleu's, summed from the candidates' statistics: what the decoder's re-ranked 1-best
scores), and it has no dev chrF.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pysmt.config_files import read_weights_file
from pysmt.errors import PysmtError
from pysmt.evaluate import paired_bootstrap, read_text, score
from pysmt.experiment.run_folder import RunFolder
from pysmt.experiment.settings import Configuration


def kept_iteration(weights: Path) -> Path:
    """The ``runN`` folder whose weights the tuned config took (the first one, as the tuner picks): the one whose
    ``weights.txt`` is the tuning folder's ``weights`` file."""
    kept, tune_dir = weights.read_text(encoding="utf-8"), weights.parent
    runs = sorted(tune_dir.glob("run[0-9]*"), key=lambda run: int(run.name[3:]))
    for run in runs:
        if (run / "weights.txt").is_file() and (run / "weights.txt").read_text(encoding="utf-8") == kept:
            return run
    raise PysmtError(
        f"{tune_dir}: no iteration {'decoded' if weights.name == 'weights.txt' else 're-ranked'} with "
        f"the tuned {weights.name}"
    )


def reranked_bleu(tune_dir: Path, iteration: int) -> float:
    """The dev BLEU ``pysmt tune --rerank`` recorded in ``summary.tsv`` for an iteration: its weights' re-ranking
    of the one decode's n-best lists (sacrebleu's corpus BLEU, summed from per-candidate statistics)."""
    summary = tune_dir / "summary.tsv"
    rows = [line.split("\t") for line in summary.read_text(encoding="utf-8").splitlines()]
    column = rows[0].index("dev_bleu")
    for row in rows[1:]:
        if row[0] == str(iteration):
            return float(row[column])
    raise PysmtError(f"{summary}: no iteration {iteration}")


def dev_run(experiment: RunFolder, configuration: Configuration, seed: int, refs: list[list[str]]) -> dict[str, Any]:
    """The dev scores of the weights a tuning kept, and their iteration. A re-ranking row's iterations after the
    first decode nothing (they re-rank the first one's lists): its BLEU is the tuner's, and it has no chrF."""
    run = kept_iteration(experiment.tuned_weights(configuration, seed))
    iteration = int(run.name[3:])
    if configuration.reranks is not None:
        return {"bleu": reranked_bleu(run.parent, iteration), "chrf": None, "iteration": iteration}
    scores = score(read_text(run / "output.txt", "tuning output"), refs, str(run / "output.txt"))
    return {"bleu": scores.bleu, "chrf": scores.chrf, "iteration": iteration}


def evaluate_runs(experiment: RunFolder) -> dict[str, Any]:
    """Everything the report shows per run of an experiment, read from its run folder, JSON-ready: ``dev``,
    ``tests``, ``weights``, ``signatures``."""
    configurations = experiment.configurations
    dev_refs = [read_text(experiment.dev.target, "dev reference")]
    dev: dict[str, dict[str, Any]] = {}
    weights: dict[str, dict[str, Any]] = {}
    for configuration in configurations:
        dev[configuration.key], weights[configuration.key] = {}, {}
        for seed in experiment.seeds:
            dev[configuration.key][str(seed)] = dev_run(experiment, configuration, seed, dev_refs)
            weights[configuration.key][str(seed)] = read_weights_file(experiment.tuned_weights(configuration, seed))
    tests: dict[str, dict[str, Any]] = {}
    signatures: dict[str, str] = {}
    for test in experiment.tests:
        refs = [read_text(experiment.test_files(test).target, f"--test {test} reference")]
        tests[test] = {c.key: {} for c in configurations}
        for seed in experiment.seeds:
            outputs = {c.key: read_text(experiment.output(test, c, seed), "test output") for c in configurations}
            p_values, paired = paired_bootstrap(outputs, refs)
            signatures.update({f"paired_{metric}": text for metric, text in paired.items()})
            for configuration in configurations:
                scores = score(outputs[configuration.key], refs, f"{test} {configuration.key}")
                signatures.update(bleu=scores.bleu_signature, chrf=scores.chrf_signature)
                tests[test][configuration.key][str(seed)] = {
                    "bleu": scores.bleu,
                    "chrf": scores.chrf,
                    "bleu_text": scores.bleu_text,
                    **(
                        {f"p_{m}": p for m, p in p_values[configuration.key].items()}
                        if configuration.key in p_values
                        else {}
                    ),
                }
    return {"dev": dev, "tests": tests, "weights": weights, "signatures": signatures}
