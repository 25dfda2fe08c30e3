"""The training's parts: epochs of length-bucketed minibatches, sparse Adadelta with clipping, the sampled softmax."""

import math

import numpy as np
import pytest
import torch
from torch import nn

from rnn_feature.adadelta import SparseAdadelta
from rnn_feature.batches import EpochBatches
from rnn_feature.model import EncoderDecoder
from rnn_feature.training import sample_words
from rnn_feature.vocabulary import EOS_ID
from rnn_testing import TINY


def lengths(n, seed):
    rng = np.random.default_rng(seed)
    return rng.integers(1, 8, n), rng.integers(1, 8, n)


def test_every_pair_once_an_epoch_and_the_order_changes_between_epochs():
    index = np.arange(3, 1003)  # pair numbers need not start at 0
    source, target = lengths(1010, 0)
    batches = EpochBatches(index, source, target, batch_size=16, sort_batches=4, seed=7)
    assert batches.per_epoch == 63  # ceil(1000 / 16)
    epochs = [np.concatenate([batches.batch(e * 63 + k) for k in range(63)]) for e in range(2)]
    for seen in epochs:
        assert np.array_equal(np.sort(seen), index)
    assert not np.array_equal(epochs[0], epochs[1])
    assert batches.epochs(126) == 2.0


def test_minibatches_depend_on_the_seed_and_update_alone():
    source, target = lengths(500, 1)
    a = EpochBatches(np.arange(500), source, target, 16, 4, seed=3)
    b = EpochBatches(np.arange(500), source, target, 16, 4, seed=3)
    for update in (40, 0, 33, 70, 1):  # any order, across epochs: a resumed run draws the same
        assert np.array_equal(a.batch(update), b.batch(update))
    c = EpochBatches(np.arange(500), source, target, 16, 4, seed=4)
    assert not np.array_equal(a.batch(0), c.batch(0))


def test_minibatches_are_length_bucketed():
    source, target = lengths(2000, 2)
    batches = EpochBatches(np.arange(2000), source, target, 20, sort_batches=10, seed=0)
    for k in range(batches.per_epoch):
        batch = batches.batch(k)
        # 200 pairs of 7 target lengths: a minibatch spans at most two neighbouring lengths
        assert target[batch].max() - target[batch].min() <= 1


def adadelta_pair(sparse):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Embedding(6, 3, sparse=sparse), nn.Linear(3, 2))
    return model


@pytest.mark.parametrize("clip", [None, 1e6])
def test_without_clipping_dense_gradients_get_torch_adadelta(clip):
    mine, theirs = adadelta_pair(False), adadelta_pair(False)
    ours = SparseAdadelta(mine.parameters(), rho=0.95, eps=1e-6, clip_norm=clip)
    reference = torch.optim.Adadelta(theirs.parameters(), lr=1.0, rho=0.95, eps=1e-6)
    words = torch.tensor([[0, 1, 2, 3, 4, 5]])
    for _ in range(4):
        for model, optimizer in ((mine, ours), (theirs, reference)):
            optimizer.zero_grad()
            model(words).pow(2).sum().backward()
            optimizer.step()
    for a, b in zip(mine.parameters(), theirs.parameters()):
        assert torch.allclose(a, b, rtol=0, atol=1e-7)


def test_sparse_rows_match_dense_when_every_row_is_used_and_stay_when_unused():
    dense, sparse = adadelta_pair(False), adadelta_pair(True)
    optimizers = [SparseAdadelta(m.parameters(), rho=0.95, eps=1e-6) for m in (dense, sparse)]
    all_words, some_words = torch.tensor([[0, 1, 2, 3, 4, 5]]), torch.tensor([[1, 3]])
    for words in (all_words, all_words):
        for model, optimizer in zip((dense, sparse), optimizers):
            optimizer.zero_grad()
            model(words).pow(2).sum().backward()
            optimizer.step()
    for a, b in zip(dense.parameters(), sparse.parameters()):
        assert torch.allclose(a, b, rtol=0, atol=1e-7)
    before = sparse[0].weight.detach().clone()
    state_before = optimizers[1].state[sparse[0].weight]["square_avg"].clone()
    optimizers[1].zero_grad()
    sparse(some_words).pow(2).sum().backward()
    optimizers[1].step()
    after, state_after = sparse[0].weight.detach(), optimizers[1].state[sparse[0].weight]["square_avg"]
    unused = [0, 2, 4, 5]
    assert torch.equal(after[unused], before[unused]) and torch.equal(state_after[unused], state_before[unused])
    assert not torch.equal(after[[1, 3]], before[[1, 3]])


def test_clipping_scales_the_global_norm_of_dense_and_sparse_gradients():
    model = adadelta_pair(True)
    optimizer = SparseAdadelta(model.parameters(), clip_norm=1.0)
    model(torch.tensor([[1, 1, 2]])).sum().mul(100).backward()
    grads = [p.grad.coalesce() if p.grad.is_sparse else p.grad for p in model.parameters()]
    optimizer.clip(grads)
    norm = math.sqrt(sum(float((g.values() if g.is_sparse else g).pow(2).sum()) for g in grads))
    assert norm == pytest.approx(1.0, rel=1e-5)
    small = [torch.tensor([0.3, 0.4])]
    optimizer.clip(small)  # norm 0.5: below the cut, untouched
    assert torch.equal(small[0], torch.tensor([0.3, 0.4]))


def test_sampled_words_hold_the_minibatch_words_then_draws_from_the_rest():
    target = torch.tensor([[5, 7, 0], [9, 0, 0]])  # lengths 2 and 1: the zeros are padding
    drawn = sample_words(target, torch.tensor([2, 1]), 20, 4, np.random.default_rng(0))
    words = drawn.words.tolist()
    assert drawn.gold == 4 and words[:4] == [EOS_ID, 5, 7, 9]
    assert len(set(words)) == 8 and not set(words[4:]) & {EOS_ID, 5, 7, 9}
    assert drawn.log_weight == pytest.approx(math.log(16 / 4))
    assert sample_words(target, torch.tensor([2, 1]), 20, 0, np.random.default_rng(0)) is None


def test_sampling_the_whole_rest_of_the_shortlist_is_the_exact_softmax():
    model = EncoderDecoder(TINY, 30, 30)
    source, source_lengths = torch.tensor([[3, 4, 5], [6, 7, 0]]), torch.tensor([3, 2])
    target, target_lengths = torch.tensor([[8, 9], [10, 0]]), torch.tensor([2, 1])
    every = sample_words(target, target_lengths, 30, 1000, np.random.default_rng(1))
    assert every.log_weight == 0.0 and sorted(every.words.tolist()) == list(range(30))
    exact = model.log_probs(source, source_lengths, target, target_lengths)
    sampled = model.log_probs(source, source_lengths, target, target_lengths, every)
    assert torch.allclose(exact, sampled, atol=1e-5)
    few = sample_words(target, target_lengths, 30, 3, np.random.default_rng(1))
    estimate = model.log_probs(source, source_lengths, target, target_lengths, few)
    # a fresh model's logits are nearly equal: each drawn word standing for 26/3 words gives Z back,
    # where 8 unweighted words would give log-probabilities about 3 * log(30 / 8) too high
    assert torch.allclose(exact, estimate, atol=1e-3)
