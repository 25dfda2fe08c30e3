"""Training, resuming after an interruption, the job record, the commands, and bad input."""

import shutil
from dataclasses import replace

import pytest
import torch

from cslm_testing import CPU, TINY, toy_text
from pysmt.plugin import PysmtError, SystemConfig
from pysmt.running.folder_lock import LOCK_FILE
from pysmt.testing import one_line_error, parameters_of, run_pysmt
from pysmt_cslm import training
from pysmt_cslm.features import CslmFeature
from pysmt_cslm.store import LAST, MODEL, load_checkpoint, load_model, resolve_device, save_checkpoint
from pysmt_cslm.training import TRAINING_FILES, TrainingLimits, train
from pysmt_cslm.vocabulary import Shortlist


def test_validation_perplexity_falls_on_the_toy_language(tmp_path):
    text, valid = toy_text(tmp_path / "text.txt"), toy_text(tmp_path / "valid.txt", 100, seed=5)
    best = train(text, tmp_path / "m", TINY, CPU, TrainingLimits(max_updates=400, valid_every=100), valid=valid)
    rows = [line.split("\t") for line in (tmp_path / "m" / "log.tsv").read_text().splitlines()]
    perplexities = [float(row[2]) for row in rows]
    assert len(rows) == 4 and perplexities[-1] < perplexities[0]
    assert best == pytest.approx(min(perplexities), abs=5e-4) and best < 4.5  # 5 ids + back-off: uniform is ~6
    assert abs(float(rows[-1][3])) < 0.5  # self-normalization: mean log Z near 0
    loaded = load_model(tmp_path / "m")
    assert loaded.valid_perplexity == pytest.approx(best)
    assert {p.name for p in (tmp_path / "m").iterdir()} == set(TRAINING_FILES) | {"job.json", LOCK_FILE}


def test_resume_after_an_interruption_reproduces_an_uninterrupted_run(tmp_path, monkeypatch):
    text = toy_text(tmp_path / "text.txt")
    limits = {"valid_every": 20, "checkpoint_every": 20}
    train(text, tmp_path / "whole", TINY, CPU, TrainingLimits(max_updates=60, **limits))

    real, calls = training.minibatch, []

    def interrupted_at_33(*args):
        calls.append(1)
        if len(calls) == 34:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(training, "minibatch", interrupted_at_33)
    with pytest.raises(SystemExit) as stop:
        train(text, tmp_path / "parts", TINY, CPU, TrainingLimits(max_updates=60, **limits))
    assert stop.value.code == 130
    assert load_checkpoint(tmp_path / "parts" / LAST)["update"] == 33  # saved on the way out, between checkpoints
    monkeypatch.setattr(training, "minibatch", real)
    train(text, tmp_path / "parts", TINY, CPU, TrainingLimits(max_updates=60, **limits))
    whole, parts = load_checkpoint(tmp_path / "whole" / LAST), load_checkpoint(tmp_path / "parts" / LAST)
    assert whole["update"] == parts["update"] == 60
    for name, value in whole["model"].items():
        assert torch.equal(value, parts["model"][name]), name
    assert whole["rng"] == parts["rng"] and whole["best"] == parts["best"]
    assert (tmp_path / "whole" / "log.tsv").read_text().split("\n")[0].split("\t")[:4] == (
        tmp_path / "parts" / "log.tsv"
    ).read_text().split("\n")[0].split("\t")[:4]


@pytest.mark.slow
def test_rerun_with_another_text_is_refused_and_force_starts_afresh(tmp_path):
    """Through the command line: same command resumes; another --text: one line naming it, nothing touched;
    --force: trains on the new text (new shortlist, update count from 0)."""
    text = toy_text(tmp_path / "text.txt")
    other = toy_text(tmp_path / "other.txt", 100, seed=3, words=("a", "b"))
    model = tmp_path / "m"
    common = ["--out", model, "--device", "cpu", "--valid-every", "3"]
    first = run_pysmt("cslm", "train", "--text", text, *common, "--max-updates", "3")
    assert first.returncode == 0, first.stderr
    resumed = run_pysmt("cslm", "train", "--text", text, *common, "--max-updates", "6")
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming at update 3" in resumed.stderr and load_checkpoint(model / LAST)["update"] == 6
    before = {p.name: p.read_bytes() for p in model.iterdir() if p.name != LOCK_FILE}

    refused = run_pysmt("cslm", "train", "--text", other, *common, "--max-updates", "9")
    line = one_line_error(refused, "--text", str(text.resolve()), str(other.resolve()), "--force")
    assert "holds a cslm train job" in line
    assert {p.name: p.read_bytes() for p in model.iterdir() if p.name != LOCK_FILE} == before

    (model / "notes.txt").write_text("mine\n")
    fresh = run_pysmt("cslm", "train", "--text", other, *common, "--max-updates", "3", "--force")
    assert fresh.returncode == 0, fresh.stderr
    assert "resuming" not in fresh.stderr and load_checkpoint(model / LAST)["update"] == 3
    assert "a" in Shortlist.load(model / "target.vocab") and (model / "notes.txt").exists()


