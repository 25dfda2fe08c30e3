"""Fast scoring of n-grams: what the decoder feature and ``pysmt cslm perplexity`` both go through.

* The first layer is precomputed per (word, position), as Devlin et al. (2014) do: ``W1 x`` is the
  sum of six vectors ``P_p[w_p] = W1_p e(w_p)`` (position 0's table also holds ``b1``), so a
  context costs six row lookups instead of a 3072-wide product.
* Hidden layers are computed once per *unique* context of a request.
* ``normalization = "self"``: the log-probability is the logit alone (``W3[w] . h2 + b3[w]``),
  computed only for the requested words; training's ``alpha (log Z)^2`` term keeps ``log Z``
  near 0. ``"exact"``: the logit minus ``log Z``, the log-sum-exp of the context's full output
  layer (the one product whose cost grows with the shortlist; the decoder feature caches it per
  context).

**The numbers do not depend on how requests are batched.** CPU matrix products round differently
for different row counts (one row versus sixteen), so every product here has a fixed shape:
contexts go through the layers in blocks of :data:`CONTEXT_BLOCK` rows and requested words in
blocks of :data:`PAIR_BLOCK`, padded with dummy rows. A context's hidden layer, and so an n-gram's
score, is then the same bit for bit whatever else is in its batch: the feature's scores do not
depend on its buffer size, on the cache, or on the order of requests, and the perplexity command
computes exactly what the decoder adds up.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import torch
from torch.nn import functional as F

from pysmt_cslm.data import EncodedText
from pysmt_cslm.model import Cslm

Normalization = Literal["exact", "self"]
NORMALIZATIONS = ("exact", "self")
#: Rows of every hidden-layer product (contexts) and of every output product (requested words).
#: Small, because the decoder asks often for little (cube pruning: ~20 requests a call); a large
#: batch is many blocks.
CONTEXT_BLOCK, PAIR_BLOCK = 16, 64


def padded(array: np.ndarray, block: int) -> np.ndarray:
    """``array`` with zero rows appended up to a multiple of ``block`` (at least one block)."""
    size = max(block, -(-len(array) // block) * block)
    out = np.zeros((size,) + array.shape[1:], dtype=array.dtype)
    out[:len(array)] = array
    return out


class Scorer:
    """``log p(word | context)`` over the shortlist's ids, for arrays of n-grams."""

    def __init__(self, model: Cslm) -> None:
        hp = model.hp
        self.context = hp.context
        self.device = next(model.parameters()).device
        E = hp.embedding
        with torch.inference_mode():
            embedding, w1 = model.embedding.weight, model.hidden1.weight
            tables = [embedding @ w1[:, p * E:(p + 1) * E].T for p in range(hp.context)]  # (vocab, hidden1) each
            tables[0] = tables[0] + model.hidden1.bias
            self.vocab = embedding.shape[0]
            self.first = torch.cat(tables).contiguous()  # (context x vocab, hidden1): position p's rows at p * vocab
            self.w2, self.b2 = model.hidden2.weight.detach().clone(), model.hidden2.bias.detach().clone()
            self.w3, self.b3 = model.output.weight.detach().clone(), model.output.bias.detach().clone()

    def hidden(self, contexts: np.ndarray) -> torch.Tensor:
        """h2 (rows padded to whole blocks) of contexts (n x 6 ids).

        The first layer is one lookup of all six table rows of every context, summed over the
        positions; the second a product per block of CONTEXT_BLOCK rows.
        """
        rows = padded(contexts.astype(np.int64), CONTEXT_BLOCK) + np.arange(self.context) * self.vocab
        index = torch.from_numpy(rows.reshape(-1)).to(self.device)
        with torch.inference_mode():
            h1 = torch.relu(self.first.index_select(0, index).view(len(rows), self.context, -1).sum(1))
            return torch.cat([F.linear(h1[lo:lo + CONTEXT_BLOCK], self.w2, self.b2).relu_()
                              for lo in range(0, len(rows), CONTEXT_BLOCK)])

    def score(self, contexts: np.ndarray, words: np.ndarray, normalization: Normalization = "exact") -> np.ndarray:
        """``log p(words[k] | contexts[k])`` (float64): the logit, minus log Z of the context when exact."""
        if not len(words):
            return np.zeros(0)
        unique, inverse = np.unique(np.asarray(contexts, dtype=np.int64), axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        hidden = self.hidden(unique)
        scores = self.logits(hidden, inverse, np.asarray(words, dtype=np.int64))
        if normalization == "exact":
            scores -= self.log_partition_of(hidden, np.arange(len(unique)))[inverse]
        return scores

    def logits(self, hidden: torch.Tensor, rows: np.ndarray, words: np.ndarray) -> np.ndarray:
        """``W3[w] . h2 + b3[w]`` for each (row of ``hidden``, word), in blocks of PAIR_BLOCK."""
        out = np.empty(len(words))
        with torch.inference_mode():
            for lo in range(0, len(words), PAIR_BLOCK):
                r = torch.from_numpy(padded(rows[lo:lo + PAIR_BLOCK], PAIR_BLOCK)).to(self.device)
                w = torch.from_numpy(padded(words[lo:lo + PAIR_BLOCK], PAIR_BLOCK)).to(self.device)
                logits = (hidden.index_select(0, r) * self.w3.index_select(0, w)).sum(1) + self.b3.index_select(0, w)
                n = min(PAIR_BLOCK, len(words) - lo)
                out[lo:lo + n] = logits[:n].double().cpu().numpy()
        return out

    def log_partition_of(self, hidden: torch.Tensor, rows: np.ndarray) -> np.ndarray:
        """``log Z`` (the full softmax's log-sum-exp) of rows ``rows`` of ``hidden``, in blocks of CONTEXT_BLOCK."""
        out = np.empty(len(rows))
        index = torch.from_numpy(padded(np.asarray(rows, dtype=np.int64), CONTEXT_BLOCK)).to(self.device)
        with torch.inference_mode():
            for lo in range(0, len(rows), CONTEXT_BLOCK):
                logits = F.linear(hidden.index_select(0, index[lo:lo + CONTEXT_BLOCK]), self.w3, self.b3)
                n = min(CONTEXT_BLOCK, len(rows) - lo)
                out[lo:lo + n] = torch.logsumexp(logits, dim=1)[:n].double().cpu().numpy()
        return out

    def log_partition(self, contexts: np.ndarray) -> np.ndarray:
        """``log Z`` of each context: 0 when the model is perfectly self-normalized."""
        if not len(contexts):
            return np.zeros(0)
        unique, inverse = np.unique(np.asarray(contexts, dtype=np.int64), axis=0, return_inverse=True)
        return self.log_partition_of(self.hidden(unique), np.arange(len(unique)))[inverse.reshape(-1)]


#: Tokens of a text scored at once by :func:`score_text`.
TEXT_CHUNK = 65_536


def score_text(scorer: Scorer, text: EncodedText, normalization: Normalization = "exact",
               with_log_z: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """Every token's ``log p`` (``</s>`` included; back-off added for words outside the shortlist), and,
    with ``with_log_z``, ``log Z`` of every token's context."""
    scores = np.empty(len(text))
    log_z = np.empty(len(text)) if with_log_z else None
    for lo in range(0, len(text), TEXT_CHUNK):
        index = np.arange(lo, min(lo + TEXT_CHUNK, len(text)))
        contexts = text.contexts(index, scorer.context)
        scores[index] = scorer.score(contexts, text.ids[index], normalization)
        if log_z is not None:
            log_z[index] = scorer.log_partition(contexts)
    if text.extra is not None:
        scores += text.extra
    return scores, log_z
