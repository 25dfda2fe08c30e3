"""The model's distribution, the scorer, and the feature's array interface on a tiny trained model."""

import math
from itertools import product
from pathlib import Path

import numpy as np
import pytest
import torch

from cslm_testing import TINY, toy_text
from pysmt.plugin import PhrasePair, Sentence, SystemConfig, TranslationOption
from pysmt.testing import parameters_of
from pysmt_cslm.data import encode_text
from pysmt_cslm.features import CslmFeature
from pysmt_cslm.model import Cslm
from pysmt_cslm.scoring import CONTEXT_BLOCK, Scorer, score_text
from pysmt_cslm.store import load_model
from pysmt_cslm.vocabulary import UNK_ID, Backoff, Shortlist


def feature(model: Path, **params) -> CslmFeature:
    system = SystemConfig(path=model.parent / "pysmt.toml", features=[])
    return CslmFeature.from_config(
        "CSLM0", parameters_of(CslmFeature, {"model": str(model), "device": "cpu", **params}), system
    )


def options_of(*targets: str) -> list[TranslationOption]:
    """Translation options with these target phrases (spans do not matter to the CSLM)."""
    made = []
    for k, target in enumerate(targets):
        pair = PhrasePair("s", tuple(target.split()), table="TM0", table_scores=None)
        made.append(TranslationOption(k, k + 1, pair, index=k))
    return made


def test_probabilities_of_a_context_sum_to_one_over_the_full_vocabulary(tiny_model):
    loaded = load_model(tiny_model)
    scorer, backoff, shortlist = Scorer(loaded.model), loaded.backoff, loaded.shortlist
    assert sorted(shortlist.words) == ["[EOS]", "[UNK]", "x", "y", "z"] and set(backoff.outside) == {"q", "r"}
    contexts = np.array([[0] * 6, [0, 0, 0, 0, 2, 3], [2, 3, 4, 1, 2, 3], [4, 4, 4, 4, 4, 1]])  # ids: any words
    ids = np.arange(len(shortlist))
    for context in contexts:
        log_p = scorer.score(np.repeat(context[None], len(ids), 0), ids, "exact")
        p_unk = math.exp(log_p[UNK_ID])
        outside = sum(math.exp(backoff.logp(w)) for w in backoff.outside) + math.exp(backoff.logp("never-seen"))
        total = sum(math.exp(v) for k, v in enumerate(log_p) if k != UNK_ID) + p_unk * outside
        assert total == pytest.approx(1.0, abs=1e-6)
        assert outside == pytest.approx(1.0, abs=1e-12)  # the back-off unigram is a distribution by itself
    # The unigram estimates are a distribution too, over the same events.
    estimates = [math.exp(backoff.unigram(w)) for w in ["x", "y", "z", "q", "r", "never-seen"]]
    assert sum(estimates) + math.exp(backoff.unigram_ids[0]) == pytest.approx(1.0)


def test_backoff_counts_are_add_one_over_outside_words_and_an_unseen_bucket():
    from collections import Counter

    shortlist = Shortlist(["[EOS]", "[UNK]", "a"])
    backoff = Backoff(shortlist, Counter({"a": 10, "b": 3, "c": 1}), sentences=5)
    denominator = (3 + 1) + 2 + 1  # outside tokens, outside types, the unseen bucket
    assert backoff.logp("a") == 0.0
    assert backoff.logp("b") == pytest.approx(math.log(4 / denominator))
    assert backoff.logp("c") == pytest.approx(math.log(2 / denominator))
    assert backoff.logp("zzz") == pytest.approx(math.log(1 / denominator))


def test_precomputed_first_layer_gives_the_models_numbers(tiny_model):
    loaded = load_model(tiny_model)
    scorer = Scorer(loaded.model)
    rng = np.random.default_rng(0)
    contexts = rng.integers(0, 5, (200, 6))
    words = rng.integers(0, 5, 200)
    with torch.no_grad():
        logits = loaded.model(torch.from_numpy(contexts))
        exact = torch.log_softmax(logits, 1)[torch.arange(200), torch.from_numpy(words)].double().numpy()
        raw = logits[torch.arange(200), torch.from_numpy(words)].double().numpy()
    assert np.allclose(scorer.score(contexts, words, "exact"), exact, atol=1e-5)
    assert np.allclose(scorer.score(contexts, words, "self"), raw, atol=1e-5)
    log_z = scorer.log_partition(contexts)
    assert np.allclose(scorer.score(contexts, words, "self") - log_z, exact, atol=1e-5)


