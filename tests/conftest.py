"""Fixtures the tests of every package use: the toy Moses system of pysmt.testing (whose scores can be
computed by hand), a dev set and an input for it, and test feature plugins (``fake_registry``).

Helpers that tests import (functions, constants) are in :mod:`tests.helpers`: nothing imports this module.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from pysmt.features.base import BatchedStatefulFeature, StatefulFeature
from pysmt.testing import registered
from tests.helpers import write_moses_system


@pytest.fixture
def tiny_system(tmp_path: Path) -> Path:
    return write_moses_system(tmp_path / "system")


@pytest.fixture
def dev(tmp_path: Path) -> tuple[Path, Path]:
    """A three-sentence dev set for the toy system: source and reference."""
    src, ref = tmp_path / "dev.src", tmp_path / "dev.ref"
    src.write_text("a b c\nc b a\nb c\n")
    ref.write_text("x y z\nz y x\ny z\n")
    return src, ref


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A two-line input for the toy system."""
    path = tmp_path / "in.txt"
    path.write_text("a b c\nc b a\n")
    return path


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
    fixture's value names the registered classes (patch these)."""
    from pysmt_example_features import LengthRatioFeature, RepeatedWordFeature

    classes = {"bigram": BigramBonus, "batched_bigram": BatchedBigramBonus, "length_ratio": LengthRatioFeature,
               "repeated_word": RepeatedWordFeature}
    with registered(**classes):
        yield SimpleNamespace(**classes)
