"""The torch thread policy: how many threads torch may use in every pysmt process that runs it.

torch's default intra-op pool has a thread per core, and its OpenMP threads spin while they wait
for work. Next to another busy process they fight it for the cores: on two cores, a torch phrase
scorer decoding beside one other job cost about ten times more with the default pool than with
one thread, and ``pysmt cslm train`` ran at 0.7 updates/s instead of 3.1 (docs/results.md,
"Torch threads"). So pysmt never leaves the number to torch:

* **Decoding processes** (``decode``, ``tune``, ``rescore``, the experiment's tuning and decoding,
  every ``--threads`` worker, and any :class:`~pysmt.decoder.Decoder`) run torch on **one**
  intra-op thread: decoding is parallel over sentences, in processes (``--threads``), and a
  neural feature's batches are small.
* **Training and batch scoring** (``rnn train``, ``cslm train``, ``rnn score``, ``cslm
  perplexity``, the ``rnn`` analyses) take ``--threads N``: by default the CPUs this process may
  run on (``os.sched_getaffinity``: what ``taskset`` or a scheduler's cgroup gives it), or one
  when another process keeps a CPU busy as the command starts (measured over a quarter second).
  Results may differ in their last bits with another number of threads (torch's reductions split
  differently), as in PyTorch itself: give ``--threads`` where runs must match bit for bit.

The number is set in torch when torch is loaded, and in ``OMP_NUM_THREADS`` and
``MKL_NUM_THREADS``, which torch reads when it is imported later and child processes inherit.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any

import click

#: torch's intra-op threads in a decoding process.
DECODING_THREADS = 1
#: Other processes' CPU use (in CPUs) from which a training command takes one thread by default.
BUSY = 0.5
#: The environment variables torch's thread pools read when torch is imported.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


def available_cpus() -> int:
    """The CPUs this process may run on."""
    return len(os.sched_getaffinity(0))


def set_torch_threads(threads: int) -> None:
    """torch uses ``threads`` intra-op threads in this process (now if loaded, else when imported) and its children."""
    for name in THREAD_VARIABLES:
        os.environ[name] = str(threads)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(threads)


def threads_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """``--threads N`` for a command that trains or scores with torch (default: the CPUs available)."""
    return click.option(
        "--threads",
        type=click.IntRange(min=1),
        default=None,
        help="torch's intra-op threads (default: the CPUs this process may run on; give fewer when "
        "other jobs share the machine).",
    )(function)


def busy_elsewhere(interval: float = 0.25) -> float:
    """How many CPUs other processes keep busy, measured over ``interval`` seconds (``/proc/stat``, less this
    process's own time); 0 where the kernel does not say."""

    def busy_seconds() -> float:
        with open("/proc/stat", encoding="ascii") as stat:
            ticks = [int(t) for t in stat.readline().split()[1:]]
        idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle and iowait
        return (sum(ticks[:8]) - idle) / os.sysconf("SC_CLK_TCK")

    try:
        first, own = busy_seconds(), os.times()
        time.sleep(interval)
        later, own_later = busy_seconds(), os.times()
    except (OSError, ValueError, IndexError):
        return 0.0
    mine = (own_later.user + own_later.system) - (own.user + own.system)
    return max(0.0, (later - first - mine) / interval)


def use_training_threads(threads: int | None) -> int:
    """Apply ``--threads`` of a training or scoring command; return the number.

    None: the CPUs this process may run on, but **one** when another process keeps a CPU busy as the
    command starts (:func:`busy_elsewhere`): beside a busy job, torch's spinning threads fight it
    (the RNN's training ran 3.3 times slower on two threads than on one, docs/results.md), while
    alone a second thread gains a quarter. torch is imported here (the command needs it), so the
    number is set in it, not only in the environment, where torch's import may cap it.
    """
    import torch  # noqa: F401 - loaded, so that set_torch_threads sets it

    chosen = threads or available_cpus()
    if threads is None and chosen > 1 and busy_elsewhere() >= BUSY:
        print(
            "pysmt: another process keeps a CPU busy: torch runs on one thread (--threads N to choose)",
            file=sys.stderr,
        )
        chosen = 1
    set_torch_threads(chosen)
    return chosen
