"""User mistakes give one clear line, never a traceback, and never cost data.

Through the real command line where the case is a command's: reruns of `pysmt rnn train` on another
table, with --force, and identically; `rnn score --out` onto its own table; options out of range;
a garbage model.pt; `rnn maps` on too few points; and the configs that `pysmt tune` and `pysmt
filter` derive from a system with the rnn and wp features (they must find SYSTEM/rnn).
"""

import os
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from pysmt.config_files import load_config, write_toml
from pysmt.plugin import PysmtError, SystemConfig
from pysmt.running.folder_lock import LOCK_FILE
from pysmt.testing import one_line_error, parameters_of, run_pysmt, write_toy_system
from rnn_feature.analysis import maps, tsne_minimum
from rnn_feature.features import RnnFeature
from rnn_feature.hyperparameters import preset
from rnn_feature.pairs_for import FILTERED
from rnn_feature.store import LAST, MODEL, SOURCE_VOCAB, TARGET_VOCAB, load_checkpoint, load_model, resolve_device
from rnn_feature.training import PAIRS, TRAINING_FILES, TrainingLimits, train
from rnn_feature.vocabulary import Shortlist
from rnn_testing import ENGLISH, TINY, WORDS, toy_table

CPU = torch.device("cpu")
#: The hyperparameters `pysmt rnn train` uses without --preset and --seed, so the API and the CLI make one job.
DEFAULT = preset("default")


def other_table(path: Path, n: int = 40) -> Path:
    """Like toy_table but in other words: a model trained on it has other shortlists."""
    return toy_table(
        path, n, seed=1, source=["red", "green", "blue", "black"], target=["rouge", "vert", "bleu", "noir"]
    )


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file() and p.name != LOCK_FILE}


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> tuple[Path, Path]:
    """(phrase table, model folder) of a tiny model trained once for the tests that only read it."""
    tmp = tmp_path_factory.mktemp("tiny")
    table = toy_table(tmp / "pt.gz", n=80)
    threads = torch.get_num_threads()  # set up before conftest's single_threaded: the same here
    torch.set_num_threads(1)
    try:
        train(table, tmp / "m", TINY, CPU, TrainingLimits(max_updates=10, valid_every=10))
    finally:
        torch.set_num_threads(threads)
    return table, tmp / "m"


# -- pysmt rnn train: the job record ----------------------------------------------------------------


@pytest.mark.slow
def test_train_reruns_resume_only_the_same_job(tmp_path):
    """Same command: resumes. Another --phrase-table: one-line error naming it, nothing touched.
    The same with --force: starts afresh on the new table (new shortlists, update count from 0)."""
    table, other = toy_table(tmp_path / "pt.gz", n=60), other_table(tmp_path / "other.gz")
    model = tmp_path / "m"
    train(table, model, DEFAULT, CPU, TrainingLimits(max_updates=3, valid_every=3))  # what the CLI's defaults make
    assert (model / "job.json").is_file()
    common = ["--out", model, "--device", "cpu", "--valid-every", "3"]

    resumed = run_pysmt("rnn", "train", "--phrase-table", table, *common, "--max-updates", "6")
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming at update 3" in resumed.stderr
    assert load_checkpoint(model / LAST)["update"] == 6
    before = snapshot(model)

    refused = run_pysmt("rnn", "train", "--phrase-table", other, *common, "--max-updates", "9")
    line = one_line_error(refused, "--phrase-table", str(table.resolve()), str(other.resolve()), "--force")
    assert "holds a rnn train job" in line
    assert snapshot(model) == before  # the earlier training is untouched, job.json included

    (model / "notes.txt").write_text("mine\n")  # not a training file: --force leaves it alone
    fresh = run_pysmt("rnn", "train", "--phrase-table", other, *common, "--max-updates", "3", "--force")
    assert fresh.returncode == 0, fresh.stderr
    assert "resuming" not in fresh.stderr and "counting words in" in fresh.stderr
    assert load_checkpoint(model / LAST)["update"] == 3
    assert "rouge" in Shortlist.load(model / TARGET_VOCAB) and "un" not in Shortlist.load(model / TARGET_VOCAB)
    assert "red" in Shortlist.load(model / SOURCE_VOCAB)
    assert len((model / "log.tsv").read_text().splitlines()) == 1  # the old validations went with the old model
    assert (model / "notes.txt").read_text() == "mine\n"
    assert load_model(model)[2].words == Shortlist.load(model / TARGET_VOCAB).words


