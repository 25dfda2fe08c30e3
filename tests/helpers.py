"""What the tests share besides fixtures: the toy system under the tests' name, a raw-text system, test
feature plugins, ``pysmt`` command lines and watching the processes the commands start.

Test modules import these (``from tests.helpers import tune_command``: ``tests`` is a package); the
fixtures are in ``conftest.py`` files, which nothing imports (the shared data is the root one's
``shared_data``). The toy system, and running the ``pysmt`` command (``run_pysmt``, ``start_pysmt``,
``one_line_error``), are :mod:`pysmt.testing`'s, which the plugins' tests use too.
"""

from __future__ import annotations

import math
import resource
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from pysmt.config_files import load_config, write_toml
from pysmt.features.base import BatchedStatefulFeature, StatefulFeature
from pysmt.testing import start_pysmt
from pysmt.testing import write_toy_system as write_moses_system  # the toy system, under the tests' name

LN10 = math.log(10)


def raw_text_system(directory: Path) -> Path:
    """A pysmt.toml system with [processing]: it takes raw text and tokenizes it (no truecasing)."""
    phrases = (
        "a ||| x ||| 0.5 0.5 ||| 0-0\nb ||| y ||| 0.5 0.4 ||| 0-0\n, ||| , ||| 0.9 0.9 ||| 0-0\n"
        "a , ||| x , ||| 0.9 0.9 ||| 0-0 1-1\n. ||| . ||| 0.9 0.9 ||| 0-0\nb . ||| z . ||| 0.9 0.9 ||| 0-0 1-1\n"
        "a, ||| WRONG ||| 0.9 0.9 ||| 0-0\n"
    )
    ini = write_moses_system(directory, phrases=phrases, reordering=None)
    config = load_config(ini)
    from dataclasses import replace

    from pysmt.config import ProcessingConfig

    toml = directory / "pysmt.toml"
    write_toml(replace(config, processing=ProcessingConfig("en", "fr", tokenize=True)), toml)
    return toml


# -- test feature plugins (registered by conftest.py's fake_registry) --------------------------------


class BigramBonus(StatefulFeature):
    """+1 for each target bigram in a fixed list; state: the last target word."""

    default_label = "Bigram"
    GOOD = {("x", "y"), ("y", "z"), ("z", "x")}

    @classmethod
    def from_config(cls, name, params, system):
        return cls(name, 1)

    def default_weights(self):
        return [0.7]

    def initial_state(self, sentence):
        return "<s>"

    def score(self, state, target):
        bonus = 0.0
        for word in target:
            bonus += (state, word) in self.GOOD
            state = word
        return (bonus,), state

    def extend(self, state, option):
        return self.score(state, option.target)

    def final(self, state):
        return (0.5 if state == "z" else 0.0,)


class BatchedBigramBonus(BatchedStatefulFeature, BigramBonus):
    """BigramBonus's scores through the array interface, with its own state ids and a tiny buffer."""

    buffer_size = 3

    def __init__(self, name, num_scores):
        super().__init__(name, num_scores)
        self.calls = self.asked = 0

    def start(self, sentence, options):
        self.options, self.words, self.ids = options, ["<s>"], {"<s>": 0}
        return 0

    def score_batch(self, states, options, ends):
        assert len(states) <= self.buffer_size
        self.calls += 1
        self.asked += len(states)
        scores, new_states = np.zeros((len(states), 1)), np.zeros(len(states), dtype=np.int64)
        for k, (state, option, end) in enumerate(zip(states.tolist(), options.tolist(), ends.tolist())):
            (bonus,), word = self.score(self.words[state], self.options[option].target)
            scores[k] = bonus + (self.final(word)[0] if end else 0.0)
            new_states[k] = self.ids.setdefault(word, len(self.words))
            if new_states[k] == len(self.words):
                self.words.append(word)
        return scores, new_states


def slow_cases(*cases: object) -> list[object]:
    """Cases of a ``parametrize`` list that only ``--slow`` runs: more of what the cases before them already check
    through the same code, each a command of a second or more. (A tuple is the arguments of one case of a
    parametrize of several names.)"""
    return [
        pytest.param(*case, marks=pytest.mark.slow)
        if isinstance(case, tuple)
        else pytest.param(case, marks=pytest.mark.slow)
        for case in cases
    ]


# -- pysmt command lines ---------------------------------------------------------------------------


def tune_command(ini: Path, src: Path, ref: Path, out: Path, *extra: str) -> list[str]:
    return [
        "tune",
        "-c",
        str(ini),
        "--src",
        str(src),
        "--ref",
        str(ref),
        "--out",
        str(out),
        "--max-iterations",
        "1",
        "--restarts",
        "1",
        "--optimizer",
        "mert",  # the restarts are MERT's, and its cluster path the longest
        *extra,
    ]


def long_input(path: Path, lines: int = 3000) -> Path:
    path.write_text("".join(" ".join("abc"[(i + k) % 3] for k in range(40)) + "\n" for i in range(lines)))
    return path


# -- watching the processes a command starts --------------------------------------------------------


def children_of(pid: int) -> list[int]:
    """The PIDs whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its parent to collect it counts as dead)."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def wait_until(condition, seconds: float = 20.0) -> bool:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def start_decode(system: Path, source: Path, *extra: str, **popen) -> subprocess.Popen:
    """A decoder in a session of its own (so that signals to its group reach only it and its workers)."""
    proc = start_pysmt(
        "decode",
        "-c",
        system,
        "-i",
        source,
        *extra,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        **popen,
    )
    assert proc.stdout.readline()  # it is translating
    return proc


def limited_file_size(size: int):
    """For preexec_fn: files may grow to ``size`` bytes; a write beyond fails (EFBIG), as on a full disk."""

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return limit
