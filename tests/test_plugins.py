"""The plugin contract: registry, the documented example plugins, batched = unbatched."""

import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import numpy as np
import pytest

from pysmt.config import load_config
from pysmt.decoder import Decoder
from pysmt.errors import PysmtError
from pysmt.features import registry
from pysmt.features.base import BatchedStatefulFeature, StatefulFeature

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "pysmt-example-features"))


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

    def extend(self, state, hypothesis, option):
        return self.score(state, option.target)

    def final(self, state):
        return (0.5 if state == "z" else 0.0,)


class BatchedBigramBonus(BatchedStatefulFeature, BigramBonus):
    """The same scores through request/flush/result, with a tiny buffer so it fills often."""

    def __init__(self, name, num_scores):
        super().__init__(name, num_scores)
        self.queue, self.results, self.flushes = [], [], 0

    def request(self, state, hypothesis, option):
        self.queue.append((state, option))
        self.results.append(None)
        new_state = state if option is None else self.score(state, option.target)[1]
        return len(self.results) - 1, new_state

    def buffer_full(self):
        return len(self.queue) >= 7

    def flush(self):
        base = len(self.results) - len(self.queue)
        for k, (state, option) in enumerate(self.queue):
            self.results[base + k] = BigramBonus.final(self, state) if option is None else self.score(state, option.target)[0]
        self.queue = []
        self.flushes += 1

    def result(self, ticket):
        return self.results[ticket]

    def end_sentence(self):
        self.queue, self.results = [], []


@pytest.fixture
def fake_registry(monkeypatch):
    extra = {
        "bigram": EntryPoint("bigram", "tests.test_plugins:BigramBonus", "pysmt.features"),
        "batched-bigram": EntryPoint("batched-bigram", "tests.test_plugins:BatchedBigramBonus", "pysmt.features"),
        "length-ratio": EntryPoint("length-ratio", "pysmt_example_features:LengthRatioFeature", "pysmt.features"),
        "repeated-word": EntryPoint("repeated-word", "pysmt_example_features:RepeatedWordFeature", "pysmt.features"),
    }
    real = dict(registry.available())
    monkeypatch.setattr(registry, "available", lambda: {**real, **extra})


def test_builtins_are_entry_points():
    assert {"phrase-table", "kenlm", "distortion", "lexical-reordering", "word-penalty", "phrase-penalty",
            "unknown-word-penalty"} <= set(registry.available())


def test_unknown_feature_lists_the_available_ones(tiny_system):
    with pytest.raises(PysmtError, match="unknown feature 'no-such-feature'; available: .*kenlm"):
        Decoder(load_config(tiny_system), ["no-such-feature"])


@pytest.mark.parametrize("search", ["normal", "cube"])
def test_batched_feature_gives_the_unbatched_results(tiny_system, fake_registry, search):
    config = load_config(tiny_system)
    plain = Decoder(config, ["bigram"], search)
    batched = Decoder(config, ["batched-bigram"], search)
    for line in ["a b c", "c b a q", "a a b c c", "b"]:
        one, two = plain.translate(line, nbest_size=20), batched.translate(line, nbest_size=20)
        assert [c.words for c in one.hypotheses] == [c.words for c in two.hypotheses]
        assert np.allclose([c.total for c in one.hypotheses], [c.total for c in two.hypotheses])
        assert np.allclose(one.hypotheses[0].scores, two.hypotheses[0].scores)
    assert batched.features[-1].flushes > 0
    assert [name for name, _, _ in batched.nbest_labels()][-1] == "Bigram0"


def test_example_plugins_decode(tiny_system, fake_registry):
    decoder = Decoder(load_config(tiny_system), ["length-ratio", "repeated-word"])
    result = decoder.translate("a b c a", nbest_size=30)
    labels = {name: lo for name, lo, _ in decoder.nbest_labels()}
    for candidate in result.hypotheses:
        words = candidate.words
        repeats = sum(1 for u, v in zip(words, words[1:]) if u == v)
        assert candidate.scores[labels["RepeatedWord0"]] == -repeats


def test_weight_count_mismatch_is_an_error_before_decoding(tiny_system):
    text = tiny_system.read_text().replace("LexicalReordering0= 0.3 0.3 0.3 0.3 0.3 0.3", "LexicalReordering0= 0.3")
    tiny_system.write_text(text)
    with pytest.raises(PysmtError, match="LexicalReordering0 has 6 scores but 1 weights"):
        Decoder(load_config(tiny_system))
