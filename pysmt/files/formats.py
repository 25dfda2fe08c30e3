"""Moses' output formats: n-best lines and Pharaoh word alignments.

Reading and writing these needs nothing of the decoder: a translation to write is anything shaped
like :class:`Candidate` (the decoder's :class:`pysmt.decoder.Candidate` is), so reading an n-best
list (``tuning/``) does not load the search.
"""

from __future__ import annotations

import re
from typing import Protocol

import numpy as np

Labels = list[tuple[str, int]]  # (feature label, number of values), in n-best order
#: A phrase pair's word alignment as tables hold it and the decoder reads it: ``SOURCE-TARGET`` word positions.
ALIGNMENT = re.compile(r"\s*(?:\d+-\d+(?:\s+\d+-\d+)*)?\s*")


class Candidate(Protocol):
    """What the writers read of a translation."""

    words: list[str]
    scores: np.ndarray
    total: float
    alignment: list[tuple[int, int]]


def format_score(value: float) -> str:
    """A score with up to 6 decimals and no trailing zeros (``-0`` printed as ``0``)."""
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def feature_scores(candidate: Candidate, labels: list[tuple[str, int, int]]) -> str:
    """``Label0= s1 s2 Label1= s ...``: a translation's scores as Moses' n-best lists (and its server) give them."""
    return " ".join(
        f"{name}= " + " ".join(format_score(candidate.scores[k]) for k in range(lo, hi)) for name, lo, hi in labels
    )


def nbest_line(index: int, candidate: Candidate, labels: list[tuple[str, int, int]]) -> str:
    """``id ||| words ||| Label0= s1 s2 Label1= s ... ||| total``, as Moses writes n-best lists."""
    features = feature_scores(candidate, labels)
    return f"{index} ||| {' '.join(candidate.words)} ||| {features} ||| {format_score(candidate.total)}"


def alignment_line(candidate: Candidate, by_target: bool = False) -> str:
    """Source-target word alignment of a translation, Pharaoh format (``0-0 1-2 ...``), in Moses' order (the
    candidate's: phrase by phrase in target order) or ``by_target`` position, then source (Moses'
    ``-sort-word-alignment 1``)."""
    links = sorted(candidate.alignment, key=lambda link: (link[1], link[0])) if by_target else candidate.alignment
    return " ".join(f"{s}-{t}" for s, t in links)


def parse_features(text: str) -> tuple[Labels, list[float]]:
    """``Label0= 1 2 Label1= 3`` -> ([("Label0", 2), ("Label1", 1)], [1, 2, 3])."""
    labels: Labels = []
    values: list[float] = []
    for token in text.split():
        if token.endswith("="):
            labels.append((token[:-1], 0))
        elif not labels:
            raise ValueError(f"value {token!r} before any 'Label='")
        else:
            values.append(float(token))
            labels[-1] = (labels[-1][0], labels[-1][1] + 1)
    return labels, values


def format_labels(labels: Labels) -> str:
    return " ".join(f"{name}({count})" for name, count in labels)