def test_train_api_records_the_job_and_force_discards_only_training_files(tmp_path):
    table = toy_table(tmp_path / "pt.gz", n=40)
    model = tmp_path / "m"
    train(table, model, TINY, CPU, TrainingLimits(max_updates=2, valid_every=2))
    with pytest.raises(PysmtError, match=r"seed: 1234 -> 7"):  # another seed is another job
        train(table, model, replace(TINY, seed=7), CPU, TrainingLimits(max_updates=2))
    os.utime(table, ns=(1, 1))  # copied afresh: a new time, the same bytes, the same job
    train(table, model, TINY, CPU, TrainingLimits(max_updates=3, valid_every=3))
    assert load_checkpoint(model / LAST)["update"] == 3
    original = table.read_bytes()
    data = bytearray(original)
    data[-9] ^= 1  # the same name and size, but the table changed (one corrupted byte)
    table.write_bytes(bytes(data))
    with pytest.raises(PysmtError, match=r"--phrase-table: .*changed since the job started"):
        train(table, model, TINY, CPU, TrainingLimits(max_updates=4))
    assert load_checkpoint(model / LAST)["update"] == 3
    table.write_bytes(original)
    (model / "keep.txt").write_text("x")
    train(table, model, TINY, CPU, TrainingLimits(max_updates=1, valid_every=1), force=True)
    assert load_checkpoint(model / LAST)["update"] == 1 and (model / "keep.txt").exists()
    assert set(TRAINING_FILES) - {FILTERED} <= {p.name for p in model.iterdir()}  # (pairs-for.gz: with --pairs-for)


def test_a_folder_of_unknown_files_is_not_trained_into(tmp_path):
    table = toy_table(tmp_path / "pt.gz", n=40)
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / PAIRS).write_bytes(b"old pairs of another table")  # as left by an older pysmt: no job.json
    with pytest.raises(PysmtError, match="no job.json"):
        train(table, tmp_path / "m", TINY, CPU, TrainingLimits(max_updates=1))
    assert (tmp_path / "m" / PAIRS).read_bytes() == b"old pairs of another table"


def test_a_run_that_failed_before_any_work_reruns_without_force(tmp_path):
    """A bad table line stops the first run after the job record: fixing the table is not 'another job'."""
    table = tmp_path / "pt.txt"
    table.write_text("one ||| un ||| 0.5\ntwo |||  ||| 0.5\n")
    with pytest.raises(PysmtError, match="line 2: empty target phrase"):
        train(table, tmp_path / "m", TINY, CPU, TrainingLimits(max_updates=1))
    table.write_text("one ||| un ||| 0.5\ntwo ||| deux ||| 0.5\n")
    train(table, tmp_path / "m", TINY, CPU, TrainingLimits(max_updates=1, valid_every=1))
    assert load_checkpoint(tmp_path / "m" / LAST)["update"] == 1


# -- options checked at the edge --------------------------------------------------------------------

# each case a command that loads torch (a second or two): the fast tier runs the first
BAD_OPTIONS = [
    (["train", "--valid-every", "0"], 2, "--valid-every"),
    (["train", "--device", "mps"], 1, "--device mps"),
    (["train", "--patience", "0"], 2, "--patience"),
    (["train", "--max-updates", "0"], 2, "--max-updates"),
    (["train", "--max-time", "0"], 2, "--max-time"),
    (["train", "--seed", "-1"], 2, "--seed"),
    (["score", "--batch-size", "0"], 2, "--batch-size"),
    (["score", "--device", "mps"], 1, "--device mps"),
    (["maps", "--words", "0"], 2, "--words"),
    (["samples", "--samples", "0"], 2, "--samples"),
    (["top-phrases", "--tm-column", "-1"], 2, "--tm-column"),
    (["scatter", "--device", "tpu"], 1, "--device tpu"),
]


