"""Training the RNN on a lent GPU machine from encoded pairs, and bringing the result back.

A GPU machine here is lent for minutes, reached by copying a folder of at most 64 MiB, and returns
files of at most 16 MiB. So the work is split in three, each a subcommand of
``python -m rnn_feature.device_run`` (``scripts/gpu-rnn.sh`` runs them; what they share with the
sentence model's device run is in :mod:`rnn_feature.device_files`):

* ``pack MODEL_DIR BUNDLE [--start RETURNED_DIR]``, here: the encoded pairs and shortlists that
  ``pysmt rnn train`` prepared in a model folder (``--pairs-for`` keeps them small: the filtered news
  pairs are ~20 MB); with ``--start``, an earlier device run's returned weights too (``BUNDLE/start/``),
  so that this run continues that model (the device's minutes are few: a long training is several runs,
  and a later one may use the paper's smaller minibatches). Adadelta's accumulators start afresh.
* ``train BUNDLE OUT``, there: trains ``--preset`` for ``--minutes`` on the GPU with large
  minibatches (:func:`rnn_feature.training.train_prepared`: the same training as on the CPU), scores
  every pair of the bundle with the best weights, and writes to OUT the weights as float16 in
  files under 16 MiB (``weights-N.pt``), the scores as float32 (``scores.npy``, in the bundle's
  pair order: 4 bytes a pair), ``log.tsv`` and ``summary.json`` (updates, pairs/s, epochs, perplexity, the GPU).
* ``unpack OUT MODEL_DIR``, here: a ``model.pt`` made from those weights (float32 again) in the
  model folder whose shortlists the bundle carried, usable by every ``rnn`` command and feature.

This module and what it imports need torch and numpy (and click, for the options pysmt's
training shares), not pysmt's compiled core: the device machine has its own Python.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import numpy as np
import torch

from pysmt.plugin import PysmtError
from pysmt.plugin.neural import LOG, TrainingLimits
from rnn_feature.data import EncodedPairs
from rnn_feature.device_files import (
    RETURNED_BYTES,
    RETURNED_FILES,
    RETURNED_SLACK,
    START,
    check_bundle,
    command_line,
    copy_start,
    fresh_work,
    hyperparameter_overrides,
    one_line_errors,
    print_summary,
    read_weights,
    training_device,
    training_summary,
    write_summary,
    write_weights,
)
from rnn_feature.hyperparameters import Hyperparameters, preset
from rnn_feature.scoring import score_encoded
from rnn_feature.store import LAST, MODEL, SOURCE_VOCAB, TARGET_VOCAB, load_checkpoint, load_model, save_checkpoint
from rnn_feature.training import PAIRS, train_prepared

BUNDLE_FILES = (PAIRS, SOURCE_VOCAB, TARGET_VOCAB)
SCORES = "scores.npy"


def pack(model_dir: Path, bundle: Path, start: Path | None = None) -> None:
    """Copy what a device run needs (the encoded pairs, the shortlists) from a prepared model folder, and
    the weights an earlier run returned (``start``) when this one continues it."""
    missing = [name for name in BUNDLE_FILES if not (model_dir / name).is_file()]
    if missing:
        raise PysmtError(
            f"{model_dir}: no {', '.join(missing)}; "
            f"prepare it with `pysmt rnn train ... --out {model_dir} --max-updates 1`"
        )
    bundle.mkdir(parents=True, exist_ok=True)
    for name in BUNDLE_FILES:
        shutil.copyfile(model_dir / name, bundle / name)
    copy_start(start, bundle)
    check_bundle(bundle)


def train(
    bundle: Path, out: Path, work: Path, hp: Hyperparameters, minutes: float, device: torch.device, valid_every: int
) -> dict:
    """Train in ``work`` for ``minutes``, score every pair, write the weights, scores and summary to ``out``."""
    fresh_work(bundle, work, BUNDLE_FILES, (LAST, MODEL, LOG))
    out.mkdir(parents=True, exist_ok=True)
    pairs = EncodedPairs.load(work / PAIRS)
    limits = TrainingLimits(max_time=minutes * 60, valid_every=valid_every, checkpoint_every=valid_every)
    started_from, start = read_weights(bundle / START) if (bundle / START).is_dir() else ({}, None)
    best = train_prepared(pairs, work, hp, device, limits, start)
    last = load_checkpoint(work / LAST)
    started = time.perf_counter()
    model, _, _ = load_model(work, device)
    scores = score_encoded(model, pairs.source, pairs.target, batch_size=4 * hp.batch_size)
    scoring = time.perf_counter() - started
    np.save(out / SCORES, scores.astype(np.float32))
    state = load_checkpoint(work / MODEL)
    meta = {key: state[key] for key in ("hyperparameters", "update", "source_size", "target_size", "valid_perplexity")}
    budget = RETURNED_BYTES - RETURNED_SLACK - (out / SCORES).stat().st_size
    weights, _ = write_weights(state["model"], meta, out, budget, RETURNED_FILES - 3)
    shutil.copyfile(work / LOG, out / LOG)
    updates, seconds = int(last["update"]), float(last["seconds"])
    summary = training_summary(device, hp, len(pairs), updates, seconds, best, weights, started_from)
    summary["scoring_pairs_s"] = len(pairs) / scoring
    write_summary(out, summary)
    return summary


def unpack(out: Path, model_dir: Path) -> Path:
    """``model.pt`` (float32) in ``model_dir`` from a device run's weights files; returns its path."""
    meta, weights = read_weights(out)
    for name in (SOURCE_VOCAB, TARGET_VOCAB):
        if not (model_dir / name).is_file():
            raise PysmtError(f"{model_dir}: no {name}: unpack into the model folder the bundle was packed from")
    save_checkpoint(model_dir / MODEL, {**meta, "model": weights})
    load_model(model_dir)  # the shortlists fit the weights, or one clear line
    return model_dir / MODEL


def main(argv: list[str] | None = None) -> None:
    parser = command_line(
        "python -m rnn_feature.device_run", __doc__.split("\n\n")[0], "paper", 512, 500, "/tmp/rnn-device-run"
    )
    args = parser.parse_args(argv)
    with one_line_errors("rnn device run"):
        if args.command == "pack":
            pack(args.model_dir, args.bundle, args.start)
        elif args.command == "train":
            hp = preset(args.preset, batch_size=args.batch_size, **hyperparameter_overrides(Hyperparameters, args.hp))
            device = training_device(args.device)
            print_summary(train(args.bundle, args.out, args.work, hp, args.minutes, device, args.valid_every))
        else:
            print(unpack(args.out, args.model_dir))


if __name__ == "__main__":
    main()
