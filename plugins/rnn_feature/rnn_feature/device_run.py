"""Training the RNN on a lent GPU machine from encoded pairs, and bringing the result back.

A GPU machine here is lent for minutes, reached by copying a folder of at most 64 MiB, and returns
files of at most 16 MiB. So the work is split in three, each a subcommand of
``python -m rnn_feature.device_run`` (``scripts/gpu-rnn.sh`` runs them):

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

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import torch

from pysmt.errors import PysmtError
from pysmt.neural import TrainingLimits
from rnn_feature.data import EncodedPairs
from rnn_feature.hyperparameters import Hyperparameters, preset
from rnn_feature.scoring import score_encoded
from rnn_feature.store import LAST, MODEL, SOURCE_VOCAB, TARGET_VOCAB, load_checkpoint, load_model, save_checkpoint
from rnn_feature.training import PAIRS, train_prepared

BUNDLE_FILES = (PAIRS, SOURCE_VOCAB, TARGET_VOCAB)
#: Each returned weights file stays under the device's 16 MiB a file.
WEIGHTS_FILE_BYTES = 15 * 2**20
SUMMARY, SCORES = "summary.json", "scores.npy"
#: The bundle's folder of weights to start from (``pack --start``).
START = "start"


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
    shutil.rmtree(bundle / START, ignore_errors=True)
    if start is not None:
        summary = json.loads(read_summary(start))
        (bundle / START).mkdir()
        for name in (SUMMARY, *summary["weights"]):
            shutil.copyfile(start / name, bundle / START / name)


def read_summary(out: Path) -> str:
    """A device run's ``summary.json``, or one line saying the folder is not a returned run."""
    try:
        return (out / SUMMARY).read_text()
    except OSError:
        raise PysmtError(f"{out}: no {SUMMARY}: not the folder a device run returned") from None


def read_weights(out: Path) -> tuple[dict, dict[str, torch.Tensor]]:
    """The checkpoint fields and float32 weights of a device run's returned (or bundled) weights files."""
    weights: dict[str, torch.Tensor] = {}
    meta: dict = {}
    for name in json.loads(read_summary(out))["weights"]:
        part = torch.load(out / name, map_location="cpu", weights_only=True)
        meta = part["meta"]
        weights.update({key: value.float() for key, value in part["model"].items()})
    return meta, weights


def train(
    bundle: Path, out: Path, work: Path, hp: Hyperparameters, minutes: float, device: torch.device, valid_every: int
) -> dict:
    """Train in ``work`` for ``minutes``, score every pair, write the weights, scores and summary to ``out``."""
    work.mkdir(parents=True, exist_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    for name in BUNDLE_FILES:
        shutil.copyfile(bundle / name, work / name)
    pairs = EncodedPairs.load(work / PAIRS)
    torch.set_float32_matmul_precision("high")  # TF32 on GPUs that have it, as PyTorch's training recipes do
    limits = TrainingLimits(max_time=minutes * 60, valid_every=valid_every, checkpoint_every=valid_every)
    started_from, start = read_weights(bundle / START) if (bundle / START).is_dir() else ({}, None)
    best = train_prepared(pairs, work, hp, device, limits, start)
    last = load_checkpoint(work / LAST)
    started = time.perf_counter()
    model, _, _ = load_model(work, device)
    scores = score_encoded(model, pairs.source, pairs.target, batch_size=4 * hp.batch_size)
    scoring = time.perf_counter() - started
    np.save(out / SCORES, scores.astype(np.float32))
    weights = write_weights(load_checkpoint(work / MODEL), out)
    shutil.copyfile(work / "log.tsv", out / "log.tsv")
    updates, seconds = int(last["update"]), float(last["seconds"])
    summary = {
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "hyperparameters": hp.to_dict(),
        "pairs": len(pairs),
        "updates": updates,
        "seconds": seconds,
        "updates_s": updates / seconds,
        "pairs_s": updates * hp.batch_size / seconds,
        "epochs": updates * hp.batch_size / len(pairs),
        "valid_perplexity": best,
        "scoring_pairs_s": len(pairs) / scoring,
        "weights": weights,
        "started_from": {key: started_from[key] for key in ("update", "valid_perplexity")} if started_from else None,
    }
    (out / SUMMARY).write_text(json.dumps(summary, indent=1) + "\n")
    return summary


def write_weights(state: dict, out: Path) -> list[str]:
    """The checkpoint's weights as float16, in as many files under :data:`WEIGHTS_FILE_BYTES` as it takes."""
    files: list[dict] = [{}]
    size = 0
    for name, tensor in state["model"].items():
        half = tensor.detach().to("cpu", torch.float16)
        nbytes = half.numel() * 2
        if files[-1] and size + nbytes > WEIGHTS_FILE_BYTES:
            files.append({})
            size = 0
        files[-1][name] = half
        size += nbytes
    names = []
    meta = {key: state[key] for key in ("hyperparameters", "update", "source_size", "target_size", "valid_perplexity")}
    for k, tensors in enumerate(files):
        names.append(f"weights-{k}.pt")
        torch.save({"meta": meta, "model": tensors}, out / names[-1])
    return names


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
    parser = argparse.ArgumentParser(prog="python -m rnn_feature.device_run", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    packing = commands.add_parser("pack", help="here: copy a prepared model folder's pairs and shortlists")
    packing.add_argument("model_dir", type=Path)
    packing.add_argument("bundle", type=Path)
    packing.add_argument("--start", type=Path, help="an earlier device run's returned folder: continue its model")
    training = commands.add_parser("train", help="there: train on the GPU, score the pairs, write the results")
    training.add_argument("bundle", type=Path)
    training.add_argument("out", type=Path)
    training.add_argument("--work", type=Path, default=Path("/tmp/rnn-device-run"))
    training.add_argument("--preset", default="paper")
    training.add_argument("--batch-size", type=int, default=512)
    training.add_argument("--minutes", type=float, default=7.0)
    training.add_argument("--valid-every", type=int, default=500)
    training.add_argument("--device", default="auto")
    training.add_argument("--hp", action="append", default=[], help="NAME=VALUE: change a hyperparameter (tests)")
    unpacking = commands.add_parser("unpack", help="here: a model.pt from the returned weights")
    unpacking.add_argument("out", type=Path)
    unpacking.add_argument("model_dir", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "pack":
            pack(args.model_dir, args.bundle, args.start)
        elif args.command == "train":
            from pysmt.neural import resolve_device

            overrides = {name: int(value) for name, value in (item.split("=", 1) for item in args.hp)}
            hp = preset(args.preset, batch_size=args.batch_size, **overrides)
            device = resolve_device(args.device)
            torch.set_num_threads(4 if device.type == "cuda" else 1)
            summary = train(args.bundle, args.out, args.work, hp, args.minutes, device, args.valid_every)
            print(json.dumps({k: v for k, v in summary.items() if k != "hyperparameters"}, indent=1))
        else:
            print(unpack(args.out, args.model_dir))
    except PysmtError as err:
        sys.exit(f"rnn device run: {err}")


if __name__ == "__main__":
    main()
