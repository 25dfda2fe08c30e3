"""User mistakes never destroy data, never reuse stale work, and end in one line, not a traceback.

One test (or parametrized case) per mistake; each asserts the exit status, that the message is a
single line naming the problem, and that the inputs survive. Training's and the RNN plugin's own
cases are in tests/test_training_reliability.py and plugins/rnn_feature/tests; what signals, concurrent runs
and full disks do, in tests/test_runs_and_processes.py.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from pysmt.config_files import load_config, write_toml
from pysmt.errors import PysmtError
from pysmt.jobs import Job
from pysmt.textio import atomic_path, atomic_writer, read_lines
from tests.conftest import error_line, fails, pysmt, tune_command, write_moses_system


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "in.txt"
    path.write_text("a b c\nc b a\n")
    return path


# -- 1. no output may be an input; nothing is truncated before the run has started ---------------

@pytest.mark.parametrize("option", ["--nbest", "--alignment"])
def test_output_equal_to_the_input_is_refused_and_the_input_survives(tiny_system, source, option):
    before = source.read_bytes()
    fails(pysmt("decode", "-c", str(tiny_system), "-i", str(source), option, str(source)), 1,
          option, "is also the input --input")
    assert source.read_bytes() == before


def test_output_equal_to_a_model_file_is_refused(tiny_system, source):
    table = tiny_system.parent / "phrases.txt"
    before = table.read_bytes()
    fails(pysmt("decode", "-c", str(tiny_system), "-i", str(source), "--nbest", str(table)), 1,
          "--nbest", "PhraseDictionaryMemory0 path")
    assert table.read_bytes() == before


def test_two_outputs_on_one_file_are_refused(tiny_system, source, tmp_path):
    out = tmp_path / "out.txt"
    fails(pysmt("decode", "-c", str(tiny_system), "-i", str(source), "--nbest", str(out), "--alignment", str(out)),
          1, "--nbest and --alignment are the same file")


def test_an_earlier_output_survives_a_run_that_fails_to_start(tiny_system, source, tmp_path):
    nbest = tmp_path / "nbest.txt"
    nbest.write_text("precious\n")
    fails(pysmt("decode", "-c", str(tiny_system), "-i", str(source), "--nbest", str(nbest), "--features", "nope"),
          1, "unknown feature 'nope'")
    assert nbest.read_text() == "precious\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary file left


@pytest.mark.parametrize("folder", ["/no/such/folder", "/proc"])
def test_outputs_in_a_missing_or_unwritable_folder_fail_before_loading(tiny_system, source, folder):
    proc = pysmt("decode", "-c", str(tiny_system), "-i", str(source), "--nbest", f"{folder}/nbest.txt")
    fails(proc, 1, "--nbest", f"in {folder}")


# -- 2. resumable jobs refuse other inputs ---------------------------------------------------------

def test_tune_rerun_with_another_dev_set_is_refused_and_keeps_the_results(tiny_system, dev, tmp_path):
    src, ref = dev
    out = tmp_path / "tune"
    assert pysmt(*tune_command(tiny_system, src, ref, out)).returncode == 0
    kept = {name: (out / name).read_bytes() for name in ("log.tsv", "pysmt.toml", "weights.txt")}
    other = tmp_path / "other.ref"
    other.write_text("x\ny\nz\n")
    fails(pysmt(*tune_command(tiny_system, src, other, out)), 1, "--ref", "--force", "new --out")
    assert {name: (out / name).read_bytes() for name in kept} == kept
    src.write_text("a b c\nc b a\nb c a\n")  # the same path, changed content
    fails(pysmt(*tune_command(tiny_system, src, ref, out)), 1, "--src", "changed since the job started")
    fails(pysmt(*tune_command(tiny_system, src, ref, out, "--seed", "7")), 1, "seed: 0 -> 7")
    again = pysmt(*tune_command(tiny_system, src, ref, out, "--force"))
    assert again.returncode == 0 and b"decode dev" in again.stderr  # started afresh


def test_tune_rerun_unchanged_resumes_without_decoding(tiny_system, dev, tmp_path):
    src, ref = dev
    out = tmp_path / "tune"
    assert pysmt(*tune_command(tiny_system, src, ref, out)).returncode == 0
    again = pysmt(*tune_command(tiny_system, src, ref, out, "--threads", "2"))  # threads may change
    assert again.returncode == 0 and b"decode dev" not in again.stderr


def test_a_folder_of_unknown_files_is_not_taken_over(tiny_system, dev, tmp_path):
    out = tmp_path / "tune"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    fails(pysmt(*tune_command(tiny_system, *dev, out)), 1, "already holds files but no job.json")
    assert (out / "mine.txt").read_text() == "keep"


# -- 3 and 4. derived configs translate exactly like the original -----------------------------------

def raw_text_system(directory: Path) -> Path:
    """A pysmt.toml system with [processing]: it takes raw text and tokenizes it (no truecasing)."""
    phrases = ("a ||| x ||| 0.5 0.5 ||| 0-0\nb ||| y ||| 0.5 0.4 ||| 0-0\n, ||| , ||| 0.9 0.9 ||| 0-0\n"
               "a , ||| x , ||| 0.9 0.9 ||| 0-0 1-1\n. ||| . ||| 0.9 0.9 ||| 0-0\nb . ||| z . ||| 0.9 0.9 ||| 0-0 1-1\n"
               "a, ||| WRONG ||| 0.9 0.9 ||| 0-0\n")
    ini = write_moses_system(directory, phrases=phrases, reordering=None)
    config = load_config(ini)
    from dataclasses import replace

    from pysmt.config import ProcessingConfig
    toml = directory / "pysmt.toml"
    write_toml(replace(config, processing=ProcessingConfig("en", "fr", tokenize=True)), toml)
    return toml


def test_filter_applies_the_systems_preprocessing(tmp_path):
    toml = raw_text_system(tmp_path / "system")
    source = tmp_path / "raw.txt"
    source.write_text("a, b.\nb.\n")
    assert pysmt("filter", "-c", str(toml), "-i", str(source), "-o", str(tmp_path / "filtered")).returncode == 0
    filtered = tmp_path / "filtered" / "pysmt.toml"
    from pysmt.models.phrase_table import PhraseTable
    table = PhraseTable(load_config(filtered).feature("PhraseDictionaryMemory0").params["path"])
    assert sorted(table.sources) == [",", ".", "a", "a ,", "b", "b ."]  # tokenized n-grams, not "a,"
    full = pysmt("decode", "-c", str(toml), "-i", str(source))
    assert full.returncode == 0 and full.stdout == pysmt("decode", "-c", str(filtered), "-i", str(source)).stdout
    assert load_config(filtered).processing == load_config(toml).processing


def test_filter_into_the_systems_own_folder_is_refused(tmp_path):
    toml = raw_text_system(tmp_path / "system")
    before = toml.read_bytes()
    source = tmp_path / "raw.txt"
    source.write_text("a, b.\n")
    fails(pysmt("filter", "-c", str(toml), "-i", str(source), "-o", str(toml.parent)), 1, "is also the input --config")
    assert toml.read_bytes() == before


def test_tune_out_in_the_system_folder_is_refused(tmp_path, dev):
    toml = raw_text_system(tmp_path / "system")
    before = toml.read_bytes()
    fails(pysmt(*tune_command(toml, *dev, toml.parent)), 1, "is also the input --config")
    assert toml.read_bytes() == before


def test_tuned_config_of_a_moved_system_keeps_every_path(tmp_path, dev):
    toml = raw_text_system(tmp_path / "system")
    out = tmp_path / "elsewhere" / "tune"
    assert pysmt(*tune_command(toml, *dev, out)).returncode == 0
    tuned = out / "pysmt.toml"
    source = tmp_path / "raw.txt"
    source.write_text("a, b.\nb.\n")
    original = pysmt("decode", "-c", str(toml), "-i", str(source), "--weights", str(out / "weights.txt"))
    assert original.returncode == 0 and pysmt("decode", "-c", str(tuned), "-i", str(source)).stdout == original.stdout


def test_param_sets_a_feature_parameter_from_the_command_line(tiny_system, source, tmp_path):
    one = tmp_path / "one.txt"
    one.write_text("a\n")
    counts = []
    for extra in ([], ["--param", "PhraseDictionaryMemory0.table-limit=1"], ["--param", "phrase-table.table-limit=1"]):
        proc = pysmt("decode", "-c", str(tiny_system), "-i", str(one), "--nbest", str(tmp_path / "n.txt"), *extra)
        assert proc.returncode == 0, proc.stderr
        counts.append(len((tmp_path / "n.txt").read_text().splitlines()))
    assert counts == [2, 1, 1]  # "a" has two translations; a table limit of 1 keeps one
    fails(pysmt("decode", "-c", str(tiny_system), "-i", str(source), "--param", "phrase-table.table-limt=1"), 1,
          "unknown parameter 'table-limt'", "did you mean 'table-limit'")
    fails(pysmt("decode", "-c", str(tiny_system), "-i", str(source), "--param", "nosuch.x=1"), 1, "no feature named")
    fails(pysmt("decode", "-c", str(tiny_system), "-i", str(source), "--param", "oops"), 1,
          "expected FEATURE.key=value")


# -- 5. invalid numbers --------------------------------------------------------------------------

@pytest.mark.parametrize("option, value", [("--nbest-size", "0"), ("--nbest-size", "-1"), ("--threads", "0"),
                                           ("--threads", "-1")])
def test_decode_rejects_counts_below_one(tiny_system, source, option, value):
    proc = pysmt("decode", "-c", str(tiny_system), "-i", str(source), option, value)
    assert proc.returncode == 2 and option in error_line(proc)


@pytest.mark.parametrize("option, value", [("--restarts", "-1"), ("--max-iterations", "0"), ("--nbest-size", "0"),
                                           ("--threads", "0")])
def test_tune_rejects_bad_counts_without_leaving_a_run_folder(tiny_system, dev, tmp_path, option, value):
    out = tmp_path / "tune"
    proc = pysmt(*tune_command(tiny_system, *dev, out), option, value)
    assert proc.returncode == 2 and option in error_line(proc)
    assert not out.exists()


@pytest.mark.parametrize("weight", ["nan", "inf", "-inf"])
def test_non_finite_weights_are_refused(tiny_system, source, tmp_path, weight):
    weights = tmp_path / "w.txt"
    weights.write_text(f"WordPenalty0= {weight}\n")
    fails(pysmt("decode", "-c", str(tiny_system), "-i", str(source), "--weights", str(weights)), 1,
          "w.txt, line 1: WordPenalty0: weight 1 must be a finite number")
    tiny_system.write_text(tiny_system.read_text().replace("WordPenalty0= -1", f"WordPenalty0= {weight}"))
    fails(pysmt("decode", "-c", str(tiny_system), "-i", str(source)), 1, "moses.ini, line", "finite number")


@pytest.mark.parametrize("edit, words", [
    (lambda t: t.replace("stack-size = 200", 'stack-size = "big"'), ["[search] stack-size must be an integer"]),
    (lambda t: t.replace("table-limit = 20", "table-limt = 20"),
     ["feature PhraseDictionaryMemory0: unknown parameter 'table-limt'", "did you mean 'table-limit'"]),
    (lambda t: t.replace("table-limit = 20", "table-limit = 2.5"), ["table-limit must be an integer, not 2.5"]),
    (lambda t: t.replace("table-limit = 20", "table-limit = -3"), ["table-limit must be 0 (keep all) or more"]),
    (lambda t: t.replace("-1.0,", "-1.0, nan,"), ["weight 2 must be a finite number"]),
    (lambda t: t.replace("beam-threshold = 1e-05", "beam-threshold = inf"), ["beam-threshold must be a finite"]),
])
def test_config_schema_errors_name_file_section_and_key(tiny_system, source, tmp_path, edit, words):
    toml = tmp_path / "pysmt.toml"
    write_toml(load_config(tiny_system), toml)
    toml.write_text(edit(toml.read_text()))
    fails(pysmt("decode", "-c", str(toml), "-i", str(source)), 1, "pysmt.toml", *words)


def test_moses_ini_misspelled_parameter_names_the_file(tiny_system, source):
    tiny_system.write_text(tiny_system.read_text().replace("table-limit=20", "table-limt=20"))
    fails(pysmt("decode", "-c", str(tiny_system), "-i", str(source)), 1, "moses.ini", "unknown parameter 'table-limt'")


# -- tracebacks that became one line ---------------------------------------------------------------

def test_a_missing_phrase_table_is_reported_before_the_lm_is_loaded(tiny_system, source):
    (tiny_system.parent / "phrases.txt").unlink()
    (tiny_system.parent / "lm.arpa").write_text("not an ARPA file\n")  # loading it first would fail on it
    fails(pysmt("decode", "-c", str(tiny_system), "-i", str(source)), 1, "phrases.txt: no such file")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_stdout_on_a_full_disk_is_one_line(tiny_system, source):
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([sys.executable, "-m", "pysmt.cli", "decode", "-c", str(tiny_system), "-i", str(source)],
                              stdout=full, stderr=subprocess.PIPE)
    assert proc.returncode == 1 and "No space left on device" in error_line(proc)
    assert "Exception ignored" not in proc.stderr.decode()  # nothing more at Python's exit


# -- packaging and files ----------------------------------------------------------------------------

def test_every_written_file_gets_umask_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        with atomic_writer(tmp_path / "a.txt") as out:
            out.write("x\n")
        with atomic_path(tmp_path / "b.bin") as path:
            path.write_bytes(b"x")
        from pysmt.training.preparation import train_truecaser
        train_truecaser(["The cat", "the dog"], tmp_path / "truecase.en")
    finally:
        os.umask(old)
    for name in ("a.txt", "b.bin", "truecase.en"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644, name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.bin", "truecase.en"]


def test_a_failed_atomic_write_leaves_the_old_file(tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("old\n")
    with pytest.raises(RuntimeError):
        with atomic_writer(path) as out:
            out.write("new\n")
            raise RuntimeError
    assert path.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_no_distribution_depends_on_the_unrelated_pypi_pysmt():
    import tomllib
    root = Path(__file__).resolve().parents[1]
    projects = [root / "pyproject.toml", *root.glob("plugins/*/pyproject.toml"),
                *root.glob("examples/*/pyproject.toml")]
    names = {tomllib.loads(p.read_text())["project"]["name"] for p in projects}
    assert "pysmt" not in names and "pysmt-mt" in names
    for project in projects:
        for dependency in tomllib.loads(project.read_text())["project"].get("dependencies", []):
            assert dependency.split(">")[0].split("=")[0].split("[")[0].strip() != "pysmt", project


def test_reading_with_progress_gives_the_same_lines(tmp_path):
    import gzip
    path = tmp_path / "t.gz"
    with gzip.open(path, "wt") as out:
        out.write("".join(f"line {k}\n" for k in range(70_000)))
    assert list(read_lines(path, progress="load")) == list(read_lines(path))


def _job(out: Path, *inputs: Path) -> Job:
    return Job(out, "demo", {"seed": 1}, {"--in": list(inputs)})


def _touch_later(path: Path) -> None:
    stat_ = path.stat()
    os.utime(path, ns=(stat_.st_atime_ns, stat_.st_mtime_ns + 10**9))


def test_a_job_resumes_when_its_input_was_copied_afresh_with_the_same_content(tmp_path):
    """A new machine's copy of the data has new modification times: the content decides, and the record follows."""
    data, out = tmp_path / "data.txt", tmp_path / "out"
    data.write_text("one\ntwo\n")
    assert _job(out, data).start() is False
    recorded = json.loads((out / "job.json").read_text())
    _touch_later(data)
    assert _job(out, data).start() is True
    updated = json.loads((out / "job.json").read_text())["inputs"]["--in"][0]
    assert updated["mtime_ns"] == data.stat().st_mtime_ns
    assert updated["sha256"] == recorded["inputs"]["--in"][0]["sha256"]
    assert json.loads((out / "job.json").read_text())["started"] == recorded["started"]