@pytest.mark.parametrize(
    ("args", "status", "needle"),
    [BAD_OPTIONS[0], *(pytest.param(*case, marks=pytest.mark.slow) for case in BAD_OPTIONS[1:])],
)
def test_bad_options_are_one_line_errors_before_loading(tmp_path, args, status, needle):
    table = toy_table(tmp_path / "pt.gz", n=20)
    where = {
        "train": ["--phrase-table", table, "--out", tmp_path / "m"],
        "score": ["--model", tmp_path / "m", "--phrase-table", table, "--out", tmp_path / "scored.gz"],
    }
    rest = where.get(args[0], ["--model", tmp_path / "m", "--phrase-table", table, "--out", tmp_path / "a"])
    proc = run_pysmt("rnn", *args, *rest)
    line = proc.stderr.strip().splitlines()[-1]
    assert proc.returncode == status and "Traceback" not in proc.stderr, proc.stderr
    assert line.startswith("Error") and needle in line, proc.stderr
    if status == 1:
        assert "auto, cpu, cuda or cuda:N" in line
    assert not (tmp_path / "m").exists() and not (tmp_path / "a").exists()  # nothing was made


def test_resolve_device_accepts_only_known_names():
    assert resolve_device("cpu") == CPU and resolve_device(" CPU ") == CPU
    assert resolve_device("auto").type in {"cpu", "cuda"}
    for name in ("mps", "cuda:", "cuda:-1", "gpu", "", "cpu:0"):
        with pytest.raises(PysmtError, match="unknown device; use auto, cpu, cuda or cuda:N"):
            resolve_device(name)
    if not torch.cuda.is_available():
        with pytest.raises(PysmtError, match="no CUDA GPU"):
            resolve_device("cuda:1")


def test_the_rnn_feature_checks_its_device_before_loading(tmp_path):
    config = SystemConfig(path=tmp_path / "pysmt.toml", features=[])
    with pytest.raises(PysmtError, match=r"^feature RNN0: device = mps: unknown device"):
        RnnFeature.check_config("RNN0", parameters_of(RnnFeature, {"model": str(tmp_path), "device": "mps"}), config)


def test_a_model_of_other_words_is_said_before_any_table_loads(tmp_path, capsys):
    """A binary phrase table's target words against the model's most frequent ones (an RNN of the other
    direction), in the feature's checks; the model's own shortlist says nothing."""
    from pysmt.binarize import binarize_system

    phrases = "".join(f"a ||| mot{k} ||| 0.5 0.5 ||| 0-0\n" for k in range(60))
    ini = write_toy_system(tmp_path / "system", phrases=phrases)
    config = load_config(binarize_system(load_config(ini), tmp_path / "binary"))
    table = next(spec.params["path"] for spec in config.features if spec.type == "phrase-table")
    other = tmp_path / "other"
    other.mkdir()
    torch.save({"model_type": "pysmt-rnn", "hyperparameters": {}, "model": {}}, other / MODEL)  # what checks read
    (other / TARGET_VOCAB).write_text("".join(w + "\n" for w in ["[EOS]", "[UNK]", *(f"word{k}" for k in range(60))]))
    RnnFeature.check_config("RNN0", parameters_of(RnnFeature, {"model": str(other)}), config)
    assert capsys.readouterr().err == (
        f"pysmt: warning: feature RNN0: only 0% of the 60 most frequent target words of {other} are in the target "
        f"vocabulary of {table}; was it trained on this system's languages, direction and tokenization?\n"
    )
    (other / TARGET_VOCAB).write_text("".join(w + "\n" for w in ["[EOS]", "[UNK]", *(f"mot{k}" for k in range(60))]))
    RnnFeature.check_config("RNN0", parameters_of(RnnFeature, {"model": str(other)}), config)
    assert capsys.readouterr().err == ""


# -- outputs that would destroy inputs --------------------------------------------------------------


@pytest.mark.slow
def test_score_out_may_not_be_its_phrase_table(tiny_model, tmp_path):
    table, model = tiny_model
    copy = tmp_path / "pt.gz"
    copy.write_bytes(table.read_bytes())
    original = copy.read_bytes()
    proc = run_pysmt("rnn", "score", "--model", model, "--phrase-table", copy, "--out", copy, "--device", "cpu")
    one_line_error(proc, "--out", "is also the input --phrase-table")
    assert copy.read_bytes() == original
    assert [p.name for p in tmp_path.iterdir()] == ["pt.gz"]  # no temporary file left either


@pytest.mark.slow
def test_analysis_out_is_checked_before_loading(tiny_model, tmp_path):
    table, model = tiny_model
    original = table.read_bytes()
    proc = run_pysmt("rnn", "scatter", "--model", model, "--phrase-table", table, "--out", table, "--device", "cpu")
    one_line_error(proc, "--out", "is a file", status=2)  # click's own check of a folder option
    assert table.read_bytes() == original
    proc = run_pysmt("rnn", "top-phrases", "--model", model, "--phrase-table", table, "--out", model, "--device", "cpu")
    one_line_error(proc, "--out", "is also the input --model")