@pytest.mark.parametrize("h1, h2", [(37, 300), (64, 256), (5, 7)])
def test_every_processor_version_of_the_hidden_layers_gives_the_portable_ones_bits(h1, h2):
    """The AVX-512 and AVX2 loops (blocks of outputs in registers, tails, zeros skipped) compute what the
    portable loop does, bit for bit, and what relu(W2 relu(h1) + b2) is, to float precision."""
    from pysmt_cslm._network import Network, kernel_versions

    rng = np.random.default_rng(h1 * h2)
    vocab, width = 11, 3
    first = rng.normal(size=(width * vocab, h1)).astype(np.float32)
    w2t, b2 = rng.normal(size=(h1, h2)).astype(np.float32), rng.normal(size=h2).astype(np.float32)
    network = Network(first, width, w2t, b2, rng.normal(size=(4, h2)).astype(np.float32), np.zeros(4, np.float32))
    contexts = rng.integers(0, vocab, (50, width)).astype(np.int32)
    portable = network.hidden(contexts, "portable")
    assert kernel_versions()[-1] == "portable"
    for version in ["", *kernel_versions()]:
        assert network.hidden(contexts, version).view(np.uint32).tolist() == portable.view(np.uint32).tolist(), version
    units = np.maximum(sum(first[p * vocab + contexts[:, p]].astype(np.float64) for p in range(width)), 0)
    assert np.allclose(portable, np.maximum(units @ w2t + b2, 0), rtol=1e-4, atol=1e-4)
    assert (portable == 0).any() and (portable > 0).any()
    with pytest.raises(ValueError, match="no kernel version 'sse9'"):
        network.hidden(contexts, "sse9")


@pytest.mark.parametrize("normalization", ["exact", "self"])
def test_scores_do_not_depend_on_the_batch(tiny_model, normalization):
    """Every n-gram's score is the same bit for bit alone, in a batch, in any order, across log Z's
    block edges."""
    scorer = Scorer(load_model(tiny_model).model)
    contexts = np.array(list(product(range(5), repeat=3)))  # 125 contexts, more than a block
    contexts = np.concatenate([np.zeros((125, 3), dtype=np.int64), contexts], 1)
    n = 400
    rng = np.random.default_rng(1)
    pick, words = rng.integers(0, len(contexts), n), rng.integers(0, 5, n)
    together = scorer.score(contexts[pick], words, normalization)
    assert len(np.unique(contexts[pick], axis=0)) > CONTEXT_BLOCK
    alone = np.array(
        [scorer.score(contexts[pick[k : k + 1]], words[k : k + 1], normalization)[0] for k in range(0, n, 7)]
    )
    assert np.array_equal(together[::7], alone)
    order = rng.permutation(n)
    assert np.array_equal(scorer.score(contexts[pick[order]], words[order], normalization), together[order])


def test_batched_and_unbatched_requests_give_identical_scores_and_states(tiny_model):
    options = options_of("x", "y z", "x y z x y z x", "q", "z q x", "never", "y")
    sentence = Sentence(("a", "b", "c"))
    # Reachable states: grow them by chains of options from the start state.
    grower = feature(tiny_model, **{"cache-size": 0})
    grower.start(sentence, options)
    states = [0]
    for _ in range(3):
        _, new = grower.score_batch(
            np.array(states * len(options)),
            np.repeat(np.arange(len(options)), len(states)),
            np.zeros(len(states) * len(options), dtype=bool),
        )
        states = sorted(set(states) | set(new.tolist()))
    contexts = grower.state_contexts[states]
    requests = [(s, o, e) for s in range(len(states)) for o in range(len(options)) for e in (False, True)]

    def ask(one_by_one: bool, cache: int) -> tuple[np.ndarray, np.ndarray]:
        f = feature(tiny_model, **{"cache-size": cache})
        f.start(sentence, options)
        ids = f.intern(contexts)  # the same states, numbered by this feature
        s = np.array([ids[r[0]] for r in requests])
        o = np.array([r[1] for r in requests], dtype=np.int32)
        e = np.array([r[2] for r in requests])
        if not one_by_one:
            scores, new = f.score_batch(s, o, e)
        else:
            parts = [f.score_batch(s[k : k + 1], o[k : k + 1], e[k : k + 1]) for k in range(len(s))]
            scores, new = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
        return scores, f.state_contexts[new]

    batched = ask(False, 0)
    for one_by_one, cache in [(True, 0), (True, 1000), (False, 1000)]:
        other = ask(one_by_one, cache)
        assert np.array_equal(batched[0], other[0]) and np.array_equal(batched[1], other[1])
    assert len(batched[0]) == len(requests) > 100 and np.isfinite(batched[0]).all()


