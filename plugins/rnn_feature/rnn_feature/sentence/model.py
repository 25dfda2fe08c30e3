"""The RNN Encoder-Decoder with attention (Bahdanau, Cho and Bengio 2014), over subword units.

Encoder: a bidirectional GRU over the source subwords' embeddings; the annotation ``h_j`` of position
``j`` is both directions' states side by side (``2 * hidden`` wide). Decoder, started at
``s_0 = tanh(W_init h_1^backward)`` with ``y_0``'s embedding zero (the padding row), at each step ``i``::

    e_ij = v^T tanh(W_a s_{i-1} + U_a h_j)          alpha_i = softmax_j(e_ij)   (padding masked)
    c_i  = sum_j alpha_ij h_j                       s_i = GRU([e(y_{i-1}); c_i], s_{i-1})
    t_i  = maxout(O_s s_i + O_y e(y_{i-1}) + O_c c_i)  (pairs)    p(y_i | ...) = softmax(W_o t_i)

The paper's deep output reads ``s_{i-1}``; reading ``s_i`` (as Nematus does) lets the output see the
word just attended to. The target ends with end-of-sentence, whose probability is part of every
score, so log p(e | f) is a proper sentence probability. The source is encoded once and its
annotations shared by any number of hypotheses (:meth:`Encoded.select`;
:func:`rnn_feature.sentence.scoring.tree_log_probs` walks a sentence's hypotheses as a prefix tree).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from rnn_feature.sentence.hyperparameters import SentenceHyperparameters
from rnn_feature.sentence.subwords import EOS_ID, PAD_ID


class Encoded:
    """A batch of encoded sources: annotations ``(batch, length, 2 * hidden)``, their attention keys
    ``U_a h``, the padding mask and the decoder's first state."""

    def __init__(self, annotations: torch.Tensor, keys: torch.Tensor, mask: torch.Tensor, start: torch.Tensor) -> None:
        self.annotations, self.keys, self.mask, self.start = annotations, keys, mask, start

    def select(self, rows: torch.Tensor) -> Encoded:
        """The sources ``rows`` (repeats allowed: one row per hypothesis of a sentence)."""
        return Encoded(self.annotations[rows], self.keys[rows], self.mask[rows], self.start[rows])


