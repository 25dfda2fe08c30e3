"""Phrase and reordering tables from the extracted phrase-pair occurrences (Moses' ``score``,
``consolidate`` and ``lexical-reordering-score``).

Phrase table line (source = f, target = e), as Moses writes it::

    f ||| e ||| p(f|e) lex(f|e) p(e|f) lex(e|f) ||| alignment ||| count(e) count(f) count(f,e)

A pair seen with several alignments takes the most frequent one (ties: the greatest, comparing
target-major point lists, as Moses does); the lexical weights use it. Reordering table line
(``msd-bidirectional-fe``)::

    f ||| e ||| p(m) p(s) p(d) [previous] p(m) p(s) p(d) [next]

with Moses' constant smoothing ``p(o) = (count(o) + 0.5) / (total + 1.5)``. Lines are sorted
byte-wise on ``f ||| e``, the order Moses' ``LC_ALL=C sort`` gives. All counting is numpy work on
the integer-encoded occurrences.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pysmt.textio import atomic_writer
from pysmt.training.corpus import AlignedCorpus
from pysmt.training.extraction import PhraseInstances, parse_points, phrase_alignment
from pysmt.training.lexical import LexicalTables


@dataclass
class PhrasePairs:
    """The distinct phrase pairs of a corpus: counts, orientation counts and a representative occurrence."""

    count_fe: np.ndarray
    count_f: np.ndarray
    count_e: np.ndarray
    representative: np.ndarray  # occurrence index with the pair's chosen alignment
    prev: np.ndarray  # (pairs, 3) orientation counts
    next: np.ndarray

    def __len__(self) -> int:
        return len(self.count_fe)


def starts_of_runs(*keys: np.ndarray) -> np.ndarray:
    """Boolean mask: True where any of the (sorted) keys changes from the previous position."""
    mask = np.zeros(len(keys[0]), dtype=bool)
    if len(mask):
        mask[0] = True
        for key in keys:
            mask[1:] |= key[1:] != key[:-1]
    return mask


def count_pairs(inst: PhraseInstances, corpus: AlignedCorpus) -> PhrasePairs:
    """Group occurrences into distinct pairs, count them, and choose each pair's alignment."""
    order = np.lexsort((np.arange(len(inst)), inst.align_hash, inst.tgt_hash, inst.src_hash))
    src, tgt, align = inst.src_hash[order], inst.tgt_hash[order], inst.align_hash[order]
    pair_start = starts_of_runs(src, tgt)
    pair_id = np.cumsum(pair_start) - 1
    n_pairs = int(pair_id[-1]) + 1 if len(pair_id) else 0
    count_fe = np.bincount(pair_id, minlength=n_pairs).astype(np.float64)

    src_start = starts_of_runs(src)
    src_group = np.cumsum(src_start) - 1
    src_sizes = np.bincount(src_group)
    count_f = src_sizes[src_group[pair_start]].astype(np.float64)
    unique_tgt, tgt_counts = np.unique(inst.tgt_hash, return_counts=True)
    count_e = tgt_counts[np.searchsorted(unique_tgt, tgt[pair_start])].astype(np.float64)

    # Alignment runs inside each pair; the most frequent wins, ties resolved on the alignment itself.
    run_start = starts_of_runs(src, tgt, align)
    run_index = np.flatnonzero(run_start)
    run_pair = pair_id[run_index]
    run_size = np.diff(np.append(run_index, len(order)))
    best_size = np.zeros(n_pairs, dtype=np.int64)
    np.maximum.at(best_size, run_pair, run_size)
    winners = run_size == best_size[run_pair]
    representative = np.full(n_pairs, -1, dtype=np.int64)
    tied = np.bincount(run_pair[winners], minlength=n_pairs) > 1
    for run, pair in zip(run_index[winners], run_pair[winners]):
        occurrence = int(order[run])
        if representative[pair] < 0:
            representative[pair] = occurrence
        elif tied[pair] and moses_alignment(inst, corpus, occurrence) > moses_alignment(inst, corpus, int(representative[pair])):
            representative[pair] = occurrence

    prev = np.bincount(pair_id * 3 + inst.prev[order], minlength=n_pairs * 3).reshape(n_pairs, 3)
    nxt = np.bincount(pair_id * 3 + inst.next[order], minlength=n_pairs * 3).reshape(n_pairs, 3)
    return PhrasePairs(count_fe, count_f, count_e, representative, prev, nxt)


