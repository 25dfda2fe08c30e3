"""``pysmt experiment``, whose options are :class:`~pysmt.experiment.options.ExperimentOptions`'s fields
(:mod:`pysmt.cli_options`): the command runs the chain of stages, then writes the report.

The chain's modules (the tuning loop, the feature registry) take longer to import than most commands
take to run, so they load when the command runs, not when ``pysmt`` builds its command line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from pysmt.cli_options import from_command, options_of
from pysmt.experiment.options import ExperimentOptions
from pysmt.experiment.settings import SCALES
from pysmt.shared_options import search_overrides, search_setting_options


@click.command()
@options_of(ExperimentOptions)
@search_setting_options
def experiment(**given: Any) -> None:
    """Reproduce Table 1 of Cho et al. (2014): Baseline, +RNN, +CSLM+RNN, +CSLM+RNN+WP, tuned and tested.

    Besides the paper's rows: +RNN+WP, and Baseline and CSLM+RNN+WP re-ranked by a sentence model
    (their tuned configs, rescoring weights tuned by pysmt tune --rerank); --configurations chooses rows.
    Every stage (data, system, RNN, CSLM, the sentence model, tuning per configuration and seed, decoding,
    analyses, scores) records its options and inputs and is skipped when done: rerun the same command to
    resume; changed options or inputs are refused, naming each difference, unless --force. More
    --seeds or --test sets may be added to a finished run. With --cluster, every stage runs on the
    cluster, those that do not need each other at the same time (each tuning, each test decode),
    each asking for --threads CPUs, its memory and a GPU for neural work; every node must see the
    run folder and the data (a shared filesystem). Each stage's messages go to stages/NAME/log.txt.
    Search settings (--stack ...) go to every tuning and test decode (--weight-overwrite: the tunings' starting
    weights only) and into results.json.
    """
    scale = SCALES[given["scale"]]
    options = from_command(
        ExperimentOptions,
        given,
        seeds=given["seeds"] or scale.seeds,
        dev_size=given["dev_size"] or scale.dev_size,
        budget=given["budget"] or scale.budget,
        search_settings=search_overrides(given),
    )
    report = run_experiment(options)
    click.echo(f"pysmt experiment: wrote {report} and {report.parent / 'results.json'}")


def run_experiment(options: ExperimentOptions) -> Path:
    """Run (or resume) every stage, then write the report; return report.md's path."""
    from pysmt.experiment.chain import EVALUATION, Experiment
    from pysmt.experiment.report import caveat_lines, write_report
    from pysmt.experiment.stages import log
    from pysmt.files.outputs import check_outputs
    from pysmt.files.textio import read_json
    from pysmt.running.folder_lock import locked_folder

    check_outputs({}, {"--data": options.data})  # stderr (its log) is no input
    experiment = Experiment(options)
    with locked_folder(experiment.run_dir):  # one experiment per folder (its stages and commands lock their own)
        experiment.run()
        evaluation = read_json(experiment.run_dir / EVALUATION)
        for line in caveat_lines(evaluation):  # said where the user looks, not only in the report
            log(f"warning: {line}")
        return write_report(experiment, evaluation)
