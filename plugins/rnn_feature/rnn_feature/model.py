"""The RNN Encoder-Decoder of Cho et al. (2014), appendix A, equation for equation.

Encoder (``h_0 = 0``), for each source word ``x_t`` with rank-``embedding`` embedding ``e(x_t)``::

    r   = sigmoid(W_r e(x_t) + U_r h)          z = sigmoid(W_z e(x_t) + U_z h)
    h~  = tanh(W e(x_t) + U (r * h))           h = z * h + (1 - z) * h~
    c   = tanh(V h_N)                          (the phrase's summary)

Decoder, started at ``h'_0 = tanh(V' c)`` with ``e(y_0) = 0`` and conditioned on ``c`` in every gate::

    r'  = sigmoid(W'_r e(y_{t-1}) + U'_r h' + C_r c)
    z'  = sigmoid(W'_z e(y_{t-1}) + U'_z h' + C_z c)
    h~' = tanh(W' e(y_{t-1}) + r' * (U' h' + C c))       h' = z' * h' + (1 - z') * h~'

Deep output: ``s' = O_h h'_t + O_y e(y_{t-1}) + O_c c`` (``2 * maxout`` wide), maxout over pairs,
then a softmax through the rank-``output_rank`` factorization ``G_l G_r``. The input projections
carry biases (the paper omits them from its notation). ``W``-type matrices are stacked per gate
group so each step is one matrix product per group.

Training may normalize the softmax over a sample of the shortlist instead of all of it
(:class:`SampledWords`: Jean et al.'s 2015 importance sampling): the softmax is most of a forward
pass's arithmetic. Scoring, sampling and validation always use the exact softmax. The embeddings
give sparse gradients (only the rows a minibatch used), which :mod:`rnn_feature.adadelta` updates.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional

from rnn_feature.hyperparameters import Hyperparameters
from rnn_feature.vocabulary import EOS_ID, UNK_ID


@dataclass(frozen=True)
class SampledWords:
    """The target words a training minibatch normalizes its softmax over, and their importance weights.

    ``words`` holds first the minibatch's own target words (end-of-sequence included), sorted and
    each once (``gold`` of them), then words drawn uniformly without replacement from the rest of
    the shortlist. Each drawn word stands for ``(rest of the shortlist) / (drawn)`` words, so its
    logit gets ``log_weight`` added: the sampled sum then estimates the partition function.
    """

    words: torch.Tensor  # int64, (gold + drawn,)
    gold: int
    log_weight: float

    def to(self, device: torch.device) -> SampledWords:
        return SampledWords(self.words.to(device), self.gold, self.log_weight)


class EncoderDecoder(nn.Module):
    """Scores ``log p(target phrase | source phrase)`` and samples target phrases."""

    def __init__(self, hp: Hyperparameters, source_size: int, target_size: int) -> None:
        super().__init__()
        self.hp = hp
        H, E, M, R = hp.hidden, hp.embedding, hp.maxout, hp.output_rank
        self.source_embedding = nn.Embedding(source_size, E, sparse=True)  # e(x)
        self.target_embedding = nn.Embedding(target_size, E, sparse=True)  # e(y)
        self.encoder_input = nn.Linear(E, 3 * H)  # [W_r; W_z; W]
        self.encoder_gates = nn.Linear(H, 2 * H, bias=False)  # [U_r; U_z]
        self.encoder_candidate = nn.Linear(H, H, bias=False)  # U
        self.summary = nn.Linear(H, H, bias=False)  # V
        self.decoder_init = nn.Linear(H, H, bias=False)  # V'
        self.decoder_input = nn.Linear(E, 3 * H)  # [W'_r; W'_z; W']
        self.decoder_gates = nn.Linear(H, 2 * H, bias=False)  # [U'_r; U'_z]
        self.decoder_candidate = nn.Linear(H, H, bias=False)  # U'
        self.decoder_context = nn.Linear(H, 3 * H, bias=False)  # [C_r; C_z; C]
        self.output_hidden = nn.Linear(H, 2 * M)  # O_h
        self.output_previous = nn.Linear(E, 2 * M, bias=False)  # O_y
        self.output_context = nn.Linear(H, 2 * M, bias=False)  # O_c
        self.output_rank = nn.Linear(M, R, bias=False)  # G_r
        self.output_vocabulary = nn.Linear(R, target_size)  # G_l
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Gaussian N(0, 0.01^2) weights, orthogonal recurrent matrices (each square block), zero biases."""
        generator = torch.Generator().manual_seed(self.hp.seed)
        recurrent = {
            self.encoder_gates.weight,
            self.encoder_candidate.weight,
            self.decoder_gates.weight,
            self.decoder_candidate.weight,
        }
        with torch.no_grad():
            for name, parameter in self.named_parameters():
                if name.endswith("bias"):
                    parameter.zero_()
                elif any(parameter is r for r in recurrent):
                    H = self.hp.hidden
                    for block in range(parameter.shape[0] // H):
                        gaussian = torch.randn(H, H, generator=generator, dtype=torch.float64)
                        left, _, _ = torch.linalg.svd(gaussian)  # left singular vectors: orthogonal
                        parameter[block * H : (block + 1) * H] = left.to(parameter.dtype)
                else:
                    parameter.copy_(torch.randn(parameter.shape, generator=generator) * self.hp.init_std)

    # -- encoder -------------------------------------------------------------------------------

    def encode(self, source: torch.Tensor, source_lengths: torch.Tensor) -> torch.Tensor:
        """Summaries ``c`` (batch x hidden) of padded source phrases (batch x time)."""
        inputs = self.encoder_input(self.source_embedding(source))  # all steps at once
        h = inputs.new_zeros(source.shape[0], self.hp.hidden)
        for t in range(source.shape[1]):
            x_r, x_z, x_h = inputs[:, t].chunk(3, dim=1)
            g_r, g_z = self.encoder_gates(h).chunk(2, dim=1)
            r, z = torch.sigmoid(x_r + g_r), torch.sigmoid(x_z + g_z)
            candidate = torch.tanh(x_h + self.encoder_candidate(r * h))
            updated = z * h + (1 - z) * candidate
            h = torch.where((t < source_lengths).unsqueeze(1), updated, h)  # padding leaves h alone
        return torch.tanh(self.summary(h))

    # -- decoder -------------------------------------------------------------------------------

    def decoder_start(self, c: torch.Tensor) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
        """``h'_0`` and the context terms (``C_r c, C_z c, C c``, ``O_c c``) that every step reuses."""
        c_r, c_z, c_h = self.decoder_context(c).chunk(3, dim=1)
        return torch.tanh(self.decoder_init(c)), (c_r, c_z, c_h, self.output_context(c))

    def decoder_step(self, h: torch.Tensor, previous: torch.Tensor, context: tuple[torch.Tensor, ...]) -> torch.Tensor:
        """One GRU step from ``h'_{t-1}`` given the projected previous word ``W' e(y_{t-1})`` (stacked)."""
        c_r, c_z, c_h, _ = context
        x_r, x_z, x_h = previous.chunk(3, dim=1)
        g_r, g_z = self.decoder_gates(h).chunk(2, dim=1)
        r, z = torch.sigmoid(x_r + g_r + c_r), torch.sigmoid(x_z + g_z + c_z)
        candidate = torch.tanh(x_h + r * (self.decoder_candidate(h) + c_h))
        return z * h + (1 - z) * candidate

    def output_features(
        self, h: torch.Tensor, previous_embedding: torch.Tensor, output_context: torch.Tensor
    ) -> torch.Tensor:
        """The softmax's input ``G_r s``: deep output, maxout over pairs, the factorization's first half."""
        s = self.output_hidden(h) + self.output_previous(previous_embedding) + output_context
        return self.output_rank(s.unflatten(-1, (self.hp.maxout, 2)).amax(dim=-1))

    def output_logits(
        self, h: torch.Tensor, previous_embedding: torch.Tensor, output_context: torch.Tensor
    ) -> torch.Tensor:
        """Unnormalized scores over the target shortlist: deep output, maxout, factorized softmax."""
        return self.output_vocabulary(self.output_features(h, previous_embedding, output_context))

    def token_log_probs(self, features: torch.Tensor, gold: torch.Tensor, sampled: SampledWords | None) -> torch.Tensor:
        """``log p(gold word)`` for each row of ``features`` (``G_r s``): exact, or over ``sampled`` words."""
        if sampled is None:
            logits = self.output_vocabulary(features)
        else:
            rows = functional.embedding(sampled.words, self.output_vocabulary.weight, sparse=True)
            weights = torch.full((len(sampled.words),), sampled.log_weight, device=features.device)
            weights[: sampled.gold] = 0.0
            logits = features @ rows.T + self.output_vocabulary.bias.index_select(0, sampled.words) + weights
            gold = torch.searchsorted(sampled.words[: sampled.gold], gold)
        # fused: faster than logsumexp
        return torch.log_softmax(logits, dim=-1).gather(1, gold.unsqueeze(1)).squeeze(1)

    def log_probs(
        self,
        source: torch.Tensor,
        source_lengths: torch.Tensor,
        target: torch.Tensor,
        target_lengths: torch.Tensor,
        sampled: SampledWords | None = None,
    ) -> torch.Tensor:
        """``log p(y | x)`` per pair: the sum over the target words and the end-of-sequence symbol.

        With ``sampled`` (training only) the softmax is normalized over those words: an estimate.
        """
        c = self.encode(source, source_lengths)
        h, context = self.decoder_start(c)
        batch, steps = target.shape[0], target.shape[1] + 1
        embedded = self.target_embedding(target)
        previous = torch.cat([embedded.new_zeros(batch, 1, embedded.shape[2]), embedded], dim=1)  # e(y_0) = 0
        projected = self.decoder_input(previous)
        states = []
        for t in range(steps):
            h = self.decoder_step(h, projected[:, t], context)
            states.append(h)
        hidden = torch.stack(states, dim=1)
        positions = torch.arange(steps, device=target.device).unsqueeze(0)
        valid = positions <= target_lengths.unsqueeze(1)  # the words and end-of-sequence, not the padding
        gold = torch.cat([target, target.new_zeros(batch, 1)], dim=1)
        gold = torch.where(positions == target_lengths.unsqueeze(1), torch.full_like(gold, EOS_ID), gold)[valid]
        # the softmax only where there is a word to predict: padding costs no output layer
        features = self.output_features(
            hidden[valid], previous[valid], context[3].unsqueeze(1).expand(-1, steps, -1)[valid]
        )
        token_log_probs = self.token_log_probs(features, gold, sampled)
        per_step = token_log_probs.new_zeros(batch, steps)
        per_step[valid] = token_log_probs
        return per_step.sum(dim=1)

    # -- sampling ------------------------------------------------------------------------------

    def sample(
        self, source: torch.Tensor, source_lengths: torch.Tensor, max_length: int, generator: torch.Generator
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Target phrases drawn from ``p(y | x)``, one per source row, word by word (ancestral sampling).

        ``[UNK]`` is never drawn (it is not a phrase anyone could use), so each step samples from
        the shortlist's words and end-of-sequence, renormalized. Returns the padded word ids
        (batch x ``max_length``) and each sample's length, or -1 for a sample that reached
        ``max_length`` words without ending. Score samples with :meth:`log_probs`.
        """
        c = self.encode(source, source_lengths)
        h, context = self.decoder_start(c)
        batch = source.shape[0]
        words = source.new_zeros(batch, max_length)
        lengths = source.new_full((batch,), -1)
        previous = c.new_zeros(batch, self.hp.embedding)
        for t in range(max_length + 1):
            h = self.decoder_step(h, self.decoder_input(previous), context)
            logits = self.output_logits(h, previous, context[3])
            logits[:, UNK_ID] = -torch.inf
            drawn = torch.multinomial(torch.softmax(logits.float(), dim=-1), 1, generator=generator).squeeze(1)
            ended = (drawn == EOS_ID) & (lengths < 0)
            lengths = torch.where(ended, torch.full_like(lengths, t), lengths)
            if t == max_length or bool((lengths >= 0).all()):
                break
            words[:, t] = torch.where(lengths < 0, drawn, words[:, t])
            previous = self.target_embedding(drawn)
        return words, lengths
