"""The torch thread policy: one intra-op thread in a decoding process, --threads (default: the CPUs
available) for training and scoring commands. Each case runs in a fresh process, as a command would."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pysmt.testing import one_line_error, run_pysmt
from tests.helpers import slow_cases

pytest.importorskip("torch")

DECODER_IN_A_FRESH_PROCESS = """
import os, sys
import torch
torch.set_num_threads(2)  # as torch's default would be on two cores, set before pysmt runs
from pysmt.config_files import configure_system
from pysmt.decoder import Decoder
Decoder(configure_system(sys.argv[1]))
print(torch.get_num_threads(), os.environ["OMP_NUM_THREADS"])
"""

TRAINING_THREADS = """
import os, sys
os.sched_setaffinity(0, set(list(os.sched_getaffinity(0))[:int(sys.argv[1])]))
from pysmt.running.torch_threads import use_training_threads
chosen = use_training_threads(int(sys.argv[2]) if len(sys.argv) > 2 else None)
import torch
print(chosen, torch.get_num_threads(), os.environ["OMP_NUM_THREADS"])
"""


def run(code: str, *args: object) -> str:
    proc = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


@pytest.mark.slow  # a whole tune, train or several decodes: seconds (the fast tier stays under 2 minutes)
def test_a_decoding_process_runs_torch_on_one_thread(tiny_system):
    assert run(DECODER_IN_A_FRESH_PROCESS, tiny_system) == ["1", "1"]


def test_training_threads_are_the_cpus_available_unless_given(monkeypatch):
    """The policy in this process (the fast tier's check; the fresh processes above and below meet it as commands
    do): the CPUs this process may run on, or --threads, set in torch and in what its children inherit."""
    import torch

    from pysmt.running import torch_threads

    monkeypatch.setattr(torch_threads.os, "sched_getaffinity", lambda pid: {0, 2, 5})  # as taskset -c 0,2,5 gives
    monkeypatch.setattr(torch_threads, "busy_elsewhere", lambda: 0.0)  # nothing else runs
    for name in torch_threads.THREAD_VARIABLES:
        monkeypatch.setenv(name, "9")  # (restored after the test)
    before = torch.get_num_threads()
    try:
        assert torch_threads.use_training_threads(None) == 3 and torch.get_num_threads() == 3
        assert torch_threads.use_training_threads(1) == 1 and torch.get_num_threads() == 1
        assert [os.environ[name] for name in torch_threads.THREAD_VARIABLES] == ["1", "1"]
    finally:
        torch.set_num_threads(before)


def test_training_takes_one_thread_beside_a_busy_process_unless_told(monkeypatch):
    import torch

    from pysmt.running import torch_threads

    monkeypatch.setattr(torch_threads.os, "sched_getaffinity", lambda pid: {0, 1})
    monkeypatch.setattr(torch_threads, "busy_elsewhere", lambda: 0.9)  # another process keeps a CPU busy
    for name in torch_threads.THREAD_VARIABLES:
        monkeypatch.setenv(name, "9")
    before = torch.get_num_threads()
    try:
        assert torch_threads.use_training_threads(None) == 1 and torch.get_num_threads() == 1
        assert torch_threads.use_training_threads(2) == 2  # --threads is obeyed
    finally:
        torch.set_num_threads(before)


def test_a_busy_process_is_seen():
    from pysmt.running.torch_threads import busy_elsewhere

    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        assert busy_elsewhere(0.5) >= 0.5
    finally:
        busy.kill()
        busy.wait()


@pytest.mark.slow  # torch in two fresh processes
def test_training_takes_the_cpus_it_may_use_unless_told(tmp_path):
    assert run(TRAINING_THREADS, 1) == ["1", "1", "1"]  # one CPU allowed (as taskset or a cgroup gives it)
    assert run(TRAINING_THREADS, 1, 3) == ["3", "3", "3"]  # --threads 3


@pytest.mark.parametrize(
    "command",
    [["rnn", "train"], *slow_cases(["rnn", "score"], ["rnn", "scatter"], ["cslm", "train"], ["cslm", "perplexity"])],
)
def test_torch_commands_take_threads(command):
    proc = run_pysmt(*command, "--help")
    assert proc.returncode == 0 and "--threads" in proc.stdout
    one_line_error(run_pysmt(*command, "--threads", "0"), "--threads", status=2)
