"""The command line's own checks (pysmt/cli.py): counts below one are usage errors (status 2) that
leave no run folder behind, and a full disk under stdout is one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import error_line, pysmt, tune_command


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


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_stdout_on_a_full_disk_is_one_line(tiny_system, source):
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([sys.executable, "-m", "pysmt.cli", "decode", "-c", str(tiny_system), "-i", str(source)],
                              stdout=full, stderr=subprocess.PIPE)
    assert proc.returncode == 1 and "No space left on device" in error_line(proc)
    assert "Exception ignored" not in proc.stderr.decode()  # nothing more at Python's exit