def test_api_job_record_covers_preset_seed_and_validation_text(tmp_path):
    text, valid = toy_text(tmp_path / "text.txt", 60), toy_text(tmp_path / "valid.txt", 20, seed=1)
    model = tmp_path / "m"
    train(text, model, TINY, CPU, TrainingLimits(max_updates=2, valid_every=2), valid=valid)
    with pytest.raises(PysmtError, match=r"seed: 1234 -> 7"):
        train(text, model, replace(TINY, seed=7), CPU, TrainingLimits(max_updates=2), valid=valid)
    with pytest.raises(PysmtError, match=r"--valid: .* -> none"):
        train(text, model, TINY, CPU, TrainingLimits(max_updates=2))
    assert load_checkpoint(model / LAST)["update"] == 2


@pytest.mark.slow
def test_perplexity_command(tiny_model, tmp_path):
    text = toy_text(tmp_path / "test.txt", 30, seed=9)
    exact = run_pysmt("cslm", "perplexity", "--model", tiny_model, "--text", text, "--device", "cpu")
    assert exact.returncode == 0, exact.stderr
    lines = exact.stdout.splitlines()
    assert lines[0].startswith("perplexity ") and "exact softmax" in lines[0] and "incl. </s>" in lines[0]
    assert lines[2].startswith("log Z: mean ")
    selfn = run_pysmt("cslm", "perplexity", "--model", tiny_model, "--text", text, "--self-normalized")
    assert selfn.returncode == 0 and "self-normalized" in selfn.stdout
    assert float(lines[0].split()[1]) < 5


def test_shortlist_option_takes_a_given_vocabulary(tmp_path):
    text = toy_text(tmp_path / "text.txt", 60)
    (tmp_path / "target.vocab").write_text("[EOS]\n[UNK]\nq\nr\nx\n")
    train(
        text,
        tmp_path / "m",
        TINY,
        CPU,
        TrainingLimits(max_updates=2, valid_every=2),
        shortlist=tmp_path / "target.vocab",
    )
    assert Shortlist.load(tmp_path / "m" / "target.vocab").words == ["[EOS]", "[UNK]", "q", "r", "x"]
    (tmp_path / "short.vocab").write_text("[EOS]\n[UNK]\nq\n")
    with pytest.raises(PysmtError, match="holds 3 entries but preset 'default' has a softmax of 5"):
        train(text, tmp_path / "m2", TINY, CPU, TrainingLimits(max_updates=2), shortlist=tmp_path / "short.vocab")


@pytest.mark.slow  # five commands, each loading torch
def test_bad_options_are_one_line_errors(tmp_path, tiny_model):
    text = toy_text(tmp_path / "text.txt", 20)
    one_line_error(
        run_pysmt("cslm", "train", "--text", text, "--out", tmp_path / "m", "--device", "mps"),
        "--device mps: unknown device; use auto, cpu, cuda or cuda:N",
    )
    assert not (tmp_path / "m").exists()
    one_line_error(
        run_pysmt("cslm", "train", "--text", text, "--out", tmp_path / "m", "--valid-every", "0"),
        "--valid-every",
        status=2,
    )
    one_line_error(
        run_pysmt("cslm", "train", "--text", tmp_path / "nothing.txt", "--out", tmp_path / "m"),
        "--text",
        "no such file",
    )
    one_line_error(
        run_pysmt("cslm", "perplexity", "--model", tmp_path / "nothing", "--text", text), "no such model folder"
    )
    one_line_error(
        run_pysmt("cslm", "perplexity", "--model", tiny_model, "--text", text, "--device", "mps"), "--device mps"
    )


