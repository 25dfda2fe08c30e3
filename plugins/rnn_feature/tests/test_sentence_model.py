"""The sentence model (attention encoder-decoder over subwords): its scores against a hand-written
computation of the equations, batching and padding, direction, subwords, training that resumes exactly,
and the errors a user meets."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from pysmt.plugin import PysmtError
from pysmt.plugin.neural import TrainingLimits
from rnn_feature.sentence.data import EncodedBitext, split
from rnn_feature.sentence.feature import RightToLeftFeature, SentenceFeature, SentenceParameters
from rnn_feature.sentence.hyperparameters import preset
from rnn_feature.sentence.model import AttentionEncoderDecoder, initialize
from rnn_feature.sentence.scoring import SentenceScorer
from rnn_feature.sentence.store import LAST, MODEL, load_checkpoint, save_checkpoint
from rnn_feature.sentence.subwords import EOS_ID, SUBWORDS, Subwords
from rnn_feature.sentence.training import train

TINY = preset("cpu", subwords=300, embedding=6, hidden=5, attention=4, maxout=3, batch_size=8, dropout=0.0)
ENGLISH = ["one", "two", "three", "four", "five", "six"]
FRENCH = ["un", "deux", "trois", "quatre", "cinq", "six"]


def toy_bitext(folder: Path, n: int = 120, seed: int = 0) -> tuple[Path, Path]:
    """English number words and their French ones, word for word, 1-4 words a line."""
    rng = np.random.default_rng(seed)
    rows = [rng.integers(0, 6, rng.integers(1, 5)) for _ in range(n)]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.en").write_text("".join(" ".join(ENGLISH[i] for i in r) + "\n" for r in rows))
    (folder / "train.fr").write_text("".join(" ".join(FRENCH[i] for i in r) + "\n" for r in rows))
    return folder / "train.en", folder / "train.fr"


def trained(tmp_path: Path, updates: int = 6, **changes: object) -> Path:
    source, target = toy_bitext(tmp_path / "corpus")
    out = tmp_path / ("r2l" if changes.get("right_to_left") else "model")
    hp = preset("cpu", **{**TINY.to_dict(), **changes})
    train(source, target, out, hp, torch.device("cpu"), TrainingLimits(max_updates=updates, valid_every=3))
    return out


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def gru(x: np.ndarray, h: np.ndarray, w_ih: np.ndarray, w_hh: np.ndarray, b_ih: np.ndarray, b_hh: np.ndarray):
    """One GRU step, written out: r and z gates, the candidate, the interpolation."""
    gi, gh = w_ih @ x + b_ih, w_hh @ h + b_hh
    n = len(h)
    r, z = sigmoid(gi[:n] + gh[:n]), sigmoid(gi[n : 2 * n] + gh[n : 2 * n])
    candidate = np.tanh(gi[2 * n :] + r * gh[2 * n :])
    return (1 - z) * candidate + z * h


def by_hand(model: AttentionEncoderDecoder, source: list[int], target: list[int]) -> float:
    """log p(target | source) from the module docstring's equations, one sentence, in float64."""
    p = {name: value.detach().double().numpy() for name, value in model.state_dict().items()}
    x = [p["source_embedding.weight"][i] for i in source]
    forward, backward = [], []
    h = np.zeros(model.hp.hidden)
    for e in x:
        h = gru(e, h, *(p[f"encoder.{k}_l0"] for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")))
        forward.append(h)
    h = np.zeros(model.hp.hidden)
    for e in reversed(x):
        h = gru(e, h, *(p[f"encoder.{k}_l0_reverse"] for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")))
        backward.insert(0, h)
    annotations = [np.concatenate([f, b]) for f, b in zip(forward, backward)]
    s = np.tanh(p["init.weight"] @ backward[0] + p["init.bias"])
    previous = np.zeros(model.hp.embedding)
    total = 0.0
    for word in [*target, EOS_ID]:
        energies = [
            p["attention_score.weight"][0]
            @ np.tanh(p["attention_query.weight"] @ s + p["attention_key.weight"] @ a + p["attention_key.bias"])
            for a in annotations
        ]
        alpha = np.exp(np.array(energies) - max(energies))
        alpha /= alpha.sum()
        context = sum(w * a for w, a in zip(alpha, annotations))
        s = gru(
            np.concatenate([previous, context]),
            s,
            *(p[f"decoder.{k}"] for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")),
        )
        pre = p["deep_output.weight"] @ np.concatenate([s, previous, context]) + p["deep_output.bias"]
        t = pre.reshape(-1, 2).max(axis=1)
        logits = p["output.weight"] @ t + p["output.bias"]
        total += logits[word] - np.log(np.exp(logits - logits.max()).sum()) - logits.max()
        previous = p["target_embedding.weight"][word]
    return float(total)


def test_a_batch_of_padded_pairs_scores_exactly_the_equations_by_hand():
    model = AttentionEncoderDecoder(TINY, 12)
    initialize(model, seed=3)
    with torch.no_grad():  # larger weights than the initialisation's, so the attention and gates matter
        for weight in model.parameters():
            weight.normal_(0.0, 0.5)
        model.target_embedding.weight[0].zero_()  # y_0's embedding: the padding row, zero as training keeps it
    model.eval()
    pairs = [([4, 5, 6], [7, 8]), ([9], [10, 11, 4, 5]), ([3, 4, 5, 6, 7], [])]
    src = torch.zeros(3, 5, dtype=torch.int64)
    tgt = torch.zeros(3, 4, dtype=torch.int64)
    for k, (s, t) in enumerate(pairs):
        src[k, : len(s)], tgt[k, : len(t)] = torch.tensor(s), torch.tensor(t, dtype=torch.int64)
    src_len = torch.tensor([len(s) for s, _ in pairs])
    tgt_len = torch.tensor([len(t) for _, t in pairs])
    with torch.no_grad():
        batched = model.log_probs(src, src_len, tgt, tgt_len).double().numpy()
    expected = [by_hand(model, s, t) for s, t in pairs]
    np.testing.assert_allclose(batched, expected, rtol=1e-5, atol=1e-5)


def test_the_scorer_gives_each_hypothesis_its_own_score_whatever_the_batch(tmp_path):
    model_dir = trained(tmp_path)
    hypotheses = [("un", "deux"), ("trois",), ("un", "deux"), (), ("six", "cinq", "quatre", "trois", "deux"), ("un",)]
    one_by_one = [SentenceScorer(model_dir, batch_size=1).score(["one", "two"], [h])[0] for h in hypotheses]
    together = SentenceScorer(model_dir, batch_size=2).score(["one", "two"], hypotheses)
    np.testing.assert_allclose(together, np.array(one_by_one), rtol=1e-5)
    # the prefix tree gives what the training's plain teacher-forced pass gives, hypothesis by hypothesis
    scorer = SentenceScorer(model_dir)
    src = torch.tensor([scorer.subwords.encode(["one two"])[0]])
    for k, h in enumerate(hypotheses):
        ids = scorer.subwords.encode([" ".join(h)])[0]
        with torch.no_grad():
            plain = scorer.model.log_probs(
                src,
                torch.tensor([src.shape[1]]),
                torch.tensor([ids], dtype=torch.int64).reshape(1, -1),
                torch.tensor([len(ids)]),
            )
        assert together[k, 0] == pytest.approx(float(plain[0]), rel=1e-5)
    assert together[0, 0] == together[2, 0]  # a repeated hypothesis, scored once
    subwords = Subwords(model_dir / "subwords.model")
    assert together[:, 1].tolist() == [len(subwords.encode([" ".join(h)])[0]) for h in hypotheses]
    assert np.all(together[:, 0] < 0)


def test_subwords_spell_every_word_back_even_one_never_seen(tmp_path):
    subwords = Subwords(trained(tmp_path, updates=1) / "subwords.model")
    for text in ["un deux trois", "quatre-vingt-dix ça œuvre", "Zürich ℵ 42"]:
        assert subwords.decode(subwords.encode([text])[0]) == text
        assert 2 not in subwords.encode([text])[0]  # never the unknown unit: bytes stand in for new characters


def test_a_right_to_left_model_trains_on_reversed_targets(tmp_path):
    source, target = toy_bitext(tmp_path / "corpus")
    subwords_dir = trained(tmp_path, updates=1)
    subwords = Subwords(subwords_dir / "subwords.model")
    lines_en, lines_fr = source.read_text().splitlines(), target.read_text().splitlines()
    left = EncodedBitext.encode(subwords, lines_en, lines_fr, right_to_left=False)
    right = EncodedBitext.encode(subwords, lines_en, lines_fr, right_to_left=True)
    for k in range(len(left)):
        a, b = (r.flat[r.offsets[k] : r.offsets[k + 1]].tolist() for r in (left.target, right.target))
        assert b == a[::-1]
    assert right.source.flat.tolist() == left.source.flat.tolist()


def test_resuming_a_stopped_training_continues_exactly_as_an_uninterrupted_one(tmp_path):
    source, target = toy_bitext(tmp_path / "corpus")
    limits = dict(valid_every=4, checkpoint_every=4)
    train(source, target, tmp_path / "whole", TINY, torch.device("cpu"), TrainingLimits(max_updates=12, **limits))
    train(source, target, tmp_path / "parts", TINY, torch.device("cpu"), TrainingLimits(max_updates=4, **limits))
    train(source, target, tmp_path / "parts", TINY, torch.device("cpu"), TrainingLimits(max_updates=12, **limits))
    whole, parts = load_checkpoint(tmp_path / "whole" / LAST), load_checkpoint(tmp_path / "parts" / LAST)
    assert whole["update"] == parts["update"] == 12
    for name, value in whole["model"].items():
        assert torch.equal(value, parts["model"][name]), name


def test_a_training_stopped_between_validations_validates_its_last_weights(tmp_path):
    """--max-time (or --max-updates) rarely falls on a validation: the updates since the last one are validated
    at the stop, so that model.pt is never older than the training when these weights are the best."""
    out = trained(tmp_path, updates=5)  # validations every 3 updates: at 3, and at the stop (5)
    rows = [line.split("\t") for line in (out / "log.tsv").read_text().splitlines()]
    assert [int(row[0]) for row in rows] == [3, 5]
    best = min(float(row[2]) for row in rows)
    assert load_checkpoint(out / MODEL)["valid_perplexity"] == pytest.approx(best, abs=1e-3)
    assert load_checkpoint(out / MODEL)["update"] == int(rows[[float(r[2]) for r in rows].index(best)][0])


def test_resuming_in_the_other_direction_is_refused(tmp_path):
    source, target = toy_bitext(tmp_path / "corpus")
    train(source, target, tmp_path / "m", TINY, torch.device("cpu"), TrainingLimits(max_updates=2))
    r2l = preset("cpu", **{**TINY.to_dict(), "right_to_left": True})
    with pytest.raises(PysmtError, match=r"right_to_left: False -> True.*--force"):
        train(source, target, tmp_path / "m", r2l, torch.device("cpu"), TrainingLimits(max_updates=4))


def test_validation_is_a_held_out_slice_and_long_pairs_are_left_out_of_training(tmp_path):
    subwords = Subwords(trained(tmp_path, updates=1) / "subwords.model")
    source, target = toy_bitext(tmp_path / "bigger", n=300)
    bitext = EncodedBitext.encode(subwords, source.read_text().splitlines(), target.read_text().splitlines(), False)
    train_index, valid_index = split(bitext, max_length=3, seed=1)
    assert len(valid_index) == 3 and not set(train_index) & set(valid_index)
    assert bitext.target.lengths()[train_index].max() <= 3 and bitext.source.lengths()[train_index].max() <= 3


def test_the_features_refuse_a_model_of_the_other_direction_or_kind(tmp_path):
    from pysmt.plugin import SystemConfig

    system = SystemConfig(path=tmp_path / "pysmt.toml", features=[])
    left = trained(tmp_path)
    with pytest.raises(PysmtError, match=r"feature SR0: .* holds a left-to-right model; use it as feature sentence$"):
        RightToLeftFeature.check_config("SR0", SentenceParameters(model=left, device="cpu"), system)
    (tmp_path / "other").mkdir()
    torch.save({"model_type": "pysmt-rnn", "hyperparameters": {}, "model": {}}, tmp_path / "other" / "model.pt")
    with pytest.raises(PysmtError, match=r"not a pysmt-sentence checkpoint \(it is a pysmt-rnn model\)"):
        SentenceFeature.check_config("S0", SentenceParameters(model=tmp_path / "other", device="cpu"), system)
    feature = SentenceFeature("S0", SentenceParameters(model=left, device="cpu"))
    from pysmt.plugin import Sentence

    scores = feature.score_translations(Sentence(("one",)), [("un",), ("deux", "trois")])
    assert scores.shape == (2, 2) and feature.default_weights() == [0.1, 0.15]


def test_the_prefix_tree_holds_each_prefix_once_parents_first():
    from rnn_feature.sentence.scoring import PrefixTree

    tree = PrefixTree([[5, 6], [5, 7], [], [8]])
    assert len(tree) == 5  # (), (5), (8), (5 6), (5 7): depth by depth
    assert tree.parent.tolist() == [-1, 0, 0, 1, 1] and tree.last.tolist() == [0, 5, 8, 6, 7]
    requests = [tuple(r) for r in tree.requests.tolist()]
    assert [[requests[j] for j in uses] for uses in tree.uses] == [
        [(0, 5), (1, 6), (3, EOS_ID)],
        [(0, 5), (1, 7), (4, EOS_ID)],
        [(0, EOS_ID)],
        [(0, 8), (2, EOS_ID)],
    ]
    assert len(requests) == 8  # (0, 5) asked once for both hypotheses that start with 5


@pytest.mark.slow
def test_the_commands_train_from_a_system_folder_and_translate_with_the_model_alone(tmp_path):
    from pysmt.testing import run_pysmt

    source, target = toy_bitext(tmp_path / "sys" / "corpus")
    (tmp_path / "sys" / "pysmt.toml").write_text(
        '[processing]\nsource-language = "en"\ntarget-language = "fr"\ntokenize = false\n\n'
        '[[feature]]\ntype = "word-penalty"\n'
    )
    model = tmp_path / "sys" / "sentence"
    trained_run = run_pysmt(
        "sentence", "train", "--system", tmp_path / "sys", "--out", model, "--max-updates", "2", "--threads", "1"
    )
    assert trained_run.returncode == 0, trained_run.stderr
    assert "best validation perplexity" in trained_run.stdout and (model / "model.pt").is_file()
    translated = run_pysmt(
        "sentence",
        "translate",
        "--model",
        model,
        "-c",
        tmp_path / "sys" / "pysmt.toml",
        "--max-length",
        "5",
        input="one two\nthree\n",
    )
    assert translated.returncode == 0, translated.stderr
    assert len(translated.stdout.splitlines()) == 2
    both = run_pysmt("sentence", "train", "--system", tmp_path / "sys", "--source", source, "--out", tmp_path / "x")
    assert both.returncode == 2 and "--system names the bitext" in both.stderr
    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "pysmt.toml").write_text('[[feature]]\ntype = "word-penalty"\n')
    bare = run_pysmt("sentence", "train", "--system", tmp_path / "bare", "--out", tmp_path / "y")
    assert bare.returncode == 1 and bare.stderr.strip().endswith(
        "no [processing] section to name its languages; use --source/--target"
    )


def test_translating_alone_gives_an_empty_line_for_an_empty_line_in_input_order(tmp_path):
    from rnn_feature.sentence.translation import greedy_translations

    model = trained(tmp_path, updates=1)
    translated = greedy_translations(model, ["one two", "", "three"], None, "cpu", max_length=4)
    assert len(translated) == 3 and translated[1] == ""


def test_the_encoded_bitext_reads_back_and_a_damaged_one_is_one_line(tmp_path):
    model = trained(tmp_path, updates=1)
    bitext = EncodedBitext.load(model / "bitext.npz")
    assert isinstance(bitext, EncodedBitext) and len(bitext) == 120
    (tmp_path / "bad.npz").write_bytes(b"not an archive")
    with pytest.raises(PysmtError, match="bad.npz"):
        EncodedBitext.load(tmp_path / "bad.npz")


def preferring(model: Path, word: str, nats: float) -> Path:
    """The model with ``nats`` added to the output bias of ``word``'s subword units: a barely trained model scores
    every translation alike, this one prefers translations with more of ``word``."""
    state = load_checkpoint(model / MODEL)
    for unit in Subwords(model / SUBWORDS).encode([word])[0]:
        state["model"]["output.bias"][unit] += nats
    save_checkpoint(model / MODEL, state)
    return model


@pytest.mark.slow  # two trainings and two decodes in their own processes: about a minute
def test_decode_re_ranks_by_both_directions_scores_as_computed_outside_the_decoder(tmp_path):
    """The real features through ``pysmt decode``: its 1-best is the argmax, over the search's distinct translations
    of the toy system, of search total + each direction's weighted scores, computed here by calling the features
    directly. Both models prefer the word y: "y y z", the search's second, overtakes "x y z"."""
    from pysmt.plugin import Sentence
    from pysmt.testing import run_pysmt, write_toy_system

    left, right = (preferring(trained(tmp_path, 1, right_to_left=r2l), "y", 5.0) for r2l in (False, True))
    features = [f"sentence model={left}", f"sentence-r2l model={right}"]
    listed = tmp_path / "nbest.txt"
    search = run_pysmt(
        "decode", "-c", write_toy_system(tmp_path / "system", features=features), "-q", "--rescore-size", "1",
        "--nbest", listed, "--nbest-size", "100", "--distinct", input="a b c\n",
    )  # fmt: skip
    assert search.returncode == 0, search.stderr
    entries = [line.split(" ||| ") for line in listed.read_text().splitlines()]
    hypotheses = [tuple(text.split()) for _, text, _, _ in entries]
    assert len(hypotheses) == len(set(hypotheses)) > 5
    source = Sentence(("a", "b", "c"))
    l2r = SentenceFeature("Sentence0", SentenceParameters(model=left, device="cpu")).score_translations(
        source, hypotheses
    )
    r2l = RightToLeftFeature("SentenceR2L0", SentenceParameters(model=right, device="cpu")).score_translations(
        source, hypotheses
    )
    # the n-best totals count the features of complete translations at their default weights (0.1 on log p, 0.15
    # a subword); what remains is the search's own total
    totals = np.array([float(total) for *_, total in entries]) - (l2r + r2l) @ [0.1, 0.15]
    weights = {"Sentence0": "0.5 0", "SentenceR2L0": "0.5 0"}
    rescored_totals = totals + 0.5 * (l2r[:, 0] + r2l[:, 0])
    best, second = np.sort(rescored_totals)[::-1][:2]
    assert best - second > 0.1, "the models must tell the translations apart for the test to mean anything"
    expected = " ".join(hypotheses[int(np.argmax(rescored_totals))])
    rescored = run_pysmt(
        "decode", "-c", write_toy_system(tmp_path / "weighted", features=features, weights=weights), "-q",
        input="a b c\n",
    )  # fmt: skip
    assert (rescored.returncode, rescored.stdout) == (0, expected + "\n"), rescored.stderr
    assert (" ".join(hypotheses[0]), expected) == ("x y z", "y y z")