def test_a_job_is_refused_when_its_input_changed_content_but_not_size(tmp_path):
    data, out = tmp_path / "data.txt", tmp_path / "out"
    data.write_text("one\ntwo\n")
    _job(out, data).start()
    data.write_text("one\ntwx\n")
    _touch_later(data)
    with pytest.raises(PysmtError, match=r"--in: .*data.txt changed since the job started.*--force"):
        _job(out, data).start()


def test_a_folder_input_is_compared_by_names_and_content(tmp_path):
    folder, out = tmp_path / "model", tmp_path / "out"
    folder.mkdir()
    (folder / "a.txt").write_text("x\n")
    _job(out, folder).start()
    (folder / "a.txt").rename(folder / "b.txt")  # same size and count, another name
    _touch_later(folder / "b.txt")
    with pytest.raises(PysmtError, match="changed since the job started"):
        _job(out, folder).start()
    (folder / "b.txt").rename(folder / "a.txt")
    _touch_later(folder / "a.txt")
    assert _job(out, folder).start() is True


def test_an_older_record_without_digests_gains_them_when_its_inputs_are_unchanged(tmp_path):
    data, out = tmp_path / "data.txt", tmp_path / "out"
    data.write_text("one\n")
    _job(out, data).start()
    record = json.loads((out / "job.json").read_text())
    del record["inputs"]["--in"][0]["sha256"]
    (out / "job.json").write_text(json.dumps(record))
    assert _job(out, data).start() is True
    assert "sha256" in json.loads((out / "job.json").read_text())["inputs"]["--in"][0]
    (out / "job.json").write_text(json.dumps(record))
    _touch_later(data)  # without a digest, a new modification time cannot be told from a change
    with pytest.raises(PysmtError, match="changed since the job started"):
        _job(out, data).start()