class AttentionEncoderDecoder(nn.Module):
    """Scores ``log p(target | source)`` of whole sentences, and translates greedily."""

    def __init__(self, hp: SentenceHyperparameters, vocabulary: int) -> None:
        super().__init__()
        self.hp = hp
        width = 2 * hp.hidden
        self.source_embedding = nn.Embedding(vocabulary, hp.embedding, padding_idx=PAD_ID)
        self.target_embedding = nn.Embedding(vocabulary, hp.embedding, padding_idx=PAD_ID)
        self.encoder = nn.GRU(hp.embedding, hp.hidden, batch_first=True, bidirectional=True)
        self.init = nn.Linear(hp.hidden, hp.hidden)
        self.attention_query = nn.Linear(hp.hidden, hp.attention, bias=False)
        self.attention_key = nn.Linear(width, hp.attention)
        self.attention_score = nn.Linear(hp.attention, 1, bias=False)
        self.decoder = nn.GRUCell(hp.embedding + width, hp.hidden)
        self.deep_output = nn.Linear(hp.hidden + hp.embedding + width, 2 * hp.maxout)
        self.output = nn.Linear(hp.maxout, vocabulary)
        self.dropout = nn.Dropout(hp.dropout)

    def encode(self, source: torch.Tensor, lengths: torch.Tensor) -> Encoded:
        """Sources ``(batch, length)`` of ``lengths`` subwords (each at least 1), encoded."""
        packed = pack_padded_sequence(
            self.source_embedding(source), lengths.cpu(), batch_first=True, enforce_sorted=False
        )
        annotations, _ = pad_packed_sequence(self.encoder(packed)[0], batch_first=True, total_length=source.shape[1])
        backward_first = annotations[:, 0, self.hp.hidden :]
        mask = torch.arange(source.shape[1], device=source.device)[None, :] < lengths[:, None]
        return Encoded(annotations, self.attention_key(annotations), mask, torch.tanh(self.init(backward_first)))

    def step(self, encoded: Encoded, state: torch.Tensor, previous: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """One decoder step from ``state`` after the word embeddings ``previous``: (the new state, ``t_i``)."""
        energies = self.attention_score(torch.tanh(self.attention_query(state)[:, None, :] + encoded.keys))[..., 0]
        weights = torch.softmax(energies.masked_fill(~encoded.mask, float("-inf")), dim=1)
        context = torch.bmm(weights[:, None, :], encoded.annotations)[:, 0, :]
        state = self.decoder(torch.cat([previous, context], dim=1), state)
        pre = self.deep_output(torch.cat([state, previous, context], dim=1))
        return state, pre.view(pre.shape[0], -1, 2).max(dim=2).values

    def target_log_probs(self, encoded: Encoded, target: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """``log p(target | source)`` per sentence: targets ``(batch, length)`` of ``lengths`` subwords, each
        followed by end-of-sentence (scored too); ``encoded`` has one row per target."""
        batch, width = target.shape
        gold = torch.cat([target, torch.full((batch, 1), PAD_ID, dtype=target.dtype, device=target.device)], dim=1)
        gold.scatter_(1, lengths[:, None], EOS_ID)
        start = torch.full((batch, 1), PAD_ID, dtype=target.dtype, device=target.device)
        previous = self.target_embedding(torch.cat([start, target], dim=1))
        state, outputs = encoded.start, []
        for i in range(width + 1):
            state, t = self.step(encoded, state, previous[:, i])
            outputs.append(t)
        logits = self.output(self.dropout(torch.stack(outputs, dim=1)))
        token = torch.log_softmax(logits, dim=2).gather(2, gold[:, :, None])[..., 0]
        real = torch.arange(width + 1, device=target.device)[None, :] <= lengths[:, None]
        return (token * real).sum(dim=1)

    def log_probs(
        self, source: torch.Tensor, source_lengths: torch.Tensor, target: torch.Tensor, target_lengths: torch.Tensor
    ) -> torch.Tensor:
        """``log p(target | source)`` of sentence pairs (one source per target)."""
        return self.target_log_probs(self.encode(source, source_lengths), target, target_lengths)

    @torch.no_grad()
    def greedy(self, source: torch.Tensor, lengths: torch.Tensor, max_length: int) -> list[list[int]]:
        """The most probable subword at each step, until end-of-sentence or ``max_length`` subwords."""
        encoded = self.encode(source, lengths)
        state = encoded.start
        previous = torch.zeros(source.shape[0], self.hp.embedding, device=source.device)
        out: list[list[int]] = [[] for _ in range(source.shape[0])]
        done = torch.zeros(source.shape[0], dtype=torch.bool, device=source.device)
        for _ in range(max_length):
            state, t = self.step(encoded, state, previous)
            word = self.output(t).argmax(dim=1)
            for k in torch.nonzero(~done & (word != EOS_ID))[:, 0].tolist():
                out[k].append(int(word[k]))
            done |= word == EOS_ID
            if bool(done.all()):
                break
            previous = self.target_embedding(word)
        return out


def initialize(model: AttentionEncoderDecoder, seed: int) -> None:
    """Bahdanau et al.'s initialisation: recurrent matrices orthogonal, others N(0, 0.01^2), biases 0."""
    generator = torch.Generator().manual_seed(seed)
    for name, weight in model.named_parameters():
        with torch.no_grad():
            if "bias" in name:
                weight.zero_()
            elif "weight_hh" in name:
                for block in weight.view(3, weight.shape[1], weight.shape[1]):
                    block.copy_(torch.linalg.qr(torch.randn(block.shape, generator=generator))[0])
            else:
                weight.normal_(0.0, 0.01, generator=generator)
    for embedding in (model.source_embedding, model.target_embedding):
        with torch.no_grad():
            embedding.weight[PAD_ID].zero_()