def test_bad_settings_are_one_line_errors_before_anything_loads(tmp_path, tiny_model):
    if not torch.cuda.is_available():
        with pytest.raises(PysmtError, match="--device cpu"):
            resolve_device("cuda")
    system = SystemConfig(path=tmp_path / "pysmt.toml", features=[])
    for params, message in [
        ({"buffer-size": 0}, "feature CSLM0: buffer-size must be at least 1, not 0"),
        ({"cache-size": -1}, "feature CSLM0: cache-size must be 0"),
        ({"normalization": "softmax"}, "feature CSLM0: normalization must be"),
        ({"device": "mps"}, "feature CSLM0: device = mps: unknown device"),
    ]:
        with pytest.raises(PysmtError, match=message):  # before anything is loaded
            CslmFeature.check_config("CSLM0", parameters_of(CslmFeature, {"model": str(tiny_model), **params}), system)
    with pytest.raises(
        PysmtError,
        match=r"feature CSLM0: missing parameter 'model' \(the model folder: train one with "
        r"`pysmt cslm train .*; its default, .*cslm, does not exist\)",
    ):
        parameters_of(CslmFeature, {}, tmp_path)


def test_corrupt_and_foreign_checkpoints_are_one_line_errors(tmp_path, tiny_model):
    broken = tmp_path / "broken"
    shutil.copytree(tiny_model, broken)
    (broken / MODEL).write_bytes(b"not a checkpoint")
    with pytest.raises(PysmtError, match="not a readable pysmt-cslm checkpoint") as err:
        load_model(broken)
    assert "\n" not in str(err.value)
    (broken / MODEL).write_bytes(b"")
    with pytest.raises(PysmtError, match=r"not a readable pysmt-cslm checkpoint \(an empty file\)"):
        load_model(broken)
    torch.save({"model_type": "pysmt-rnn", "hyperparameters": {"hidden": 16}, "model": {}}, broken / MODEL)
    with pytest.raises(PysmtError, match="not a pysmt-cslm checkpoint .it is a pysmt-rnn model"):
        load_model(broken)
    state = load_checkpoint(tiny_model / MODEL)
    state["model"]["output.weight"] = torch.zeros(3, 3)
    torch.save(state, broken / MODEL)
    with pytest.raises(PysmtError, match="weights do not fit preset 'default'"):
        load_model(broken)
    (broken / "target.vocab").write_text("[EOS]\n[UNK]\nx\n")
    shutil.copy(tiny_model / MODEL, broken / MODEL)
    with pytest.raises(PysmtError, match=r"the shortlist \(3 words\) does not match the model \(5\)"):
        load_model(broken)


@pytest.mark.slow  # a command that loads torch
def test_a_model_that_does_not_load_is_one_line_from_the_command_line(tmp_path, tiny_model):
    broken = tmp_path / "broken"
    shutil.copytree(tiny_model, broken)
    (broken / "target.vocab").write_text("[EOS]\n[UNK]\nx\n")
    decoded = run_pysmt("cslm", "perplexity", "--model", broken, "--text", toy_text(tmp_path / "t.txt", 5))
    one_line_error(decoded, "does not match the model")


def test_the_time_budget_counts_the_earlier_runs_of_a_resumed_training(tmp_path):
    text = toy_text(tmp_path / "text.txt")
    model = tmp_path / "m"
    train(text, model, TINY, CPU, TrainingLimits(max_updates=20, valid_every=20))
    state = load_checkpoint(model / LAST)
    assert state["update"] == 20 and state["seconds"] > 0
    save_checkpoint(model / LAST, {**state, "seconds": 120.0})  # as if the first run had trained 2 minutes
    train(text, model, TINY, CPU, TrainingLimits(max_updates=60, max_time=60.0, valid_every=20))
    assert load_checkpoint(model / LAST)["update"] == 20  # the 1-minute budget was spent before
    train(text, model, TINY, CPU, TrainingLimits(max_updates=40, max_time=600.0, valid_every=20))
    state = load_checkpoint(model / LAST)
    assert state["update"] == 40 and state["seconds"] > 120.0
    assert float((model / "log.tsv").read_text().splitlines()[-1].split("\t")[4]) >= 120  # the log's clock runs on
