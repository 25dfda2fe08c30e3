"""Scoring complete translations: log p(e | f) of every hypothesis of a sentence, and its subword count.

The hypotheses of an n-best list share most of their prefixes, and a decoder state depends only on
the prefix before it: so the hypotheses (their subwords, each ended by end-of-sentence) are put in a
prefix tree, and the network computes each prefix's state and next-subword distribution once. The
tree is walked a depth at a time, every prefix of a depth in batches of ``batch_size``; the source is
encoded once per sentence and its annotations shared by every prefix. On n-best lists this computes a
third to a half of what scoring each hypothesis on its own would (a 100-best list of Multi30k: 25,630
subwords in 10,161 prefixes), with the same result (the tests compare both). A right-to-left model
scores each hypothesis's subwords reversed, in a tree of reversed hypotheses.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from rnn_feature.sentence.model import AttentionEncoderDecoder, Encoded
from rnn_feature.sentence.store import load_model
from rnn_feature.sentence.subwords import EOS_ID, PAD_ID


class PrefixTree:
    """Subword sequences as a tree of prefixes, numbered depth by depth (the root, the empty prefix, is 0).

    ``parent[k]`` and ``last[k]`` are prefix ``k``'s parent and last subword (padding for the root);
    ``requests`` are the distinct (prefix, next subword) pairs the sequences need, ``uses[j]`` the requests of
    sequence ``j`` (its subwords after each of its prefixes, then end-of-sentence after the whole).
    """

    def __init__(self, sequences: Sequence[Sequence[int]]) -> None:
        children: dict[tuple[int, int], int] = {}
        parent, last, depth = [-1], [PAD_ID], [0]
        paths = []
        for ids in sequences:
            node, path = 0, [0]
            for token in ids:
                child = children.get((node, token))
                if child is None:
                    child = children[(node, token)] = len(parent)
                    parent.append(node)
                    last.append(token)
                    depth.append(depth[node] + 1)
                node = child
                path.append(node)
            paths.append(path)
        order = np.argsort(np.array(depth), kind="stable")  # depth by depth, parents before children
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        self.parent = np.where(np.array(parent)[order] >= 0, rank[np.maximum(np.array(parent)[order], 0)], -1)
        self.last = np.array(last, dtype=np.int64)[order]
        self.depth = np.array(depth)[order]
        pairs: dict[tuple[int, int], int] = {}
        self.uses = []
        for ids, path in zip(sequences, paths):
            wanted = [*ids, EOS_ID]
            self.uses.append(
                [pairs.setdefault((int(rank[node]), token), len(pairs)) for node, token in zip(path, wanted)]
            )
        self.requests = np.array(list(pairs), dtype=np.int64).reshape(-1, 2)

    def __len__(self) -> int:
        return len(self.parent)


def tree_log_probs(
    model: AttentionEncoderDecoder, encoded: Encoded, sequences: Sequence[Sequence[int]], batch_size: int
) -> np.ndarray:
    """``log p(sequence | source)`` of each sequence (end-of-sentence included), ``encoded`` one source."""
    tree = PrefixTree(sequences)
    device = encoded.annotations.device
    states = torch.empty(len(tree), model.hp.hidden, device=device)
    values = np.zeros(len(tree.requests))
    by_prefix = np.argsort(tree.requests[:, 0], kind="stable")
    request_prefix = tree.requests[by_prefix, 0]
    last = torch.from_numpy(tree.last).to(device)
    starts = np.flatnonzero(np.diff(tree.depth, prepend=-1)) if len(tree) else np.zeros(0, dtype=np.int64)
    ends = [*starts[1:], len(tree)]
    for level_start, level_end in zip(starts, ends):
        for begin in range(int(level_start), int(level_end), batch_size):
            end = min(begin + batch_size, int(level_end))
            rows = torch.zeros(end - begin, dtype=torch.int64, device=device)
            parent = tree.parent[begin:end]
            before = encoded.start[rows] if begin == 0 else states[torch.from_numpy(parent).to(device)]
            previous = model.target_embedding(
                torch.where(torch.from_numpy(parent).to(device) < 0, PAD_ID, last[begin:end])
            )
            state, t = model.step(encoded.select(rows), before, previous)
            states[begin:end] = state
            lo, hi = np.searchsorted(request_prefix, [begin, end])
            if hi > lo:
                wanted = tree.requests[by_prefix[lo:hi]]
                log_p = torch.log_softmax(model.output(t), dim=1)
                picked = log_p[
                    torch.from_numpy(wanted[:, 0] - begin).to(device), torch.from_numpy(wanted[:, 1]).to(device)
                ]
                values[by_prefix[lo:hi]] = picked.double().cpu().numpy()
    return np.array([values[uses].sum() for uses in tree.uses])


class SentenceScorer:
    """A sentence model loaded once, scoring a sentence's hypotheses in batches of ``batch_size`` prefixes."""

    def __init__(self, directory: Path, device: str | torch.device = "cpu", batch_size: int = 256) -> None:
        self.model, self.subwords = load_model(directory, device)
        self.device = next(self.model.parameters()).device
        self.batch_size = batch_size
        self.right_to_left = self.model.hp.right_to_left

    @torch.no_grad()
    def score(self, source: Sequence[str], hypotheses: Sequence[Sequence[str]]) -> np.ndarray:
        """``(len(hypotheses), 2)``: each hypothesis's log p(e | f) (natural log, end-of-sentence included)
        and its number of subwords; ``source`` and the hypotheses are words, as the decoder has them."""
        distinct = list(dict.fromkeys(" ".join(h) for h in hypotheses))
        at = {text: k for k, text in enumerate(distinct)}
        targets = self.subwords.encode(distinct)
        if self.right_to_left:
            targets = [ids[::-1] for ids in targets]
        source_ids = self.subwords.encode([" ".join(source)])[0] or [EOS_ID]
        src = torch.tensor([source_ids], dtype=torch.int64, device=self.device)
        encoded = self.model.encode(src, torch.tensor([len(source_ids)], device=self.device))
        scores = tree_log_probs(self.model, encoded, targets, self.batch_size)
        rows_of = [at[" ".join(h)] for h in hypotheses]
        lengths = np.array([len(ids) for ids in targets], dtype=np.float64)
        return np.stack([scores[rows_of], lengths[rows_of]], axis=1)
