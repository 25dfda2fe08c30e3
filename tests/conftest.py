"""Shared fixtures: the toy Moses system of pysmt.testing, whose scores can be computed by hand, and test
feature plugins (``fake_registry``)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from pysmt.features.base import BatchedStatefulFeature, StatefulFeature
from pysmt.testing import TOY_ARPA as TINY_ARPA  # noqa: F401 - the toy system, under the tests' names
from pysmt.testing import TOY_PHRASES as TINY_PHRASES  # noqa: F401
from pysmt.testing import TOY_REORDERING as TINY_REORDERING  # noqa: F401
from pysmt.testing import registered
from pysmt.testing import write_toy_system as write_moses_system

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
LN10 = math.log(10)


@pytest.fixture
def tiny_system(tmp_path: Path) -> Path:
    return write_moses_system(tmp_path / "system")


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data, skipping the test when the data is not there."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not available")
    return path


@pytest.fixture
def dev(tmp_path: Path) -> tuple[Path, Path]:
    """A three-sentence dev set for the toy system: source and reference."""
    src, ref = tmp_path / "dev.src", tmp_path / "dev.ref"
    src.write_text("a b c\nc b a\nb c\n")
    ref.write_text("x y z\nz y x\ny z\n")
    return src, ref


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


@pytest.fixture
def fake_registry():
    """The test features and the example plugins, registered in-process (pysmt.testing.registered); the
    fixture's value names the registered classes (pytest's copy of this module, not ``tests.conftest``'s:
    patch these)."""
    from pysmt_example_features import LengthRatioFeature, RepeatedWordFeature

    classes = {"bigram": BigramBonus, "batched_bigram": BatchedBigramBonus, "length_ratio": LengthRatioFeature,
               "repeated_word": RepeatedWordFeature}
    with registered(**classes):
        yield SimpleNamespace(**classes)


# -- helpers for tests that run the pysmt command ------------------------------------------------

def pysmt(*args: str, stdin: bytes = b"", **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pysmt.cli", *args], input=stdin, capture_output=True, **kwargs)


def error_line(proc: subprocess.CompletedProcess) -> str:
    """The one line of a user error (click prints ``Error: ...``; bad options add usage lines first)."""
    text = proc.stderr.decode()
    assert "Traceback" not in text, text
    errors = [line for line in text.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, text
    return errors[0]


def fails(proc: subprocess.CompletedProcess, status: int, *words: str) -> None:
    assert proc.returncode == status, proc.stderr.decode()
    line = error_line(proc)
    for word in words:
        assert word in line, line


def tune_command(ini: Path, src: Path, ref: Path, out: Path, *extra: str) -> list[str]:
    return ["tune", "-c", str(ini), "--src", str(src), "--ref", str(ref), "--out", str(out),
            "--max-iterations", "1", "--restarts", "1", *extra]


def long_input(path: Path, lines: int = 3000) -> Path:
    path.write_text("".join(" ".join("abc"[(i + k) % 3] for k in range(40)) + "\n" for i in range(lines)))
    return path
