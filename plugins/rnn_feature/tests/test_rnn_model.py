"""The encoder-decoder against hand-written equations, the paper preset's size, scoring invariants."""

import numpy as np
import pytest
import torch

from rnn_feature.data import Ragged
from rnn_feature.hyperparameters import preset
from rnn_feature.model import EncoderDecoder
from rnn_feature.scoring import score_encoded

TINY = preset("default", hidden=3, embedding=2, maxout=2, output_rank=2, source_shortlist=7, target_shortlist=6)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def reference_log_prob(model, source, target):
    """log p(y|x) written out from the paper's equations with plain numpy, one step at a time."""
    P = {name: p.detach().double().numpy() for name, p in model.named_parameters()}
    H = model.hp.hidden
    W_r, W_z, W = np.split(P["encoder_input.weight"], 3)
    b_r, b_z, b = np.split(P["encoder_input.bias"], 3)
    U_r, U_z = np.split(P["encoder_gates.weight"], 2)
    U = P["encoder_candidate.weight"]
    h = np.zeros(H)
    for word in source:
        e = P["source_embedding.weight"][word]
        r = sigmoid(W_r @ e + b_r + U_r @ h)
        z = sigmoid(W_z @ e + b_z + U_z @ h)
        h_tilde = np.tanh(W @ e + b + U @ (r * h))
        h = z * h + (1 - z) * h_tilde
    c = np.tanh(P["summary.weight"] @ h)
    h = np.tanh(P["decoder_init.weight"] @ c)
    Wd_r, Wd_z, Wd = np.split(P["decoder_input.weight"], 3)
    bd_r, bd_z, bd = np.split(P["decoder_input.bias"], 3)
    Ud_r, Ud_z = np.split(P["decoder_gates.weight"], 2)
    Ud = P["decoder_candidate.weight"]
    C_r, C_z, C = np.split(P["decoder_context.weight"], 3)
    total, previous = 0.0, np.zeros(model.hp.embedding)  # e(y_0) = 0
    for word in list(target) + [0]:  # the words, then end-of-sequence (id 0)
        r = sigmoid(Wd_r @ previous + bd_r + Ud_r @ h + C_r @ c)
        z = sigmoid(Wd_z @ previous + bd_z + Ud_z @ h + C_z @ c)
        h_tilde = np.tanh(Wd @ previous + bd + r * (Ud @ h + C @ c))
        h = z * h + (1 - z) * h_tilde
        s_wide = (
            P["output_hidden.weight"] @ h
            + P["output_hidden.bias"]
            + P["output_previous.weight"] @ previous
            + P["output_context.weight"] @ c
        )
        s = np.maximum(s_wide[0::2], s_wide[1::2])  # maxout over consecutive pairs
        logits = P["output_vocabulary.weight"] @ (P["output_rank.weight"] @ s) + P["output_vocabulary.bias"]
        logits = logits - logits.max()
        total += logits[word] - np.log(np.exp(logits).sum())
        previous = P["target_embedding.weight"][word]
    return total


def randomized(model, scale=0.7, seed=0):
    """Bigger weights than the paper's init so every gate does something measurable."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=generator) * scale)
    return model


def encoded(pairs):
    return Ragged.from_lists([s for s, _ in pairs]), Ragged.from_lists([t for _, t in pairs])


def test_log_prob_equals_the_hand_written_equations():
    model = randomized(EncoderDecoder(TINY, 7, 6)).double()
    for source, target in [([2, 3, 4], [2, 5]), ([6], [3, 3, 4, 1]), ([1, 5], [2])]:
        src, tgt = encoded([(source, target)])
        ours = model.log_probs(*src.padded(np.array([0])), *tgt.padded(np.array([0])))
        assert ours.item() == pytest.approx(reference_log_prob(model, source, target), abs=1e-10)


@pytest.mark.slow  # the paper's sizes
def test_paper_preset_shapes_and_parameter_count():
    hp = preset("paper")
    model = EncoderDecoder(hp, 15000, 15000)
    H, E, M, R, V = 1000, 100, 500, 100, 15000
    assert model.encoder_gates.weight.shape == (2 * H, H) and model.decoder_context.weight.shape == (3 * H, H)
    assert model.output_hidden.weight.shape == (2 * M, H) and model.output_vocabulary.weight.shape == (V, R)
    expected = (
        2 * V * E  # embeddings
        + 2 * (3 * H * E + 3 * H)  # W, W' stacks with biases
        + 2 * (3 * H * H)  # U_r, U_z, U and U'_r, U'_z, U'
        + 2 * H * H  # V, V'
        + 3 * H * H  # C_r, C_z, C
        + 2 * M * H
        + 2 * M
        + 2 * M * E
        + 2 * M * H  # O_h (bias), O_y, O_c
        + M * R
        + R * V
        + V
    )  # G_r, G_l (bias)
    assert sum(p.numel() for p in model.parameters()) == expected == 18_272_000


def test_recurrent_matrices_start_orthogonal_and_the_rest_small():
    model = EncoderDecoder(preset("default", hidden=16, embedding=4, maxout=4, output_rank=3), 10, 10)
    U = model.decoder_gates.weight.detach().double()
    for block in (U[:16], U[16:], model.encoder_candidate.weight.detach().double()):
        assert torch.allclose(block @ block.T, torch.eye(16, dtype=torch.float64), atol=1e-5)
    assert abs(model.summary.weight.std().item() - 0.01) < 0.003


def test_score_is_the_sum_of_per_step_log_probabilities():
    model = randomized(EncoderDecoder(TINY, 7, 6), seed=1).double()
    source, target = [3, 2, 5], [4, 2, 2]
    src, tgt = encoded([(source, target)])
    total = model.log_probs(*src.padded(np.array([0])), *tgt.padded(np.array([0]))).item()
    c = model.encode(*src.padded(np.array([0])))
    h, context = model.decoder_start(c)
    steps, previous = [], torch.zeros(1, TINY.embedding, dtype=torch.float64)
    for word in target + [0]:
        h = model.decoder_step(h, model.decoder_input(previous), context)
        log_p = torch.log_softmax(model.output_logits(h, previous, context[3]), dim=-1)[0, word].item()
        assert log_p < 0
        steps.append(log_p)
        previous = model.target_embedding(torch.tensor([word]))
    assert total == pytest.approx(sum(steps), abs=1e-12)


def test_batched_scores_equal_one_at_a_time_scores():
    model = randomized(EncoderDecoder(TINY, 7, 6), seed=2)
    rng = np.random.default_rng(0)
    pairs = [
        (rng.integers(0, 7, rng.integers(1, 8)).tolist(), rng.integers(0, 6, rng.integers(1, 8)).tolist())
        for _ in range(40)
    ]
    batched = score_encoded(model, *encoded(pairs), batch_size=16)
    alone = np.array([score_encoded(model, *encoded([pair]))[0] for pair in pairs])
    assert np.allclose(batched, alone, rtol=1e-5, atol=1e-5)
    assert (batched < 0).all()


def test_probabilities_over_all_targets_sum_to_at_most_one():
    """All targets of length <= 2 over a 4-word shortlist: their probabilities sum to less than 1."""
    small = preset("default", hidden=3, embedding=2, maxout=2, output_rank=2, source_shortlist=4, target_shortlist=4)
    model = randomized(EncoderDecoder(small, 4, 4), scale=0.5, seed=3).double()
    targets = [[a] for a in range(1, 4)] + [[a, b] for a in range(1, 4) for b in range(1, 4)]
    scores = score_encoded(model, *encoded([([2, 3], t) for t in targets]))
    assert 0 < np.exp(scores).sum() < 1
