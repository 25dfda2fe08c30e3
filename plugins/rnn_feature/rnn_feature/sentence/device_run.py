"""Training the sentence model on a lent GPU machine, and bringing the result back (``scripts/gpu-sentence.sh``).

Three subcommands of ``python -m rnn_feature.sentence.device_run``, as for the phrase RNN
(:mod:`rnn_feature.device_run`; what both share is in :mod:`rnn_feature.device_files`):

* ``pack MODEL_DIR BUNDLE [--start RETURNED_DIR]``, here: from a model folder that ``pysmt sentence train
  --system SYSTEM --out MODEL_DIR --preset gpu --max-updates 1`` prepared, its subword model, its job
  record (the direction and seed the bitext was encoded and split with) and its encoded bitext, the ids
  stored small and compressed (``bitext-compact.npz``: 4.6 MB for the news bitext, 22.6 MB as
  ``bitext.npz``); a bundle larger than a device run carries is one line. With ``--start``, an earlier run's
  returned weights too (``BUNDLE/start/``): this run continues that model from the update where it stopped
  (Adam afresh).
* ``train BUNDLE OUT``, there: ``--preset`` (``gpu``) for ``--minutes``
  (:func:`rnn_feature.sentence.training.train_prepared`: the same training as on a CPU), then writes to OUT
  the best weights (``weights-N.pt``, each under 16 MiB), ``log.tsv`` and ``summary.json``: updates,
  pairs/s, epochs, the validation perplexity of the trained weights and of the returned ones (measured
  there on the returned files themselves), which weights went int8, the GPU.
* ``unpack OUT MODEL_DIR``, here: ``model.pt`` (float32) from the returned weights, in the model folder the
  bundle was packed from (its subword model must be the one the device trained with), for the ``sentence``
  feature and ``pysmt sentence translate``.

The ``gpu`` preset has 56.1 M parameters at 16,000 subwords: 112 MB as float16, more than the 64 MiB a
device run returns. So its largest matrices come back as int8 with a scale per row (the embeddings, the
output layer, the GRUs' matrices: :func:`rnn_feature.device_files.plan_weights`), 61 MiB in 5 files; a
smaller model comes back all float16. Rerunning ``pysmt sentence train`` on the model folder afterwards
resumes its own ``last.pt`` (the preparing run's one update), not the returned model, and overwrites
``model.pt`` at its first validation: continue a returned model with ``pack --start`` instead.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import torch

from pysmt.plugin import PysmtError
from pysmt.plugin.neural import FRESH_STATE, JOB_FILE, LOG, TrainingLimits
from rnn_feature import device_files
from rnn_feature.sentence.data import ENCODED, EncodedBitext, split
from rnn_feature.sentence.hyperparameters import SentenceHyperparameters, preset
from rnn_feature.sentence.store import LAST, MODEL, build_model, load_checkpoint, load_model, save_checkpoint
from rnn_feature.sentence.subwords import SUBWORDS, Subwords
from rnn_feature.sentence.training import JOB_COMMAND, perplexity, train_prepared

COMPACT = "bitext-compact.npz"
BUNDLE_FILES = (SUBWORDS, JOB_FILE, COMPACT)
#: What the job record fixes for the device run: the subword units, the direction the targets were encoded in,
#: the seed of the held-out slice.
FROM_JOB = ("subwords", "right_to_left", "seed")
#: The hyperparameters that give the weights their shapes and meaning.
SHAPE = ("embedding", "hidden", "attention", "maxout", "right_to_left")
PREPARE = "pysmt sentence train --system SYSTEM --out {} --preset gpu --max-updates 1"


def pack(model_dir: Path, bundle: Path, start: Path | None = None) -> int:
    """Copy what a device run needs from a prepared model folder (the bitext compacted), and the weights an
    earlier run returned (``start``) when this one continues it; the bundle's size in bytes."""
    missing = [name for name in (SUBWORDS, ENCODED, JOB_FILE) if not (model_dir / name).is_file()]
    if missing:
        raise PysmtError(f"{model_dir}: no {', '.join(missing)}; prepare it with `{PREPARE.format(model_dir)}`")
    job_hyperparameters(model_dir / JOB_FILE)
    bundle.mkdir(parents=True, exist_ok=True)
    for name in (SUBWORDS, JOB_FILE):
        shutil.copyfile(model_dir / name, bundle / name)
    bitext = EncodedBitext.load(model_dir / ENCODED)
    device_files.save_compact(bundle / COMPACT, source=bitext.source, target=bitext.target)
    device_files.copy_start(start, bundle)
    return device_files.check_bundle(bundle)


def job_hyperparameters(path: Path) -> dict[str, Any]:
    """The hyperparameters a sentence model folder's job record holds, or one line."""
    try:
        job = json.loads(path.read_text())
    except (OSError, ValueError):
        raise PysmtError(f"{path}: not a readable job record") from None
    if not isinstance(job, dict) or job.get("command") != JOB_COMMAND or not isinstance(job.get("options"), dict):
        raise PysmtError(f"{path}: not a sentence model's job record; prepare one with `{PREPARE.format(path.parent)}`")
    options: dict[str, Any] = job["options"]
    return options


def device_hyperparameters(
    bundle: Path, name: str, batch_size: int | None, overrides: dict[str, Any]
) -> SentenceHyperparameters:
    """Preset ``name`` with the job's subwords, direction and seed, then ``--batch-size`` and ``--hp``."""
    job = job_hyperparameters(bundle / JOB_FILE)
    changes = {key: job[key] for key in FROM_JOB if key in job} | ({"batch_size": batch_size} if batch_size else {})
    try:
        hp = preset(name, **(changes | overrides))
    except ValueError as err:
        raise PysmtError(f"--preset: {err}") from None
    if hp.right_to_left != bool(job.get("right_to_left")):
        raise PysmtError(f"--hp right_to_left={hp.right_to_left}: the bundle's bitext was encoded the other way")
    return hp


