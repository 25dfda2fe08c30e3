"""What the neural models' device runs share: the bundle that travels to a lent GPU machine, the weights
files that come back, the summary, and the command line of ``pack``, ``train`` and ``unpack``.

A GPU machine here is lent for minutes, reached by copying the working tree with at most 64 MiB of
ignored files (the bundle), and returns at most 8 files of at most 16 MiB each, 64 MiB together.
:mod:`rnn_feature.device_run` (the phrase RNN, ``scripts/gpu-rnn.sh``) and
:mod:`rnn_feature.sentence.device_run` (the sentence model, ``scripts/gpu-sentence.sh``) build on this.

The weights come back as float16 in files under :data:`WEIGHTS_FILE_BYTES` (``weights-N.pt``, named in
``summary.json``). A model too large for the returned files' total even so (the sentence model's ``gpu``
preset: 56 M parameters, 112 MB as float16) has its largest matrices stored as int8 with a float32 scale
per row (absmax / 127), largest first, until the rest fits; a matrix larger than one file is split by rows.
:func:`read_weights` gives float32 weights back either way.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import typing
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch

from pysmt.plugin import PysmtError
from pysmt.plugin.files import atomic_path, atomic_writer
from pysmt.plugin.neural import first_line
from rnn_feature.data import Ragged

#: Each returned weights file stays under the device's 16 MiB a file (torch.save's headers are small).
WEIGHTS_FILE_BYTES = 15 * 2**20
#: What a run's returned files may take together, and how many there may be.
RETURNED_BYTES, RETURNED_FILES = 64 * 2**20, 8
#: Room kept in the returned total for ``summary.json``, ``log.tsv`` and the weights files' headers.
RETURNED_SLACK = 2 * 2**20
#: The largest bundle: the device takes 64 MiB with the working tree (about 3 MiB of tracked files).
BUNDLE_BYTES = 60 * 2**20
SUMMARY = "summary.json"
#: The bundle's folder of weights to start from (``pack --start``).
START = "start"
MiB = 2**20


def check_bundle(bundle: Path) -> int:
    """The bundle's size in bytes, or one line saying it is more than a device run carries."""
    size = sum(path.stat().st_size for path in bundle.rglob("*") if path.is_file())
    if size > BUNDLE_BYTES:
        raise PysmtError(
            f"{bundle}: {size / MiB:.1f} MiB is more than the {BUNDLE_BYTES // MiB} MiB a device run carries "
            "(64 MiB with the working tree): train on fewer pairs"
        )
    return size


def copy_start(start: Path | None, bundle: Path) -> None:
    """The weights an earlier run returned into ``bundle/start`` (none: that folder removed)."""
    shutil.rmtree(bundle / START, ignore_errors=True)
    if start is not None:
        summary = read_summary(start)
        (bundle / START).mkdir()
        for name in (SUMMARY, *summary["weights"]):
            shutil.copyfile(start / name, bundle / START / name)


def fresh_work(bundle: Path, work: Path, names: Sequence[str], trained: Sequence[str]) -> None:
    """A work folder with the bundle's files ``names`` and none of an earlier run's ``trained`` files (a second
    run on a machine that is still warm would otherwise resume the first, its time already spent)."""
    work.mkdir(parents=True, exist_ok=True)
    for name in trained:
        (work / name).unlink(missing_ok=True)
    for name in names:
        shutil.copyfile(bundle / name, work / name)


def read_summary(out: Path) -> dict[str, Any]:
    """A device run's ``summary.json``, or one line saying the folder is not a returned run."""
    try:
        summary: dict[str, Any] = json.loads((out / SUMMARY).read_text())
    except (OSError, ValueError):
        summary = {}
    if not isinstance(summary, dict) or not isinstance(summary.get("weights"), list):  # what every reader needs
        raise PysmtError(f"{out}: no readable {SUMMARY}: not the folder a device run returned")
    return summary


