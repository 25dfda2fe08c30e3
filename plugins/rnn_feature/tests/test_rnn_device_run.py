"""scripts/gpu-rnn.sh's round trip on the CPU with a tiny model: pack here, train there, unpack here."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from pysmt.plugin import PysmtError
from rnn_feature.data import EncodedPairs
from rnn_feature.scoring import score_encoded
from rnn_feature.store import load_model
from rnn_feature.training import PAIRS, TrainingLimits, train, train_prepared
from rnn_testing import TINY, toy_table

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "gpu-rnn.sh"
BLOCKED = ("pysmt._core", "pysmt._contexts", "kenlm", "sacremoses", "sacrebleu")


def script(*args, env):
    done = subprocess.run(["bash", str(SCRIPT), *args], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.slow
def test_a_device_run_trains_scores_and_comes_back_as_a_model(tmp_path):
    model_dir = tmp_path / "model"
    train(toy_table(tmp_path / "pt.gz"), model_dir, TINY, torch.device("cpu"), TrainingLimits(max_updates=1))
    env = {**os.environ, "PYTHON": sys.executable, "RNN_BUNDLE": str(tmp_path / "bundle"), "OUT": str(tmp_path / "out")}
    script("pack", str(model_dir), env=env)
    assert sorted(p.name for p in (tmp_path / "bundle").iterdir()) == [PAIRS, "source.vocab", "target.vocab"]
    tiny = [f"--hp={name}={getattr(TINY, name)}" for name in ("hidden", "embedding", "maxout", "output_rank")]
    options = ["--device", "cpu", "--preset", "default", "--batch-size", "16", "--valid-every", "20", *tiny]
    script("train", "0.05", *options, "--work", str(tmp_path / "work"), env=env)
    out = tmp_path / "out"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["updates"] > 0 and summary["pairs_s"] == pytest.approx(summary["updates"] * 16 / summary["seconds"])
    assert all((out / name).stat().st_size < 16 * 2**20 for name in summary["weights"])
    scores = np.load(out / "scores.npy")
    pairs = EncodedPairs.load(model_dir / PAIRS)
    assert scores.dtype == np.float32 and scores.shape == (len(pairs),) and (scores < 0).all()
    script("unpack", str(out), str(model_dir), env=env)
    model, _, _ = load_model(model_dir)
    # the returned weights are float16: the scores here agree with the device's to float16's precision
    assert np.allclose(score_encoded(model, pairs.source, pairs.target), scores, rtol=2e-2, atol=2e-2)

    # a second run continues the model the first returned, at a smaller minibatch
    script("pack", str(model_dir), str(out), env=env)
    assert sorted(p.name for p in (tmp_path / "bundle" / "start").iterdir()) == ["summary.json", *summary["weights"]]
    again = {**env, "OUT": str(tmp_path / "out2")}
    options[options.index("--batch-size") + 1] = "8"
    script("train", "0.05", *options, "--work", str(tmp_path / "work2"), env=again)
    second = json.loads((tmp_path / "out2" / "summary.json").read_text())
    first_meta = torch.load(out / summary["weights"][0], weights_only=True)["meta"]
    assert second["started_from"] == {"update": first_meta["update"], "valid_perplexity": summary["valid_perplexity"]}
    assert summary["started_from"] is None


def test_weights_to_start_from_must_fit_the_model(tmp_path):
    model_dir = tmp_path / "model"
    train(toy_table(tmp_path / "pt.gz"), model_dir, TINY, torch.device("cpu"), TrainingLimits(max_updates=1))
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    for name in ("source.vocab", "target.vocab"):
        shutil.copyfile(model_dir / name, fresh / name)
    pairs = EncodedPairs.load(model_dir / PAIRS)
    with pytest.raises(
        PysmtError,
        match=r"do not fit the default model: source_embedding.weight \(1, 1\) given, \(8, 8\) expected",
    ):
        train_prepared(
            pairs,
            fresh,
            TINY,
            torch.device("cpu"),
            TrainingLimits(max_updates=1),
            {"source_embedding.weight": torch.zeros(1, 1)},
        )


def test_training_and_scoring_import_without_the_compiled_core():
    blocker = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        f"        if name in {BLOCKED!r} or name.split('.')[0] in {BLOCKED!r}:\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "import rnn_feature.training, rnn_feature.scoring, rnn_feature.device_run, rnn_feature.sentence.device_run\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'plugins' / 'rnn_feature'}"}
    done = subprocess.run([sys.executable, "-c", blocker], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
