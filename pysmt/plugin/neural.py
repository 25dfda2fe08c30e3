"""What neural plugins share with pysmt's own (:mod:`pysmt.neural`): devices (:func:`resolve_device`),
checkpoints (:func:`save_checkpoint`, :func:`load_checkpoint`, a model folder's ``MODEL``, ``LAST``
and ``LOG``) with their :class:`Hyperparameters`, a resumable training run (:func:`start_training_job`,
its ``JOB_FILE``; :func:`resume_or_start` from ``FRESH_STATE``; :func:`train_loop` over a
:class:`TrainingTask` within :class:`TrainingLimits`), a model's vocabulary coverage of the system
(:func:`coverage_warning`, :func:`coverage_note`) and an exception's :func:`first_line`.

Imports neither torch nor pysmt's compiled core: a model trains where neither is built in."""

from pysmt.neural import (
    FRESH_STATE,
    LAST,
    LOG,
    MODEL,
    Hyperparameters,
    TrainingLimits,
    TrainingTask,
    coverage_note,
    coverage_warning,
    first_line,
    load_checkpoint,
    resolve_device,
    resume_or_start,
    save_checkpoint,
    start_training_job,
    train_loop,
)
from pysmt.running.jobs import JOB_FILE

__all__ = [
    "FRESH_STATE",
    "JOB_FILE",
    "LAST",
    "LOG",
    "MODEL",
    "Hyperparameters",
    "TrainingLimits",
    "TrainingTask",
    "coverage_note",
    "coverage_warning",
    "first_line",
    "load_checkpoint",
    "resolve_device",
    "resume_or_start",
    "save_checkpoint",
    "start_training_job",
    "train_loop",
]