def write_summary(out: Path, summary: dict[str, Any]) -> None:
    """``out/summary.json``, written last and atomically: a run cut short returns no summary, never half of one
    (:func:`read_summary` then says the folder is not a returned run)."""
    with atomic_writer(out / SUMMARY) as file:
        file.write(json.dumps(summary, indent=1) + "\n")


@dataclass(frozen=True)
class Piece:
    """Rows ``start:stop`` of weight ``name``, stored as float16 or as int8 with a scale per row."""

    name: str
    start: int
    stop: int
    int8: bool
    nbytes: int

    @property
    def key(self) -> str:
        return f"{self.name}@{self.start}"


def stored_bytes(shape: Sequence[int], int8: bool) -> int:
    """Bytes of a weight of ``shape`` as float16, or as int8 with a float32 scale per row."""
    numel = int(np.prod(shape, dtype=np.int64))
    return numel + 4 * int(shape[0]) if int8 else 2 * numel


def plan_weights(
    shapes: Mapping[str, Sequence[int]], budget: int, max_files: int, file_bytes: int = WEIGHTS_FILE_BYTES
) -> list[list[Piece]]:
    """The weights files for weights of ``shapes``: all float16 if they fit in ``budget`` bytes, else int8 for the
    largest matrices first until they do; a weight larger than ``file_bytes`` is split by rows; the pieces fill
    the files largest first. One line when they fit in neither ``budget`` nor ``max_files`` files."""
    int8: set[str] = set()
    total = sum(stored_bytes(shape, False) for shape in shapes.values())
    matrices = sorted((name for name, shape in shapes.items() if len(shape) >= 2), key=lambda n: -np.prod(shapes[n]))
    for name in matrices:
        if total <= budget:
            break
        int8.add(name)
        total += stored_bytes(shapes[name], True) - stored_bytes(shapes[name], False)
    pieces = []
    for name, shape in shapes.items():
        rows = int(shape[0]) if len(shape) else 1
        row_bytes = max(1, stored_bytes((1, *shape[1:]), name in int8)) if len(shape) else 2
        step = max(1, min(rows, file_bytes // row_bytes))
        for start in range(0, max(rows, 1), step):
            stop = min(rows, start + step)
            size = stored_bytes((stop - start, *shape[1:]), name in int8) if len(shape) else 2
            pieces.append(Piece(name, start, stop, name in int8, size))
    files: list[list[Piece]] = []
    room: list[int] = []
    for piece in sorted(pieces, key=lambda p: -p.nbytes):
        k = next((k for k, free in enumerate(room) if free >= piece.nbytes), len(files))
        if k == len(files):
            files.append([])
            room.append(file_bytes)
        files[k].append(piece)
        room[k] -= piece.nbytes
    if total > budget or len(files) > max_files:
        raise PysmtError(
            f"the weights take {total / MiB:.1f} MiB in {len(files)} files even with int8 matrices: more than the "
            f"{budget / MiB:.1f} MiB in {max_files} files a device run returns"
        )
    return files


def quantize(rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """int8 values and float32 scales (one per row: its largest magnitude / 127) of a float weight."""
    flat = rows.float().reshape(rows.shape[0], -1)
    scales = flat.abs().amax(dim=1) / 127
    scales = torch.where(scales > 0, scales, torch.ones_like(scales))
    values = torch.round(flat / scales[:, None]).clamp(-127, 127).to(torch.int8)
    return values.reshape(rows.shape), scales


def write_weights(
    weights: Mapping[str, torch.Tensor],
    meta: dict[str, Any],
    out: Path,
    budget: int,
    max_files: int,
    file_bytes: int = WEIGHTS_FILE_BYTES,
) -> tuple[list[str], list[str]]:
    """``weights`` (a state dict) as :func:`plan_weights` stores them, in ``weights-N.pt`` files, each with
    ``meta`` (the checkpoint's other fields): the files' names, and the weights stored as int8."""
    on_cpu = {name: tensor.detach().to("cpu") for name, tensor in weights.items()}
    plan = plan_weights({n: tuple(t.shape) for n, t in on_cpu.items()}, budget, max_files, file_bytes)
    names = []
    for k, pieces in enumerate(plan):
        model: dict[str, torch.Tensor] = {}
        scales: dict[str, torch.Tensor] = {}
        for piece in pieces:
            tensor = on_cpu[piece.name]
            rows = tensor[piece.start : piece.stop] if tensor.dim() else tensor
            if piece.int8:
                model[piece.key], scales[piece.key] = quantize(rows)
            else:
                model[piece.key] = rows.to(torch.float16).clone()
        names.append(f"weights-{k}.pt")
        torch.save({"meta": meta, "model": model, "scales": scales}, out / names[-1])
    return names, sorted({piece.name for pieces in plan for piece in pieces if piece.int8})


def read_weights(out: Path, names: Sequence[str] | None = None) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """The checkpoint fields and float32 weights of a device run's returned (or bundled) weights files: ``names``,
    by default those its ``summary.json`` lists."""
    pieces: dict[str, list[tuple[int, torch.Tensor]]] = {}
    meta: dict[str, Any] = {}
    for name in read_summary(out)["weights"] if names is None else names:
        try:
            part = torch.load(out / name, map_location="cpu", weights_only=True)
        except (OSError, RuntimeError, ValueError) as err:
            raise PysmtError(f"{out / name}: not a readable weights file ({first_line(err)})") from None
        meta = part["meta"]
        scales = part.get("scales", {})
        for key, value in part["model"].items():
            weight, _, start = key.partition("@")  # files of earlier runs: whole float16 weights, no "@"
            if key in scales:
                value = value.float() * scales[key].reshape(-1, *([1] * (value.dim() - 1)))
            pieces.setdefault(weight, []).append((int(start or 0), value.float()))
    weights = {}
    for weight, parts in pieces.items():
        parts.sort(key=lambda part: part[0])
        weights[weight] = parts[0][1] if len(parts) == 1 else torch.cat([value for _, value in parts])
    return meta, weights


def save_compact(path: Path, **sides: Ragged) -> None:
    """Id sequences as small unsigned integers and lengths, compressed (a bitext's subword ids: about a quarter
    of their int32 size); :func:`load_compact` reads them back."""
    arrays: dict[str, Any] = {}
    for name, ragged in sides.items():
        lengths = ragged.lengths()
        arrays[f"{name}_flat"] = ragged.flat.astype(np.min_scalar_type(int(ragged.flat.max(initial=0))))
        arrays[f"{name}_lengths"] = lengths.astype(np.min_scalar_type(int(lengths.max(initial=0))))
    with atomic_path(path) as tmp, open(tmp, "wb") as out:  # an interrupted pack leaves no half-written file
        np.savez_compressed(out, **arrays)


def load_compact(path: Path) -> dict[str, Ragged]:
    """What :func:`save_compact` wrote: int32 ids and int64 offsets again; a damaged file is one line naming it."""
    try:
        with np.load(path) as data:
            names = [key[: -len("_flat")] for key in data.files if key.endswith("_flat")]
            return {
                name: Ragged(
                    data[f"{name}_flat"].astype(np.int32),
                    np.concatenate([[0], np.cumsum(data[f"{name}_lengths"], dtype=np.int64)]),
                )
                for name in names
            }
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as err:
        reason = first_line(err)
        raise PysmtError(f"{path}: not a readable packed bitext ({reason}); pack the model folder again") from None


def training_summary(
    device: torch.device,
    hp: Any,
    pairs: int,
    updates: int,
    seconds: float,
    best: float,
    weights: list[str],
    started_from: dict[str, Any],
) -> dict[str, Any]:
    """What a device run reports: the device, this run's updates, speed, epochs over ``pairs`` and the best
    validation perplexity, the weights files, and the update and perplexity of the weights it started from."""
    return {
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "hyperparameters": hp.to_dict(),
        "pairs": pairs,
        "updates": updates,
        "seconds": seconds,
        "updates_s": updates / seconds,
        "pairs_s": updates * hp.batch_size / seconds,
        "epochs": updates * hp.batch_size / pairs,
        "valid_perplexity": best,
        "weights": weights,
        "started_from": {key: started_from[key] for key in ("update", "valid_perplexity")} if started_from else None,
    }


def hyperparameter_overrides(cls: type, items: Sequence[str]) -> dict[str, Any]:
    """``--hp NAME=VALUE`` options as a hyperparameters dataclass's typed fields, or one line for a bad one."""
    types = typing.get_type_hints(cls)
    known = {field.name for field in fields(cls)} - {"preset"}
    overrides: dict[str, Any] = {}
    for item in items:
        name, _, value = item.partition("=")
        if name not in known:
            raise PysmtError(f"--hp {item}: no hyperparameter {name!r}; there are {', '.join(sorted(known))}")
        kind = types[name]
        try:
            if kind is bool:
                overrides[name] = {"true": True, "1": True, "false": False, "0": False}[value.lower()]
            else:
                overrides[name] = kind(value)
        except (KeyError, ValueError):
            what = {int: "a whole number", float: "a number", bool: "true or false"}.get(kind, kind.__name__)
            raise PysmtError(f"--hp {item}: {name} takes {what}") from None
    return overrides


def command_line(
    prog: str, description: str, preset: str, batch_size: int | None, valid_every: int, work: str
) -> argparse.ArgumentParser:
    """The three steps' arguments: ``pack MODEL_DIR BUNDLE [--start RETURNED_DIR]``, ``train BUNDLE OUT ...`` and
    ``unpack OUT MODEL_DIR``."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    commands = parser.add_subparsers(dest="command", required=True)
    packing = commands.add_parser("pack", help="here: copy what a prepared model folder gives the device")
    packing.add_argument("model_dir", type=Path)
    packing.add_argument("bundle", type=Path)
    packing.add_argument("--start", type=Path, help="an earlier device run's returned folder: continue its model")
    training = commands.add_parser("train", help="there: train on the GPU, write the results")
    training.add_argument("bundle", type=Path)
    training.add_argument("out", type=Path)
    training.add_argument("--work", type=Path, default=Path(work))
    training.add_argument("--preset", default=preset)
    training.add_argument(
        "--batch-size", type=int, default=batch_size, help="default: " + str(batch_size or "the preset's")
    )
    training.add_argument("--minutes", type=float, default=7.0)
    training.add_argument("--valid-every", type=int, default=valid_every)
    training.add_argument("--device", default="auto")
    training.add_argument("--hp", action="append", default=[], help="NAME=VALUE: change a hyperparameter (tests)")
    unpacking = commands.add_parser("unpack", help="here: a model.pt from the returned weights")
    unpacking.add_argument("out", type=Path)
    unpacking.add_argument("model_dir", type=Path)
    return parser


def training_device(name: str) -> torch.device:
    """The device ``--device`` names, with torch set up for training there: TF32 matrix products on GPUs that
    have them (as PyTorch's training recipes do), 4 CPU threads beside a GPU, 1 without."""
    from pysmt.plugin.neural import resolve_device

    device = resolve_device(name)
    torch.set_num_threads(4 if device.type == "cuda" else 1)
    torch.set_float32_matmul_precision("high")
    return device


def print_summary(summary: dict[str, Any]) -> None:
    print(json.dumps({k: v for k, v in summary.items() if k != "hyperparameters"}, indent=1))


@contextmanager
def one_line_errors(label: str) -> Iterator[None]:
    """A :class:`PysmtError` as one line on stderr (``label: ...``) and exit status 1."""
    try:
        yield
    except PysmtError as err:
        sys.exit(f"{label}: {err}")
