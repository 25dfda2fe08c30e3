"""Processes that pysmt starts die with it, and SIGTERM stops pysmt the way Ctrl-C does.

A scheduler's ``kill``, ``timeout`` or a closed session sends SIGTERM; a crash or the OOM killer
sends SIGKILL, which no handler sees. So that neither leaves work running behind it (an ``rnn
train`` child training into a folder that the rerun trains into as well, a forked decoding worker
holding memory), every child pysmt starts asks Linux to kill it when its parent dies
(``prctl(PR_SET_PDEATHSIG)``), and SIGTERM raises :class:`Terminated` (a ``KeyboardInterrupt``)
in the main thread, so what Ctrl-C keeps is kept, and the command exits with 143 (128 + 15).
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from types import FrameType
from typing import Any

PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived: stop as after Ctrl-C, and exit with status 143."""


def _terminate(signum: int, frame: FrameType | None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM (to the process group) must not cut the cleanup
    raise Terminated


def stop_on_sigterm() -> None:
    """Make SIGTERM raise :class:`Terminated` in the main thread (once; later ones are ignored while it stops)."""
    signal.signal(signal.SIGTERM, _terminate)


def die_with_parent(parent: int) -> None:
    """In a new child: be killed (SIGKILL) when the parent dies; exit now if ``parent`` has died already.

    Linux ties the signal to the thread that started the child: start children from the main thread.
    """
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


class ChildProcess(subprocess.Popen):
    """``subprocess.Popen`` for a child that dies with this process (start it from the main thread)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("preexec_fn", partial(die_with_parent, os.getpid()))
        super().__init__(*args, **kwargs)


@contextmanager
def library_children_die_with_us() -> Iterator[None]:
    """Inside the block, the children a library starts through ``subprocess`` (eflomal's aligner) die with us."""
    original = subprocess.Popen
    subprocess.Popen = ChildProcess  # type: ignore[misc]
    try:
        yield
    finally:
        subprocess.Popen = original  # type: ignore[misc]
