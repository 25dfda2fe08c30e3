"""Resumable jobs (pysmt/running/jobs.py): a rerun resumes only the same job, refusing other inputs and
keeping the results; a job's inputs are compared by content, and a folder moved with its inputs is
the same job.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from pysmt.errors import PysmtError
from pysmt.running.jobs import Job
from pysmt.testing import one_line_error, run_pysmt
from tests.helpers import tune_command

# -- resumable jobs refuse other inputs ---------------------------------------------------------


@pytest.mark.slow  # seven tune runs
def test_tune_rerun_with_another_dev_set_is_refused_and_keeps_the_results(tiny_system, dev, tmp_path):
    src, ref = dev
    out = tmp_path / "tune"
    assert run_pysmt(*tune_command(tiny_system, src, ref, out)).returncode == 0
    kept = {name: (out / name).read_bytes() for name in ("summary.tsv", "curve.png", "pysmt.toml", "weights.txt")}
    other = tmp_path / "other.ref"
    other.write_text("x\ny\nz\n")
    one_line_error(run_pysmt(*tune_command(tiny_system, src, other, out)), "--ref", "--force", "new --out")
    assert {name: (out / name).read_bytes() for name in kept} == kept
    src.write_text("a b c\nc b a\nb c a\n")  # the same path, changed content
    one_line_error(run_pysmt(*tune_command(tiny_system, src, ref, out)), "--src", "changed since the job started")
    one_line_error(run_pysmt(*tune_command(tiny_system, src, ref, out, "--seed", "7")), "seed: 0 -> 7")
    # MERT's record has no optimizer entry, but its trust region; another optimizer is another job
    one_line_error(run_pysmt(*tune_command(tiny_system, src, ref, out, "--optimizer", "kbmira")), "optimizer: ")
    one_line_error(
        run_pysmt(*tune_command(tiny_system, src, ref, out, "--trust-region", "inf")), "trust_region: 1.0 -> inf"
    )
    again = run_pysmt(*tune_command(tiny_system, src, ref, out, "--force"))
    assert again.returncode == 0 and "decode dev" in again.stderr  # started afresh


@pytest.mark.slow  # two tune runs
def test_tune_rerun_unchanged_resumes_without_decoding(tiny_system, dev, tmp_path):
    src, ref = dev
    out = tmp_path / "tune"
    assert run_pysmt(*tune_command(tiny_system, src, ref, out)).returncode == 0
    again = run_pysmt(*tune_command(tiny_system, src, ref, out, "--threads", "2"))  # threads may change
    assert again.returncode == 0 and "decode dev" not in again.stderr


def test_a_folder_of_unknown_files_is_not_taken_over(tiny_system, dev, tmp_path):
    out = tmp_path / "tune"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    one_line_error(run_pysmt(*tune_command(tiny_system, *dev, out)), "already holds files but no job.json")
    assert (out / "mine.txt").read_text() == "keep"


@pytest.mark.slow  # two tune runs
def test_a_moved_tune_folder_with_its_inputs_resumes(tmp_path):
    """A folder moved together with its inputs is the same job (records hold paths relative to it too)."""
    from tests.helpers import write_moses_system

    project = tmp_path / "project"
    ini = write_moses_system(project / "system")
    src, ref = project / "dev.src", project / "dev.ref"
    src.write_text("a b c\nc b a\nb c\n")
    ref.write_text("x y z\nz y x\ny z\n")
    assert run_pysmt(*tune_command(ini, src, ref, project / "tune")).returncode == 0
    moved = project.rename(tmp_path / "moved")
    again = run_pysmt(
        *tune_command(moved / "system" / "moses.ini", moved / "dev.src", moved / "dev.ref", moved / "tune")
    )
    assert again.returncode == 0 and "decode dev" not in again.stderr, again.stderr


# -- the job record ---------------------------------------------------------------------------------


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


def test_a_job_record_nested_thousands_deep_is_one_line(tiny_system, dev, tmp_path):
    """Python's JSON parser recurses once per level: a RecursionError traceback before, now a record it cannot
    read, as any damaged one."""
    out = tmp_path / "tune"
    out.mkdir()
    (out / "job.json").write_text("[" * 100_000)
    one_line_error(run_pysmt(*tune_command(tiny_system, *dev, out)), f"{out / 'job.json'} is not a pysmt job record")
