"""scripts/gpu-sentence.sh's round trip on the CPU with a tiny model (pack here, train there, unpack here), and
the weights files that bring a model back within the device's limits (the gpu preset's too)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from test_sentence_model import TINY, toy_bitext

from pysmt.plugin import PysmtError
from pysmt.plugin.neural import TrainingLimits
from pysmt.testing import single_torch_thread
from rnn_feature.device_files import (
    RETURNED_BYTES,
    RETURNED_FILES,
    RETURNED_SLACK,
    WEIGHTS_FILE_BYTES,
    hyperparameter_overrides,
    load_compact,
    plan_weights,
    read_weights,
    write_weights,
)
from rnn_feature.sentence import device_run
from rnn_feature.sentence.data import EncodedBitext
from rnn_feature.sentence.hyperparameters import SentenceHyperparameters, preset
from rnn_feature.sentence.model import AttentionEncoderDecoder
from rnn_feature.sentence.scoring import SentenceScorer
from rnn_feature.sentence.store import load_checkpoint, save_checkpoint
from rnn_feature.sentence.training import train
from rnn_feature.sentence.translation import greedy_translations

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "gpu-sentence.sh"
SIZES = ("embedding", "hidden", "attention", "maxout", "dropout")
HYPOTHESES = [("un", "deux"), ("trois",), (), ("six", "cinq", "quatre")]


def script(*args: str, env: dict[str, str]) -> str:
    done = subprocess.run(["bash", str(SCRIPT), *args], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model folder as `pysmt sentence train ... --max-updates 1` leaves it: subwords, encoded bitext, job."""
    folder = tmp_path_factory.mktemp("sentence")
    with single_torch_thread():
        source, target = toy_bitext(folder / "corpus")
        train(source, target, folder / "model", TINY, torch.device("cpu"), TrainingLimits(max_updates=1))
    return folder / "model"


@pytest.mark.slow
def test_a_device_run_comes_back_as_the_model_it_trained_rounded_to_float16(prepared, tmp_path):
    model_dir = tmp_path / "model"
    shutil.copytree(prepared, model_dir)
    bundle, out = tmp_path / "bundle", tmp_path / "out"
    env = {**os.environ, "PYTHON": sys.executable, "SENTENCE_BUNDLE": str(bundle), "OUT": str(out)}
    script("pack", str(model_dir), env=env)
    assert sorted(p.name for p in bundle.iterdir()) == ["bitext-compact.npz", "job.json", "subwords.model"]
    bitext, compact = EncodedBitext.load(model_dir / "bitext.npz"), load_compact(bundle / "bitext-compact.npz")
    for side in ("source", "target"):
        assert np.array_equal(compact[side].flat, getattr(bitext, side).flat)
        assert np.array_equal(compact[side].offsets, getattr(bitext, side).offsets)
    tiny = [f"--hp={name}={getattr(TINY, name)}" for name in SIZES]
    options = ["--device", "cpu", "--preset", "cpu", "--batch-size", "8", "--valid-every", "20", *tiny]
    script("train", "0.05", *options, "--work", str(tmp_path / "work"), env=env)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["updates"] > 0 and summary["pairs_s"] == pytest.approx(summary["updates"] * 8 / summary["seconds"])
    assert summary["int8"] == [] and summary["started_from"] is None
    assert all((out / name).stat().st_size < 16 * 2**20 for name in summary["weights"])
    assert summary["returned_valid_perplexity"] == pytest.approx(summary["valid_perplexity"], rel=1e-2)
    script("unpack", str(out), str(model_dir), env=env)

    # the unpacked model is the device's best weights rounded to float16, and scores exactly as they do
    trained = load_checkpoint(tmp_path / "work" / "model.pt")
    rounded = {name: weight.half().float() for name, weight in trained["model"].items()}
    unpacked = load_checkpoint(model_dir / "model.pt")
    assert unpacked["model"].keys() == rounded.keys()
    assert all(torch.equal(unpacked["model"][name], weight) for name, weight in rounded.items())
    expected = tmp_path / "expected"
    expected.mkdir()
    shutil.copyfile(model_dir / "subwords.model", expected / "subwords.model")
    save_checkpoint(expected / "model.pt", {**trained, "model": rounded})
    scores = SentenceScorer(model_dir).score(["one", "two"], HYPOTHESES)
    assert np.array_equal(scores, SentenceScorer(expected).score(["one", "two"], HYPOTHESES))
    assert len(greedy_translations(model_dir, ["one two", "six"], None, "cpu", 10)) == 2

    # a second run (here in this process) continues the returned model where it stopped, at a smaller minibatch
    script("pack", str(model_dir), str(out), env=env)
    assert sorted(p.name for p in (bundle / "start").iterdir()) == ["summary.json", *summary["weights"]]
    overrides = {name: getattr(TINY, name) for name in SIZES}
    hp = device_run.device_hyperparameters(bundle, "cpu", 4, overrides)
    second = device_run.train(bundle, tmp_path / "out2", tmp_path / "work2", hp, 0.02, torch.device("cpu"), 20)
    assert second["started_from"] == {"update": trained["update"], "valid_perplexity": summary["valid_perplexity"]}
    last = load_checkpoint(tmp_path / "work2" / "last.pt")
    assert second["updates"] == last["update"] - trained["update"] > 0


