"""Processes that pysmt starts die with it, and SIGTERM stops pysmt the way Ctrl-C does (pysmt/running/processes.py).

Every case runs real processes and sends real signals (issue 23); the README's *Safety* section
says what each one guarantees.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from pysmt.files.textio import TEMP_MARK
from tests.helpers import alive, children_of, long_input, slow_cases, start_decode, wait_until

# -- children die with their parents ------------------------------------------------------------


def test_kill_9_of_decode_leaves_no_worker(tiny_system, tmp_path):
    proc = start_decode(tiny_system, long_input(tmp_path / "in.txt"), "--threads", "2")
    workers = children_of(proc.pid)
    assert len(workers) >= 2
    proc.kill()
    proc.wait()
    assert wait_until(lambda: not any(alive(pid) for pid in workers)), "orphaned workers"


@pytest.mark.parametrize("library", [False, True])
def test_kill_9_leaves_no_child_command(tmp_path, library):
    """The tools pysmt runs (lmplz, an `rnn train` of the experiment) and those a library runs (eflomal)."""
    start = (
        "with library_children_die_with_us(): subprocess.run(['sleep', '60'])"
        if library
        else "ChildProcess(['sleep', '60']).wait()"
    )
    code = textwrap.dedent(f"""
        import subprocess
        from pysmt.running.processes import ChildProcess, library_children_die_with_us
        {start}
    """)
    parent = subprocess.Popen([sys.executable, "-c", code])
    assert wait_until(lambda: children_of(parent.pid))
    child = children_of(parent.pid)[0]
    parent.kill()
    parent.wait()
    assert wait_until(lambda: not alive(child)), "orphaned child"


# -- SIGTERM as Ctrl-C ---------------------------------------------------------------------------

STOPS = {"ctrl-c": (signal.SIGINT, 130, b"interrupted"), "sigterm": (signal.SIGTERM, 143, b"terminated")}


@pytest.mark.parametrize("threads", ["2", *slow_cases("1")])
@pytest.mark.parametrize("stop", ["ctrl-c", *slow_cases("sigterm")])
def test_a_stopped_decode_keeps_the_nbest_under_its_name_quietly(tiny_system, tmp_path, threads, stop):
    """Ctrl-C (the terminal signals the whole group) and SIGTERM (as `timeout` does) alike."""
    signum, status, word = STOPS[stop]
    nbest = tmp_path / "nbest.txt"
    # a shell that starts a job in the background ignores SIGINT for it (and so would the test's
    # decoder, inheriting that): give it the default, as a terminal does
    proc = start_decode(
        tiny_system,
        long_input(tmp_path / "in.txt"),
        "--threads",
        threads,
        "--nbest",
        str(nbest),
        "--nbest-size",
        "2",
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(0.5)
    os.killpg(proc.pid, signum)
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == status, err.decode()
    assert b"Traceback" not in err and b"KeyboardInterrupt" not in err and b"BrokenPipe" not in err and word in err
    kept = {line.split(" ||| ")[0] for line in nbest.read_text().splitlines()}
    assert "0" in kept and len(kept) < 3000  # what was done is kept, under the final name
    assert not list(tmp_path.glob(f".*{TEMP_MARK}*"))  # no hidden temporary file left behind
