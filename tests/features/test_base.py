"""The plugin contract: registry, the documented example plugins, batched = unbatched."""

import sys

import numpy as np
import pytest

from pysmt.config_files import load_config
from pysmt.decoder import Decoder
from pysmt.errors import PysmtError
from pysmt.features import registry
from pysmt.features.base import Feature
from pysmt.testing import registered, toy_decoder, toy_options


def test_builtins_are_entry_points():
    assert {"phrase-table", "kenlm", "distortion", "lexical-reordering", "word-penalty", "phrase-penalty",
            "unknown-word-penalty"} <= set(registry.available())


def test_unknown_feature_lists_the_available_ones(tiny_system):
    with pytest.raises(PysmtError, match="unknown feature 'no-such-feature'; available: .*kenlm"):
        Decoder(load_config(tiny_system), ["no-such-feature"])


@pytest.mark.parametrize("engine", ["auto", "python"])
@pytest.mark.parametrize("search", ["normal", "cube"])
def test_batched_feature_gives_the_unbatched_results(tiny_system, fake_registry, search, engine):
    config = load_config(tiny_system)
    plain = Decoder(config, ["bigram"], search, engine=engine)
    batched = Decoder(config, ["batched-bigram"], search, engine=engine)
    for line in ["a b c", "c b a q", "a a b c c", "b"]:
        one, two = plain.translate(line, nbest_size=20), batched.translate(line, nbest_size=20)
        assert [c.words for c in one.hypotheses] == [c.words for c in two.hypotheses]
        assert np.allclose([c.total for c in one.hypotheses], [c.total for c in two.hypotheses])
        assert np.allclose(one.hypotheses[0].scores, two.hypotheses[0].scores)
    assert batched.features[-1].calls > 0
    assert [name for name, _, _ in batched.nbest_labels()][-1] == "Bigram0"


@pytest.mark.parametrize("search", ["normal", "cube"])
def test_nbest_lists_do_not_depend_on_the_buffer_size(tiny_system, fake_registry, search, monkeypatch):
    config = load_config(tiny_system)
    lists = []
    for size in (1, 10_000):
        monkeypatch.setattr(fake_registry.batched_bigram, "buffer_size", size)
        decoder = Decoder(config, ["batched-bigram"], search)
        lists.append([[(c.words, round(c.total, 9)) for c in decoder.translate(line, nbest_size=30).hypotheses]
                      for line in ["a b c", "c b a q", "a a b c c a b"]])
    assert lists[0] == lists[1]


def test_identical_requests_are_asked_once(tiny_system, fake_registry, monkeypatch):
    monkeypatch.setattr(fake_registry.batched_bigram, "buffer_size", 10_000)
    decoder = Decoder(load_config(tiny_system), ["batched-bigram"], "normal")
    decoder.translate("a b c a b c")
    feature = decoder.features[-1]
    # one request per distinct (state, option, end): far fewer than the hypotheses built
    assert feature.calls <= 6  # one per stack at most: 6 words
    assert feature.asked == 84 and len(feature.words) == 4


@pytest.mark.parametrize("search", ["normal", "cube"])
def test_the_batched_example_decodes_like_the_plain_one(tiny_system, search):
    from pysmt_example_features import BatchedRepeatedWordFeature, RepeatedWordFeature

    with registered(repeated_word=RepeatedWordFeature, repeated_word_batched=BatchedRepeatedWordFeature):
        plain = toy_decoder(tiny_system, ["repeated-word"], search=search)
        batched = toy_decoder(tiny_system, ["repeated-word-batched"], search=search)
        for line in ["a a b", "c c a a q", "b b b"]:
            one, two = plain.translate(line, nbest_size=20), batched.translate(line, nbest_size=20)
            assert [(c.words, c.total) for c in one.hypotheses] == [(c.words, c.total) for c in two.hypotheses]


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


def test_testing_helpers_decode_a_plugin_without_installing_it(tmp_path):
    from pysmt_example_features import RepeatedWordFeature
    from pysmt.testing import write_toy_system

    system = write_toy_system(tmp_path)
    # a name of its own: the example plugin may be installed too, under "repeated-word"
    with registered(unlisted_repeated_word=RepeatedWordFeature):
        decoder = toy_decoder(system, ["unlisted-repeated-word"], weights={"RepeatedWord0": [2.0]}, search="normal")
        options = toy_options(decoder, "a b c")
        assert {(o.start, o.end, o.target) for o in options.options} >= {(0, 1, ("x",)), (1, 3, ("z", "x"))}
        best = decoder.translate("a a", nbest_size=5).hypotheses
        labels = {name: lo for name, lo, _ in decoder.nbest_labels()}
        assert [c.scores[labels["RepeatedWord0"]] for c in best if c.words == ["x", "x"]] == [-1.0]
    with pytest.raises(PysmtError, match="unknown feature 'unlisted-repeated-word'"):
        toy_decoder(system, ["unlisted-repeated-word"])  # registered only inside the with block