# -- unreadable models, too few points ------------------------------------------------------------


@pytest.mark.parametrize(
    "content", [b"", b"this is a text file, not a model\n", bytes(range(256)) * 8, b"PK\x03\x04 a broken zip"]
)
def test_a_garbage_model_file_is_one_clear_error(tmp_path, content):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / MODEL).write_bytes(content)
    with pytest.raises(PysmtError, match=r"model.pt: not a readable pysmt-rnn checkpoint") as caught:
        load_model(tmp_path / "m")
    assert "\n" not in str(caught.value)


@pytest.mark.slow
def test_a_garbage_model_through_the_command_line(tiny_model, tmp_path):
    table, model = tiny_model
    (tmp_path / "m").mkdir()
    for name in (SOURCE_VOCAB, TARGET_VOCAB):
        (tmp_path / "m" / name).write_bytes((model / name).read_bytes())
    (tmp_path / "m" / MODEL).write_text("not a model\n")
    proc = run_pysmt(
        "rnn",
        "score",
        "--model",
        tmp_path / "m",
        "--phrase-table",
        table,
        "--out",
        tmp_path / "s.gz",
        "--device",
        "cpu",
    )
    one_line_error(proc, "model.pt: not a readable pysmt-rnn checkpoint")
    assert not (tmp_path / "s.gz").exists()
    torch.save({"hyperparameters": {"hidden": 3}, "model": {}}, tmp_path / "m" / MODEL)  # a dict, but not ours
    with pytest.raises(PysmtError, match="model.pt: not a pysmt-rnn checkpoint"):
        load_model(tmp_path / "m")


@pytest.mark.slow
def test_maps_on_too_few_points_says_how_many(tiny_model, tmp_path):
    table, model = tiny_model
    proc = run_pysmt(
        "rnn",
        "maps",
        "--model",
        model,
        "--phrase-table",
        table,
        "--out",
        tmp_path / "a",
        "--words",
        "2",
        "--device",
        "cpu",
    )
    one_line_error(proc, "--words 2", "2 points to map", f"at least {tsne_minimum()}")
    # a model whose shortlist is too small: the same message, from the Python API
    tiny_table = tmp_path / "pt.txt"
    tiny_table.write_text(f"{ENGLISH[0]} {ENGLISH[1]} {ENGLISH[2]} {ENGLISH[3]} ||| {WORDS[0]} ||| 1 1 1 1\n")
    small = replace(TINY, source_shortlist=4)
    train(tiny_table, tmp_path / "m", small, CPU, TrainingLimits(max_updates=1, valid_every=1))
    loaded, source, _ = load_model(tmp_path / "m")
    with pytest.raises(PysmtError, match=r"shortlist has 2 words.*2 points to map, but t-SNE needs at least 3"):
        maps(loaded, source, [], tmp_path, words=1000)


# -- configs derived by tune and filter keep finding the RNN model ----------------------------------


@pytest.mark.slow
def test_tuned_and_filtered_configs_find_the_rnn_model(tmp_path):
    """`pysmt tune --features rnn,wp` on SYSTEM/pysmt.toml writes TUNE/pysmt.toml: decoding with it must
    give what SYSTEM with the same weights gives (the rnn and wp features find SYSTEM/rnn from TUNE/),
    and so must the config that `pysmt filter` writes from it."""
    system = tmp_path / "system"
    ini = write_toy_system(system)
    write_toml(load_config(ini), system / "pysmt.toml")
    train(system / "phrases.txt", system / "rnn", TINY, CPU, TrainingLimits(max_updates=3, valid_every=3))
    (tmp_path / "dev.src").write_text("a b c\nb c\na\nc a b\n")
    (tmp_path / "dev.ref").write_text("x y z\nz x\nx\nz x y\n")
    tune = tmp_path / "tune"
    proc = run_pysmt(
        "tune",
        "-c",
        system / "pysmt.toml",
        "--features",
        "rnn,wp",
        "--src",
        tmp_path / "dev.src",
        "--ref",
        tmp_path / "dev.ref",
        "--out",
        tune,
        "--max-iterations",
        "1",
        "--restarts",
        "2",
    )
    assert proc.returncode == 0, proc.stderr
    tuned = load_config(tune / "pysmt.toml")
    assert {spec.type for spec in tuned.features} >= {"rnn", "wp"}

    def decode(config: Path, *extra: str | Path) -> tuple[str, str]:
        nbest = tmp_path / f"nbest-{config.parent.name}-{len(extra)}.txt"
        run = run_pysmt(
            "decode", "-c", config, "-i", tmp_path / "dev.src", "--nbest", nbest, "--nbest-size", "5", *extra
        )
        assert run.returncode == 0, run.stderr
        return run.stdout, nbest.read_text()

    expected = decode(system / "pysmt.toml", "--features", "rnn,wp", "--weights", tune / "weights.txt")
    assert "RNN0=" in expected[1] and "WP0=" in expected[1]
    assert decode(tune / "pysmt.toml") == expected
    filtered = tmp_path / "filtered"
    proc = run_pysmt("filter", "-c", tune / "pysmt.toml", "-i", tmp_path / "dev.src", "-o", filtered)
    assert proc.returncode == 0, proc.stderr
    assert decode(filtered / "pysmt.toml") == expected


