"""``pysmt experiment``, whose options are :class:`~pysmt.experiment.chain.ExperimentOptions`'s fields
(:mod:`pysmt.cli_options`).

It lives beside the chain, and ``pysmt`` imports it only when it is used (:data:`pysmt.cli.LAZY_COMMANDS`):
the chain's modules (the tuning loop, the feature registry) take longer to import than most commands take
to run.
"""

from __future__ import annotations

from typing import Any

import click

from pysmt.cli_options import from_command, options_of
from pysmt.experiment import ExperimentOptions, run_experiment
from pysmt.experiment.settings import SCALES


@click.command()
@options_of(ExperimentOptions)
def experiment(**given: Any) -> None:
    """Reproduce Table 1 of Cho et al. (2014): Baseline, +RNN, +CSLM+RNN, +CSLM+RNN+WP, tuned and tested.

    Every stage (data, system, RNN, CSLM, MERT per configuration and seed, decoding, analyses,
    scores) records its options and inputs and is skipped when done: rerun the same command to
    resume; changed options or inputs are refused, naming each difference, unless --force. More
    --seeds or --test sets may be added to a finished run. With --cluster, every stage runs on the
    cluster, those that do not need each other at the same time (each tuning, each test decode),
    each asking for --threads CPUs, its memory and a GPU for neural work; every node must see the
    run folder and the data (a shared filesystem). Each stage's messages go to stages/NAME/log.txt.
    """
    scale = SCALES[given["scale"]]
    options = from_command(ExperimentOptions, given, seeds=given["seeds"] or scale.seeds,
                           dev_size=given["dev_size"] or scale.dev_size, budget=given["budget"] or scale.budget)
    report = run_experiment(options)
    click.echo(f"pysmt experiment: wrote {report} and {report.parent / 'results.json'}")