def test_rescoring_an_nbest_list_gives_the_scores_of_in_search_use(tiny_system, fake_registry, tmp_path):
    from pysmt.config_files import configure_system
    from pysmt.formats import nbest_line
    from pysmt.rescoring import rescore

    config = configure_system(tiny_system, ["batched-bigram"])
    decoder = Decoder(config, missing_weight=0.7)
    with_feature, without = tmp_path / "with.txt", tmp_path / "without.txt"
    labels = decoder.nbest_labels()
    lines = [nbest_line(0, c, labels) for c in decoder.translate("a b c a", nbest_size=20).hypotheses]
    with_feature.write_text("\n".join(lines) + "\n")
    # the same list without the plugin's scores, and with totals that leave them out
    stripped = []
    for line in lines:
        index, words, scores, total = line.split(" ||| ")
        head, _, bonus = scores.partition(" Bigram0= ")
        stripped.append(f"{index} ||| {words} ||| {head} ||| {float(total) - 0.7 * float(bonus)}")
    without.write_text("\n".join(stripped) + "\n")
    out = tmp_path / "rescored.txt"
    weighted = config.with_weights({"Bigram0": [0.7]}, "test")
    assert rescore(weighted, ["batched-bigram"], without, out) == len(lines)
    expected = [(line.split(" ||| ")[1], line.split(" ||| ")[2]) for line in lines]
    got = [(line.split(" ||| ")[1], line.split(" ||| ")[2]) for line in out.read_text().splitlines()]
    assert got == expected  # the same scores, re-sorted into the same order
    totals = [float(line.split(" ||| ")[3]) for line in out.read_text().splitlines()]
    assert totals == pytest.approx([float(line.split(" ||| ")[3]) for line in lines], abs=2e-6)
    with pytest.raises(PysmtError, match="already have Bigram0= scores"):
        rescore(weighted, ["batched-bigram"], with_feature, tmp_path / "again.txt")


def test_rescore_command_errors(tiny_system, tmp_path):
    import subprocess
    nbest = tmp_path / "n.txt"
    nbest.write_text("0 ||| x ||| KENLM0= -1 ||| -1\n")
    run = lambda *args: subprocess.run([sys.executable, "-m", "pysmt.cli", "rescore", "-c", str(tiny_system),  # noqa: E731
                                        "--nbest", str(nbest), *args], capture_output=True, text=True)
    proc = run("--out", str(nbest), "--features", "kenlm")
    assert proc.returncode == 1 and "is also the input --nbest" in proc.stderr and nbest.read_text().startswith("0 |||")
    proc = run("--out", str(tmp_path / "o.txt"), "--features", "word-penalty")
    assert proc.returncode == 1 and "rescore adds stateful features" in proc.stderr
    assert run("--out", str(tmp_path / "o.txt")).returncode == 2


class CachedTargetLength(Feature):
    """Minus the target length, computed once per target phrase and kept across sentences (as the RNN does)."""

    default_label = "CachedLength"
    computed = []  # every phrase it scored, across instances: what a cache miss costs

    def __init__(self, name, num_scores):
        super().__init__(name, num_scores)
        self.cache = {}

    @classmethod
    def from_config(cls, name, params, system):
        return cls(name, 1)

    def default_weights(self):
        return [0.1]

    def evaluate(self, phrases):
        for phrase in phrases:
            if phrase.target not in self.cache:
                self.computed.append(phrase.target)
                self.cache[phrase.target] = -float(len(phrase.target))
        return np.array([[self.cache[phrase.target]] for phrase in phrases]), None


def test_warm_caches_leaves_only_the_features_caches_filled(tiny_system):
    """Tuning warms the features' caches before forking its workers: decoding the warmed lines asks
    the feature for nothing new, and gives what a cold decoder gives."""
    lines = ["a b c", "c b a", ""]
    with registered(cached_length=CachedTargetLength):
        cold = [toy_decoder(tiny_system, ["cached-length"]).translate(line).best for line in lines]
        decoder = toy_decoder(tiny_system, ["cached-length"])
        CachedTargetLength.computed.clear()
        decoder.warm_caches(lines)
        assert CachedTargetLength.computed and not decoder.options.cache
        warmed = len(CachedTargetLength.computed)
        assert [decoder.translate(line).best for line in lines] == cold
        assert len(CachedTargetLength.computed) == warmed
