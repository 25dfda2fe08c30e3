"""The plugin contract (pysmt/features/base.py): batched = unbatched, whatever the buffer size; the
documented example plugins decode. The registry's tests are in test_registry.py."""

import numpy as np
import pytest

from pysmt.config_files import load_config
from pysmt.decoder import Decoder
from pysmt.testing import registered, toy_decoder


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
        lists.append(
            [
                [(c.words, round(c.total, 9)) for c in decoder.translate(line, nbest_size=30).hypotheses]
                for line in ["a b c", "c b a q", "a a b c c a b"]
            ]
        )
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
