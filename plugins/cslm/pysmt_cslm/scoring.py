"""Fast scoring of n-grams: what the decoder feature and ``pysmt cslm perplexity`` both go through.

* The first layer is precomputed per (word, position), as Devlin et al. (2014) do: ``W1 x`` is the
  sum of six vectors ``P_p[w_p] = W1_p e(w_p)`` (position 0's table also holds ``b1``), so a
  context costs six row lookups instead of a 3072-wide product.
* Hidden layers are computed once per *unique* context of a request (the decoder feature keeps
  them across calls, :class:`~pysmt_cslm.features.ContextCache`).
* ``normalization = "self"``: the log-probability is the logit alone (``W3[w] . h2 + b3[w]``),
  computed only for the requested words; training's ``alpha (log Z)^2`` term keeps ``log Z``
  near 0. ``"exact"``: the logit minus ``log Z``, the log-sum-exp of the context's full output
  layer (the one product whose cost grows with the shortlist).

The hidden layers and the logits are compiled (``_network.cpp``): the decoder asks about 500 times
a sentence for a handful of contexts each, where numpy's few microseconds per call were most of
the feature's time. ``log Z``, the one large product, runs in torch on the model's device (a GPU
when there is one).

**The numbers do not depend on how requests are batched.** The compiled code computes every
context's hidden layer and every logit alone, by the same loop; ``log Z``'s products have a fixed
shape (blocks of :data:`CONTEXT_BLOCK` rows, padded with dummy rows), because matrix products round
differently for different row counts. A context's hidden layer, and so an n-gram's score, is then
the same bit for bit whatever else is in its batch: the feature's scores do not depend on its
buffer size, on the cache, or on the order of requests, and the perplexity command computes
exactly what the decoder adds up.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import torch
from torch.nn import functional as F

from pysmt_cslm._network import Network
from pysmt_cslm.data import EncodedText
from pysmt_cslm.model import Cslm

Normalization = Literal["exact", "self"]
NORMALIZATIONS = ("exact", "self")
#: Rows of every log Z product: small, because the decoder asks often for little.
CONTEXT_BLOCK = 8


def padded(array: np.ndarray, block: int) -> np.ndarray:
    """``array`` with zero rows appended up to a multiple of ``block`` (at least one block)."""
    size = max(block, -(-len(array) // block) * block)
    out = np.zeros((size,) + array.shape[1:], dtype=array.dtype)
    out[: len(array)] = array
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
            tables = [embedding @ w1[:, p * E : (p + 1) * E].T for p in range(hp.context)]  # (vocab, hidden1) each
            tables[0] = tables[0] + model.hidden1.bias
            first = torch.cat(tables).float().cpu().numpy()  # (context x vocab, hidden1): position p at p * vocab
            w3 = model.output.weight.float().contiguous().cpu().numpy()
            b3 = model.output.bias.float().cpu().numpy()
            self.network = Network(
                first,
                hp.context,
                model.hidden2.weight.T.float().contiguous().cpu().numpy(),
                model.hidden2.bias.float().cpu().numpy(),
                w3,
                b3,
            )
            # log Z's copy on the model's device: on the CPU, the same memory as the compiled network's
            self.w3_device = torch.from_numpy(w3).to(self.device)
            self.b3_device = torch.from_numpy(b3).to(self.device)

    def hidden(self, contexts: np.ndarray) -> np.ndarray:
        """h2 (float32, one row per context) of contexts (n x 6 ids)."""
        return self.network.hidden(np.asarray(contexts, dtype=np.int32))

    def logits(self, hidden: np.ndarray, words: np.ndarray) -> np.ndarray:
        """``W3[w] . h2 + b3[w]`` (float64) for each row of ``hidden`` and its word."""
        return self.network.logits(hidden, words)

    def log_partition_of(self, hidden: np.ndarray) -> np.ndarray:
        """``log Z`` (the full softmax's log-sum-exp, float64) of each row of ``hidden``, on the model's device."""
        out = np.empty(len(hidden))
        blocks = torch.from_numpy(padded(hidden, CONTEXT_BLOCK)).to(self.device)
        with torch.inference_mode():
            for lo in range(0, len(hidden), CONTEXT_BLOCK):
                logits = F.linear(blocks[lo : lo + CONTEXT_BLOCK], self.w3_device, self.b3_device)
                n = min(CONTEXT_BLOCK, len(hidden) - lo)
                out[lo : lo + n] = torch.logsumexp(logits, dim=1)[:n].double().cpu().numpy()
        return out

    def score(self, contexts: np.ndarray, words: np.ndarray, normalization: Normalization = "exact") -> np.ndarray:
        """``log p(words[k] | contexts[k])`` (float64): the logit, minus log Z of the context when exact."""
        if not len(words):
            return np.zeros(0)
        unique, inverse = np.unique(np.asarray(contexts, dtype=np.int64), axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        hidden = self.hidden(unique)
        scores = self.logits(hidden[inverse], np.asarray(words, dtype=np.int64))
        if normalization == "exact":
            scores -= self.log_partition_of(hidden)[inverse]
        return scores

    def log_partition(self, contexts: np.ndarray) -> np.ndarray:
        """``log Z`` of each context: 0 when the model is perfectly self-normalized."""
        if not len(contexts):
            return np.zeros(0)
        unique, inverse = np.unique(np.asarray(contexts, dtype=np.int64), axis=0, return_inverse=True)
        return self.log_partition_of(self.hidden(unique))[inverse.reshape(-1)]


#: Tokens of a text scored at once by :func:`score_text`.
TEXT_CHUNK = 65_536


def score_text(
    scorer: Scorer, text: EncodedText, normalization: Normalization = "exact", with_log_z: bool = False
) -> tuple[np.ndarray, np.ndarray | None]:
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