def occurrence_alignment(inst: PhraseInstances, corpus: AlignedCorpus, k: int) -> tuple[tuple[int, int], ...]:
    """The (relative, target-major) alignment of occurrence ``k``."""
    ss, ts = int(inst.src_start[k]), int(inst.tgt_start[k])
    points = parse_points(corpus.alignments[int(inst.sentence[k])])
    return phrase_alignment(points, ss, ss + int(inst.src_len[k]) - 1, ts, ts + int(inst.tgt_len[k]) - 1)


def moses_alignment(inst: PhraseInstances, corpus: AlignedCorpus, k: int) -> tuple[tuple[int, ...], ...]:
    """An occurrence's alignment as Moses compares them: per target word, its sorted source words."""
    per_target: list[list[int]] = [[] for _ in range(int(inst.tgt_len[k]))]
    for s, t in occurrence_alignment(inst, corpus, k):
        per_target[t].append(s)
    return tuple(tuple(sorted(links)) for links in per_target)


def g6(value: float) -> str:
    """C++ ostream's default formatting of a float (6 significant digits)."""
    return f"{float(np.float32(value)):.6g}"


def write_tables(inst: PhraseInstances, corpus: AlignedCorpus, pairs: PhrasePairs, lexical: LexicalTables,
                 phrase_table: Path, reordering_table: Path | None) -> int:
    """Write the phrase table (and reordering table) sorted as Moses sorts them; return the pair count."""
    rows = []
    for p in range(len(pairs)):
        k = int(pairs.representative[p])
        sentence = int(inst.sentence[k])
        src = corpus.source_words(sentence, int(inst.src_start[k]), int(inst.src_len[k]))
        tgt = corpus.target_words(sentence, int(inst.tgt_start[k]), int(inst.tgt_len[k]))
        rows.append((f"{' '.join(src)} ||| {' '.join(tgt)} |||".encode(), p, src, tgt, k))
    rows.sort(key=lambda row: row[0])
    p_f_given_e = (pairs.count_fe.astype(np.float32) / pairs.count_e.astype(np.float32))
    p_e_given_f = (pairs.count_fe.astype(np.float32) / pairs.count_f.astype(np.float32))
    prev = (pairs.prev + 0.5) / (pairs.prev.sum(axis=1, keepdims=True) + 1.5)
    nxt = (pairs.next + 0.5) / (pairs.next.sum(axis=1, keepdims=True) + 1.5)
    with atomic_writer(phrase_table) as out:
        for key, p, src, tgt, k in rows:
            points = occurrence_alignment(inst, corpus, k)
            lex_f_e, lex_e_f = lexical.weights(src, tgt, points)
            alignment = " ".join(f"{s}-{t}" for s, t in points)
            out.write(f"{key.decode()} {g6(p_f_given_e[p])} {g6(lex_f_e)} {g6(p_e_given_f[p])} {g6(lex_e_f)} ||| "
                      f"{alignment} ||| {g6(pairs.count_e[p])} {g6(pairs.count_f[p])} {g6(pairs.count_fe[p])}\n")
    if reordering_table is not None:
        with atomic_writer(reordering_table) as out:
            for key, p, _, _, _ in rows:
                values = " ".join(f"{v:f}" for v in (*prev[p], *nxt[p]))
                out.write(f"{key.decode()} {values}\n")
    return len(rows)