@pytest.mark.slow
def test_param_names_a_model_folder_elsewhere(tmp_path):
    """Without SYSTEM/rnn the features say how to name the folder; --param rnn.model / wp.model name it."""
    ini = write_toy_system(tmp_path / "system")
    train(
        tmp_path / "system" / "phrases.txt",
        tmp_path / "models" / "m",
        TINY,
        CPU,
        TrainingLimits(max_updates=2, valid_every=2),
    )
    (tmp_path / "in.txt").write_text("a b c\n")
    (tmp_path / "w.txt").write_text("RNN0= 0.1\nWP0= -0.2\n")
    command = [
        "decode",
        "-c",
        ini,
        "-i",
        tmp_path / "in.txt",
        "--features",
        "rnn,wp",
        "--weights",
        tmp_path / "w.txt",
        "--nbest",
        tmp_path / "nbest.txt",
    ]
    model = tmp_path / "models" / "m"
    proc = run_pysmt(*command, "--param", f"rnn.model={model}", "--param", f"wp.model={model}")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["x", "y", "z"] and "RNN0=" in (tmp_path / "nbest.txt").read_text()


def test_a_foreign_model_is_refused_before_any_table_loads(tmp_path):
    """An RNN pointed at a CSLM's folder is found by its checkpoint's mark, before the (here unloadable) table."""
    from pysmt.decoder import Decoder
    from pysmt.testing import configure_system

    ini = write_toy_system(tmp_path / "system", phrases="a ||| x ||| nan 0.5 ||| 0-0\n")  # fails if it is loaded
    (tmp_path / "cslm").mkdir()
    torch.save({"model_type": "pysmt-cslm", "hyperparameters": {}, "model": {}}, tmp_path / "cslm" / MODEL)
    config = configure_system(ini, ["rnn"], [f"rnn.model={tmp_path / 'cslm'}"]).with_weights({"RNN0": [1.0]}, "test")
    with pytest.raises(PysmtError) as failure:
        Decoder(config)
    assert str(failure.value) == (
        f"{ini}: feature RNN0: {tmp_path / 'cslm' / MODEL}: not a pysmt-rnn checkpoint (it is a pysmt-cslm model); "
        "train one with `pysmt rnn train`"
    )


@pytest.mark.parametrize("content", [b"not a model\n", b""])
def test_a_model_file_that_is_none_is_one_line_before_any_table_loads(tmp_path, content):
    """decode with an RNN folder whose model.pt is no checkpoint: the feature and the file, before the tables."""
    ini = write_toy_system(tmp_path / "system", phrases="a ||| x ||| nan 0.5 ||| 0-0\n")  # fails if it is loaded
    (tmp_path / "rnn").mkdir()
    (tmp_path / "rnn" / MODEL).write_bytes(content)
    proc = run_pysmt("decode", "-c", ini, "--features", "rnn", "--param", f"rnn.model={tmp_path / 'rnn'}")
    line = one_line_error(
        proc, f"Error: {ini}: feature RNN0: {tmp_path / 'rnn' / MODEL}: not a readable pysmt-rnn checkpoint ("
    )
    assert line.endswith("); train the model again with `pysmt rnn train`")
    assert ("(an empty file)" in line) == (not content)
