"""``pysmt experiment``: the paper's Table 1 (Cho et al. 2014) reproduced in one resumable command.

``chain`` runs the stages (data, system, RNN, CSLM, MERT per configuration and seed, decoding,
analyses, scores), ``stages`` makes each one resumable and measured, ``scoring`` and ``report``
turn the outputs into ``results.json`` and ``report.md``, ``run_folder`` says where the outputs
are, ``settings`` holds the configurations and the scales.
"""

from __future__ import annotations

from pathlib import Path

from pysmt.experiment.chain import Experiment, ExperimentOptions


def run_experiment(options: ExperimentOptions) -> Path:
    """Run (or resume) every stage, then write the report; return report.md's path."""
    import json

    from pysmt.experiment.chain import EVALUATION
    from pysmt.experiment.report import caveat_lines, write_report
    from pysmt.experiment.stages import log
    from pysmt.folder_lock import locked_folder

    experiment = Experiment(options)
    with locked_folder(experiment.run_dir):  # one experiment per folder (its stages and commands lock their own)
        experiment.run()
        evaluation = json.loads((experiment.run_dir / EVALUATION).read_text(encoding="utf-8"))
        for line in caveat_lines(evaluation):  # said where the user looks, not only in the report
            log(f"warning: {line}")
        return write_report(experiment, evaluation)


__all__ = ["Experiment", "ExperimentOptions", "run_experiment"]