def start_from(work: Path, hp: SentenceHyperparameters, meta: dict[str, Any], weights: dict[str, torch.Tensor]) -> int:
    """A ``last.pt`` in ``work`` holding an earlier run's returned weights, which :func:`train_prepared` then
    resumes from their update on (the optimizer and the clock afresh); that update."""
    missing = [key for key in ("hyperparameters", "vocabulary", "update") if key not in meta]
    if missing:
        raise PysmtError(f"the weights to start from lack {', '.join(missing)}: not a sentence model's device run")
    given = SentenceHyperparameters.from_dict(meta["hyperparameters"])
    differ = [
        f"{key} {getattr(given, key)} given, {getattr(hp, key)} here"
        for key in SHAPE
        if getattr(given, key) != getattr(hp, key)
    ]
    vocabulary = len(Subwords(work / SUBWORDS))
    if int(meta["vocabulary"]) != vocabulary:
        differ.append(f"{meta['vocabulary']:,} subwords given, {vocabulary:,} here")
    if differ:
        raise PysmtError(f"the weights to start from do not fit the {hp.preset} model: {'; '.join(differ)}")
    update = int(meta["update"])
    state = {
        **FRESH_STATE,
        "hyperparameters": hp.to_dict(),
        "model": weights,
        "update": update,
        "vocabulary": vocabulary,
    }
    save_checkpoint(work / LAST, state)
    return update


def train(
    bundle: Path,
    out: Path,
    work: Path,
    hp: SentenceHyperparameters,
    minutes: float,
    device: torch.device,
    valid_every: int,
) -> dict[str, Any]:
    """Train in ``work`` for ``minutes``; write the best weights, ``log.tsv`` and the summary to ``out``."""
    device_files.fresh_work(bundle, work, (SUBWORDS,), (LAST, MODEL, LOG))
    out.mkdir(parents=True, exist_ok=True)
    sides = device_files.load_compact(bundle / COMPACT)
    bitext = EncodedBitext(sides["source"], sides["target"])
    started_from: dict[str, Any] = {}
    first_update = 0
    if (bundle / device_files.START).is_dir():
        started_from, weights = device_files.read_weights(bundle / device_files.START)
        first_update = start_from(work, hp, started_from, weights)
    limits = TrainingLimits(max_time=minutes * 60, valid_every=valid_every, checkpoint_every=valid_every)
    best = train_prepared(bitext, work, hp, device, limits)
    last, state = load_checkpoint(work / LAST), load_checkpoint(work / MODEL)
    meta = {key: state[key] for key in ("hyperparameters", "update", "vocabulary", "valid_perplexity")}
    returned_files, int8 = device_files.write_weights(
        state["model"],
        meta,
        out,
        device_files.RETURNED_BYTES - device_files.RETURNED_SLACK,
        device_files.RETURNED_FILES - 2,
    )
    shutil.copyfile(work / LOG, out / LOG)
    train_index, valid_index = split(bitext, hp.max_length, hp.seed)
    _, returned = device_files.read_weights(out, returned_files)
    model = build_model({**meta, "model": returned}, out).to(device)
    updates, seconds = int(last["update"]) - first_update, float(last["seconds"])
    summary = device_files.training_summary(
        device, hp, len(train_index), updates, seconds, best, returned_files, started_from
    )
    summary.update(
        returned_valid_perplexity=perplexity(model, bitext, valid_index, device),
        int8=int8,
        returned_mib=sum((out / name).stat().st_size for name in returned_files) / 2**20,
        subwords_sha256=sha256(work / SUBWORDS),
    )
    device_files.write_summary(out, summary)
    return summary


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def unpack(out: Path, model_dir: Path) -> Path:
    """``model.pt`` (float32) in ``model_dir`` from a device run's weights files; returns its path."""
    summary = device_files.read_summary(out)
    meta, weights = device_files.read_weights(out)
    if not (model_dir / SUBWORDS).is_file() or summary.get("subwords_sha256") != sha256(model_dir / SUBWORDS):
        raise PysmtError(
            f"{model_dir}: its {SUBWORDS} is not the one the device trained with: "
            "unpack into the model folder the bundle was packed from"
        )
    save_checkpoint(model_dir / MODEL, {**meta, "model": weights})
    load_model(model_dir)  # the subword model fits the weights, or one clear line
    return model_dir / MODEL


def main(argv: list[str] | None = None) -> None:
    parser = device_files.command_line(
        "python -m rnn_feature.sentence.device_run",
        __doc__.split("\n\n")[0],
        "gpu",
        None,
        250,
        "/tmp/sentence-device-run",
    )
    args = parser.parse_args(argv)
    with device_files.one_line_errors("sentence device run"):
        if args.command == "pack":
            pack(args.model_dir, args.bundle, args.start)
        elif args.command == "train":
            overrides = device_files.hyperparameter_overrides(SentenceHyperparameters, args.hp)
            hp = device_hyperparameters(args.bundle, args.preset, args.batch_size, overrides)
            device = device_files.training_device(args.device)
            device_files.print_summary(
                train(args.bundle, args.out, args.work, hp, args.minutes, device, args.valid_every)
            )
        else:
            print(unpack(args.out, args.model_dir))


if __name__ == "__main__":
    main()
