"""Decoding a stream of lines (pysmt/decoding/runner.py): a decoding worker that dies stops decode with one line,
not a hang."""

from __future__ import annotations

import os
import signal
import subprocess

from pysmt.testing import one_line_error
from tests.helpers import children_of, long_input, start_decode


def test_a_killed_decoding_worker_stops_decode_with_one_line(tiny_system, tmp_path):
    proc = start_decode(tiny_system, long_input(tmp_path / "in.txt"), "--threads", "2")
    os.kill(children_of(proc.pid)[0], signal.SIGKILL)
    try:
        out, err = proc.communicate(timeout=60)  # before the fix: a hang at 0% CPU
    finally:
        proc.kill()
    one_line_error(subprocess.CompletedProcess(proc.args, proc.returncode, out, err), "a decoding worker process died")
