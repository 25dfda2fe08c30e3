"""One owner per output folder (pysmt/running/folder_lock.py): a second run into a busy folder is refused naming
the holder, every command writing an --out folder takes the lock, and taking it removes what a killed
run left. Every case runs real processes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pysmt.files.textio import TEMP_MARK
from pysmt.running.folder_lock import LOCK_FILE, lock_folder
from pysmt.running.jobs import Job, fingerprint
from pysmt.testing import one_line_error, run_pysmt
from tests.helpers import slow_cases, tune_command


def hold_lock(folder: Path) -> subprocess.Popen:
    """Another process holding ``folder``'s lock, as a running pysmt command would."""
    code = (
        f"from pysmt.running.folder_lock import lock_folder; lock_folder({str(folder)!r}); "
        "print('held', flush=True); import time; time.sleep(120)"
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert holder.stdout.readline() == b"held\n"
    return holder


@pytest.mark.slow  # two tune runs
def test_a_second_tune_into_a_busy_folder_is_refused_naming_the_holder(tiny_system, dev, tmp_path):
    src, ref = dev
    out = tmp_path / "tune"
    holder = hold_lock(out)
    try:
        one_line_error(
            run_pysmt(*tune_command(tiny_system, src, ref, out)),
            f"{out.resolve()} is in use by another run",
            f"PID {holder.pid}",
        )
        assert sorted(p.name for p in out.iterdir()) == [LOCK_FILE]  # nothing written
    finally:
        holder.kill()
        holder.wait()
    # the kernel released the lock with the process: no stale lock to clean up
    assert run_pysmt(*tune_command(tiny_system, src, ref, out)).returncode == 0


@pytest.mark.parametrize("command", ["binarize", *slow_cases("train", "rnn train")])
def test_every_command_writing_an_out_folder_takes_its_lock(tiny_system, tmp_path, command):
    out = tmp_path / "out"
    holder = hold_lock(out)
    corpus = tmp_path / "c"
    for lang in ("en", "fr"):
        (tmp_path / f"c.{lang}").write_text("a house\nthe cat\n")
    args = {
        "binarize": ["binarize", "-c", str(tiny_system), "-o", str(out)],
        "train": ["train", "--corpus", str(corpus), "--out", str(out)],
        "rnn train": ["rnn", "train", "--phrase-table", str(tiny_system.parent / "phrases.txt"), "--out", str(out)],
    }[command]
    try:
        proc = run_pysmt(*args)
        assert proc.returncode == 1 and "is in use by another run" in proc.stderr, proc.stderr
    finally:
        holder.kill()
        holder.wait()


def test_a_lock_is_not_part_of_a_folders_content(tmp_path):
    folder = tmp_path / "system"
    folder.mkdir()
    (folder / "table").write_text("x\n")
    before = fingerprint(folder, "--system")
    lock_folder(folder)  # (this test process holds it until it exits)
    assert fingerprint(folder, "--system") == before
    job = Job(tmp_path / "empty", "tune", {}, {})
    lock_folder(job.out)
    assert not job.holds_other_work() and job.start() is False  # a locked empty folder is still empty


def test_taking_a_lock_removes_what_a_killed_run_left_but_not_other_runs_files(tmp_path):
    out = tmp_path / "run"
    (out / "sub").mkdir(parents=True)
    (out / "child").mkdir()
    left = [out / f".nbest.txt.x1{TEMP_MARK}", out / "sub" / f".model.pt.x2{TEMP_MARK}.pt", out / f".lm.x3{TEMP_MARK}"]
    for path in left[:2]:
        path.write_text("partial")
    left[2].mkdir()
    (left[2] / "lm.arpa").write_text("partial")
    theirs = out / "child" / f".log.tsv.x4{TEMP_MARK}"  # a folder with its own owner
    (out / "child" / LOCK_FILE).touch()
    theirs.write_text("being written")
    (out / "keep.txt").write_text("mine")
    lock_folder(out)
    assert not any(path.exists() for path in left)
    assert theirs.exists() and (out / "keep.txt").exists()


def test_a_second_experiment_into_a_busy_folder_is_refused(tmp_path, shared_data):
    shared_data("news", "newstest2013.en")
    out = tmp_path / "run"
    holder = hold_lock(out)
    try:
        one_line_error(
            run_pysmt("experiment", "--data", shared_data(), "--out", out, "--scale", "tiny"),
            "is in use by another run",
            f"PID {holder.pid}",
        )
    finally:
        holder.kill()
        holder.wait()


def test_a_lock_and_the_records_stay_json(tmp_path):
    """The lock file says who holds the folder, in JSON (what the refusal quotes)."""
    from pysmt.running.folder_lock import LOCK_FILE, lock_folder

    lock_folder(tmp_path / "out")
    record = json.loads((tmp_path / "out" / LOCK_FILE).read_text())
    assert set(record) == {"pid", "command", "started"}
