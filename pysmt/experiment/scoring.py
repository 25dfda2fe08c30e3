"""Scores of every tuned run: dev BLEU of the weights MERT kept, test BLEU and chrF, paired tests, weights.

The dev score is that of the tuning iteration whose weights the tuned config took (``pysmt tune``
keeps the weights whose decode scored the best dev BLEU; its ``weights.txt`` repeats them), so it
is the figure MERT saw, computed again by sacrebleu with its signature. Each configuration's test
output is compared with the baseline's output *of the same optimizer seed* by sacrebleu's paired
bootstrap resampling.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pysmt.config_files import read_weights_file
from pysmt.errors import PysmtError
from pysmt.evaluate import paired_bootstrap, read_text, score
from pysmt.experiment.run_folder import RunFolder
from pysmt.experiment.settings import CONFIGURATIONS


def kept_iteration(tune_dir: Path) -> Path:
    """The ``runN`` folder whose weights the tuned config took (the first one, as the tuner picks)."""
    kept = (tune_dir / "weights.txt").read_text(encoding="utf-8")
    runs = sorted(tune_dir.glob("run[0-9]*"), key=lambda run: int(run.name[3:]))
    for run in runs:
        if (run / "weights.txt").is_file() and (run / "weights.txt").read_text(encoding="utf-8") == kept:
            return run
    raise PysmtError(f"{tune_dir}: no iteration decoded with the tuned weights.txt")


def evaluate_runs(experiment: RunFolder) -> dict[str, Any]:
    """Everything the report shows per run of an experiment, read from its run folder, JSON-ready: ``dev``,
    ``tests``, ``weights``, ``signatures``."""
    dev_refs = [read_text(experiment.dev.target, "dev reference")]
    dev: dict[str, dict[str, Any]] = {}
    weights: dict[str, dict[str, Any]] = {}
    for configuration in CONFIGURATIONS:
        dev[configuration.key], weights[configuration.key] = {}, {}
        for seed in experiment.seeds:
            tune_dir = experiment.tune_dir(configuration, seed)
            run = kept_iteration(tune_dir)
            scores = score(read_text(run / "output.txt", "tuning output"), dev_refs, str(run / "output.txt"))
            dev[configuration.key][str(seed)] = {
                "bleu": scores.bleu,
                "chrf": scores.chrf,
                "iteration": int(run.name[3:]),
            }
            weights[configuration.key][str(seed)] = read_weights_file(tune_dir / "weights.txt")
    tests: dict[str, dict[str, Any]] = {}
    signatures: dict[str, str] = {"bleu": scores.bleu_signature, "chrf": scores.chrf_signature}
    for test in experiment.tests:
        refs = [read_text(experiment.test_files(test).target, f"--test {test} reference")]
        tests[test] = {c.key: {} for c in CONFIGURATIONS}
        for seed in experiment.seeds:
            outputs = {c.key: read_text(experiment.output(test, c, seed), "test output") for c in CONFIGURATIONS}
            p_values, paired = paired_bootstrap(outputs, refs)
            signatures.update({f"paired_{metric}": text for metric, text in paired.items()})
            for configuration in CONFIGURATIONS:
                scores = score(outputs[configuration.key], refs, f"{test} {configuration.key}")
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
