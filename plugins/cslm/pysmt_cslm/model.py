"""The feed-forward continuous-space language model (Schwenk 2007; Cho et al. 2014, section 4.1.2).

For an n-gram ``w_{t-6} .. w_{t-1} w_t`` (order 7)::

    x   = [e(w_{t-6}); ...; e(w_{t-1})]            six embeddings, concatenated (6 x embedding)
    h1  = relu(W1 x + b1)                           (hidden1)
    h2  = relu(W2 h1 + b2)                          (hidden2)
    p(w_t | context) = softmax(W3 h2 + b3)[w_t]     over the shortlist: </s>, [UNK] and the words

Context positions before the sentence start hold ``<s>`` (input id 0). Weights and embeddings are
initialized uniformly in ``[-0.01, 0.01]`` (the paper), biases at 0. Training adds
``alpha * (log Z)^2`` to the negative log-likelihood (Devlin et al. 2014), which pushes the
partition function ``Z = sum exp(W3 h2 + b3)`` towards 1, so that a logit alone is (almost) a
normalized log-probability: what the decoder's self-normalized scoring relies on.
"""

from __future__ import annotations

import torch
from torch import nn

from pysmt_cslm.hyperparameters import Hyperparameters


class Cslm(nn.Module):
    """``log p(word | six previous words)`` over a shortlist."""

    def __init__(self, hp: Hyperparameters, vocab_size: int) -> None:
        super().__init__()
        self.hp = hp
        self.embedding = nn.Embedding(vocab_size, hp.embedding)
        self.hidden1 = nn.Linear(hp.context * hp.embedding, hp.hidden1)
        self.hidden2 = nn.Linear(hp.hidden1, hp.hidden2)
        self.output = nn.Linear(hp.hidden2, vocab_size)
        self.reset_parameters()

    @property
    def vocab_size(self) -> int:
        return self.embedding.num_embeddings

    def reset_parameters(self) -> None:
        generator = torch.Generator().manual_seed(self.hp.seed)
        with torch.no_grad():
            for name, parameter in self.named_parameters():
                if name.endswith("bias"):
                    parameter.zero_()
                else:
                    r = self.hp.init_range
                    parameter.copy_(torch.rand(parameter.shape, generator=generator) * (2 * r) - r)

    def forward(self, contexts: torch.Tensor) -> torch.Tensor:
        """Logits (batch x vocabulary) for contexts (batch x 6 input ids)."""
        x = self.embedding(contexts).flatten(1)
        return self.output(torch.relu(self.hidden2(torch.relu(self.hidden1(x)))))

    def loss(self, contexts: torch.Tensor, words: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(training loss: mean NLL + alpha * mean (log Z)^2, mean NLL) of a minibatch."""
        logits = self(contexts)
        log_z = torch.logsumexp(logits, dim=1)
        nll = (log_z - logits.gather(1, words[:, None]).squeeze(1)).mean()
        return nll + self.hp.self_normalization * (log_z**2).mean(), nll