@pytest.mark.parametrize("normalization", ["exact", "self"])
def test_the_feature_adds_up_what_the_perplexity_command_computes(tiny_model, tmp_path, normalization):
    """A sentence translated option by option scores exactly what score_text gives its tokens (</s> included),
    back-off for q and for an unseen word included."""
    line = "x q y z never-seen x y z"
    (tmp_path / "one.txt").write_text(line + "\n")
    loaded = load_model(tiny_model)
    encoded = encode_text(tmp_path / "one.txt", loaded.shortlist, 6, backoff=loaded.backoff)
    tokens, _ = score_text(Scorer(loaded.model), encoded, normalization)
    options = options_of("x q", "y", "z never-seen x", "y z")
    f = feature(tiny_model, normalization=normalization)
    state = f.start(Sentence(("s",) * 4), options)
    total = 0.0
    for k in range(len(options)):
        scores, new = f.score_batch(np.array([state]), np.array([k], dtype=np.int32), np.array([k == 3]))
        total += scores[0, 0]
        state = int(new[0])
    assert total == pytest.approx(tokens.sum(), abs=1e-9)
    assert tokens[1] < tokens[0] and encoded.outside == 2


def test_states_are_the_last_six_ids_and_recombine_across_outside_words(tiny_model):
    f = feature(tiny_model)
    options = options_of("x y", "x", "y", "q", "r", "never")
    f.start(Sentence(("s",)), options)
    zeros = np.zeros(1, dtype=bool)

    def follow(*indices):
        state = 0
        for k in indices:
            state = int(f.score_batch(np.array([state]), np.array([k], dtype=np.int32), zeros)[1][0])
        return state

    assert follow(0) == follow(1, 2)  # "x y" either way
    assert follow(1) != follow(2)
    assert follow(3) == follow(4) == follow(5)  # q, r and an unseen word are all [UNK] to the network
    assert follow(*[1] * 6) == follow(*[1] * 9)  # only six words matter
    assert follow(*[1] * 5) != follow(*[1] * 6)  # <s> x x x x x vs x x x x x x
    x, y = f.shortlist.ids["x"], f.shortlist.ids["y"]
    assert f.state_contexts[follow(0)].tolist() == [0, 0, 0, 0, x, y]


def test_estimates_are_unigram_log_probabilities(tiny_model):
    f = feature(tiny_model)
    pairs = [PhrasePair("s", ("x", "q"), table="TM0", table_scores=None)]
    scores, estimates = f.evaluate_in_isolation(pairs)
    assert scores is None
    assert estimates[0, 0] == pytest.approx(f.backoff.unigram("x") + f.backoff.unigram("q"))
    assert estimates[0, 0] < 0
    assert feature(tiny_model, **{"future-cost": False}).evaluate_in_isolation(pairs) == (None, None)  # Moses' CSLM


def test_low_vocabulary_coverage_is_reported_once(tiny_model, capsys):
    f = feature(tiny_model)
    f.start(Sentence(("s",)), options_of(*["le chat noir"] * 5))
    f.start(Sentence(("s",)), options_of(*["le chat noir"] * 5))
    err = capsys.readouterr().err
    assert err.count("warning") == 1 and "0% of the first sentence's candidate target words" in err
    g = feature(tiny_model)
    g.start(Sentence(("s",)), options_of(*["x y z"] * 5))
    assert "warning" not in capsys.readouterr().err


def test_rescoring_a_list_of_another_language_warns(tiny_model, capsys):
    """rescore calls the feature as the search does, so the same coverage check sees the list's words."""
    from pysmt.rescoring import sentence_scores
    from pysmt.search.plugin_results import StatefulCalls

    sentence_scores(StatefulCalls(feature(tiny_model)), 0, ["the black cat sat on the mat"] * 3)
    err = capsys.readouterr().err
    assert err.count("warning") == 1 and "0% of the first sentence's candidate target words" in err


def test_model_initialization_is_uniform_and_seeded():
    model = Cslm(TINY, 5)
    again = Cslm(TINY, 5)
    for (name, p), q in zip(model.named_parameters(), again.parameters()):
        assert torch.equal(p, q)
        if name.endswith("bias"):
            assert not p.any()
        else:
            assert p.abs().max() <= 0.01 and p.abs().max() > 0.005


def test_toy_text_fixture_is_as_described(tmp_path):
    words = set(toy_text(tmp_path / "t.txt").read_text().split())
    assert words == {"x", "y", "z", "q", "r"}