def test_the_gpu_preset_comes_back_within_the_device_limits():
    with torch.device("meta"):
        model = AttentionEncoderDecoder(preset("gpu"), 16_000)
    shapes = {name: tuple(weight.shape) for name, weight in model.state_dict().items()}
    assert sum(int(np.prod(shape)) for shape in shapes.values()) == 56_078_000  # 112 MB as float16
    files = plan_weights(shapes, RETURNED_BYTES - RETURNED_SLACK, RETURNED_FILES - 2)
    assert len(files) <= RETURNED_FILES - 2
    assert all(sum(piece.nbytes for piece in pieces) <= WEIGHTS_FILE_BYTES for pieces in files)
    assert sum(piece.nbytes for pieces in files for piece in pieces) <= RETURNED_BYTES - RETURNED_SLACK
    int8 = {piece.name for pieces in files for piece in pieces if piece.int8}
    assert {"source_embedding.weight", "target_embedding.weight", "output.weight"} <= int8
    assert not any(name.endswith("bias") for name in int8)


def test_weights_too_large_go_int8_by_row_and_split_across_files(tmp_path):
    generator = torch.Generator().manual_seed(0)
    weights = {
        "big": torch.randn(40, 30, generator=generator),
        "mid": torch.randn(10, 10, generator=generator),
        "bias": torch.randn(5, generator=generator),
    }
    # float16 would take 3,010 bytes: a budget of 2,000 makes "big" int8 (1,360 bytes: 34 a row), in files of 600
    files, int8 = write_weights(weights, {"update": 7}, tmp_path, budget=2_000, max_files=8, file_bytes=600)
    assert int8 == ["big"] and len(files) == 3
    keys = [key for name in files for key in torch.load(tmp_path / name, weights_only=True)["model"]]
    assert sorted(key for key in keys if key.startswith("big@")) == ["big@0", "big@17", "big@34"]
    meta, back = read_weights(tmp_path, files)
    assert meta == {"update": 7} and back.keys() == weights.keys()
    assert torch.equal(back["mid"], weights["mid"].half().float())
    assert torch.equal(back["bias"], weights["bias"].half().float())
    scales = weights["big"].abs().amax(dim=1, keepdim=True) / 127
    assert torch.all((back["big"] - weights["big"]).abs() <= scales / 2 * 1.0001)
    with pytest.raises(PysmtError, match=r"even with int8 matrices: more than the 0.0 MiB in 8 files"):
        write_weights(weights, {}, tmp_path, budget=1_000, max_files=8)


def test_pack_says_in_one_line_what_is_missing_or_too_large(prepared, tmp_path, monkeypatch, capsys):
    with pytest.raises(SystemExit, match=r"^sentence device run: .*empty: no subwords.model, bitext.npz, job.json"):
        device_run.main(["pack", str(tmp_path / "empty"), str(tmp_path / "bundle")])
    assert device_run.pack(prepared, tmp_path / "bundle") < 2**20
    monkeypatch.setattr("rnn_feature.device_files.BUNDLE_BYTES", 1_000)
    with pytest.raises(SystemExit, match=r"MiB is more than the 0 MiB a device run carries \(64 MiB with the"):
        device_run.main(["pack", str(prepared), str(tmp_path / "bundle")])

    (tmp_path / "returned").mkdir()
    (tmp_path / "returned" / "summary.json").write_text('{"device": "cpu"}\n')  # no weights: not a returned run
    with pytest.raises(SystemExit, match=r"returned: no readable summary.json: not the folder a device run returned"):
        device_run.main(["pack", str(prepared), str(tmp_path / "bundle"), "--start", str(tmp_path / "returned")])


def test_device_hyperparameters_keep_the_job_s_direction_and_subwords(prepared, tmp_path):
    device_run.pack(prepared, tmp_path)
    hp = device_run.device_hyperparameters(
        tmp_path, "gpu", 256, hyperparameter_overrides(SentenceHyperparameters, ["dropout=0.2"])
    )
    assert (hp.preset, hp.subwords, hp.hidden, hp.batch_size, hp.dropout) == ("gpu", 300, 1000, 256, 0.2)
    with pytest.raises(PysmtError, match="the bundle's bitext was encoded the other way"):
        device_run.device_hyperparameters(tmp_path, "gpu", None, {"right_to_left": True})
    assert hyperparameter_overrides(SentenceHyperparameters, ["right_to_left=true", "hidden=5"]) == {
        "right_to_left": True,
        "hidden": 5,
    }
    with pytest.raises(PysmtError, match="--hp width=3: no hyperparameter 'width'"):
        hyperparameter_overrides(SentenceHyperparameters, ["width=3"])
    with pytest.raises(PysmtError, match="--hp hidden=big: hidden takes a whole number"):
        hyperparameter_overrides(SentenceHyperparameters, ["hidden=big"])


def test_weights_to_start_from_must_fit_the_model(prepared, tmp_path):
    shutil.copyfile(prepared / "subwords.model", tmp_path / "subwords.model")
    state = load_checkpoint(prepared / "model.pt")
    wider = preset("cpu", **{**TINY.to_dict(), "hidden": 7})
    with pytest.raises(PysmtError, match=r"do not fit the cpu model: hidden 5 given, 7 here$"):
        device_run.start_from(tmp_path, wider, state, state["model"])
    assert device_run.start_from(tmp_path, TINY, state, state["model"]) == state["update"] == 1
    with pytest.raises(PysmtError, match=r"lack vocabulary, update: not a sentence model's device run$"):
        device_run.start_from(tmp_path, TINY, {"hyperparameters": state["hyperparameters"]}, state["model"])


def test_a_damaged_packed_bitext_is_one_line_naming_it(tmp_path):
    damaged = tmp_path / "bitext-compact.npz"
    damaged.write_bytes(b"PK\x03\x04 not a zip archive")
    with pytest.raises(
        PysmtError, match=rf"^{damaged}: not a readable packed bitext \(.*\); pack the model folder again$"
    ):
        load_compact(damaged)
