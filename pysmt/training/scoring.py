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

import heapq
import shutil
from contextlib import ExitStack
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

import numpy as np
from tqdm import tqdm

from pysmt.files.textio import atomic_writer, temporary_folder, writing
from pysmt.running.parallel import ordered_map, shared
from pysmt.training.corpus import AlignedCorpus, Sentences
from pysmt.training.extraction import PhraseInstances, parse_points, phrase_alignment
from pysmt.training.lexical import LexicalTables, Lexicon


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


def count_pairs(inst: PhraseInstances, corpus: AlignedCorpus, target_counts: np.ndarray | None = None) -> PhrasePairs:
    """Group occurrences into distinct pairs, count them, and choose each pair's alignment.

    ``target_counts`` gives each occurrence's count(e) when ``inst`` is one bucket of a corpus's
    occurrences (all those of its source phrases, not all those of its target phrases); without,
    count(e) is counted in ``inst``.
    """
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
    if target_counts is None:
        unique_tgt, tgt_counts = np.unique(inst.tgt_hash, return_counts=True)
        count_e = tgt_counts[np.searchsorted(unique_tgt, tgt[pair_start])].astype(np.float64)
    else:
        count_e = target_counts[order[pair_start]].astype(np.float64)

    # Alignment runs inside each pair; the most frequent wins, ties resolved on the alignment itself.
    run_start = starts_of_runs(src, tgt, align)
    run_index = np.flatnonzero(run_start)
    run_pair = pair_id[run_index]
    run_size = np.diff(np.append(run_index, len(order)))
    best_size = np.zeros(n_pairs, dtype=np.int64)
    np.maximum.at(best_size, run_pair, run_size)
    winners = run_size == best_size[run_pair]
    win_runs, win_pairs = run_index[winners], run_pair[winners]
    representative = order[win_runs[np.unique(win_pairs, return_index=True)[1]]]
    tied = np.bincount(win_pairs, minlength=n_pairs) > 1
    contested = tied[win_pairs]
    for run, pair in zip(win_runs[contested].tolist(), win_pairs[contested].tolist()):
        occurrence = int(order[run])
        if moses_alignment(inst, corpus, occurrence) > moses_alignment(inst, corpus, int(representative[pair])):
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


#: Pairs per sorted run: bounds the memory of the write step (about 300 bytes a pair while sorting).
RUN_SIZE = 500_000

#: Pairs formatted at once inside a run: bounds the Python objects that formatting holds besides the lines.
FORMAT_CHUNK = 10_000


def _write_run(job: tuple[int, int, str]) -> str:
    """Format pairs ``order[lo:hi]`` as ``phrase-table line \0 reordering line``, sorted, into file ``path``.

    Lines are kept as UTF-8 bytes (half the memory of French text as str) and sorted as bytes, Moses'
    ``LC_ALL=C sort`` order: keys are unique and none is a prefix of another (each ends in " |||"),
    so sorting whole lines sorts by key.
    """
    inst, corpus, pairs, lexicon, order = shared()  # what write_runs shares with its workers
    lo, hi, path = job
    lines: list[bytes] = []
    for start in range(lo, hi, FORMAT_CHUNK):
        lines += table_lines(inst, corpus, pairs, lexicon, order[start : min(start + FORMAT_CHUNK, hi)])
    lines.sort()
    with writing(path), open(path, "wb") as out:
        out.writelines(lines)
    return path


def table_lines(
    inst: PhraseInstances, corpus: AlignedCorpus, pairs: PhrasePairs, lexicon: Lexicon, chosen: np.ndarray
) -> list[bytes]:
    """The ``phrase-table line \0 reordering line`` of each pair in ``chosen``, encoded.

    Pairs come in the order of their representative occurrence, so each sentence's alignment is
    parsed once; their lexical weights are computed together (:meth:`Lexicon.weights`).
    """
    occurrence = pairs.representative[chosen]
    columns = [
        inst.sentence[occurrence],
        inst.src_start[occurrence],
        inst.src_len[occurrence],
        inst.tgt_start[occurrence],
        inst.tgt_len[occurrence],
    ]
    f32 = [
        (pairs.count_fe[chosen] / pairs.count_e[chosen]).astype(np.float32).astype(np.float64).tolist(),
        (pairs.count_fe[chosen] / pairs.count_f[chosen]).astype(np.float32).astype(np.float64).tolist(),
    ]
    counts = [pairs.count_e[chosen].tolist(), pairs.count_f[chosen].tolist(), pairs.count_fe[chosen].tolist()]
    prev = (pairs.prev[chosen] + 0.5) / (pairs.prev[chosen].sum(axis=1, keepdims=True) + 1.5)
    nxt = (pairs.next[chosen] + 0.5) / (pairs.next[chosen].sum(axis=1, keepdims=True) + 1.5)
    reordering = np.hstack([prev, nxt]).tolist()
    rows = list(zip(*(c.tolist() for c in columns)))
    insides = []
    last_sentence, points = -1, []
    for sentence, ss, sl, ts, tl in rows:
        if sentence != last_sentence:
            points, last_sentence = parse_points(corpus.alignments[sentence]), sentence
        insides.append(phrase_alignment(points, ss, ss + sl - 1, ts, ts + tl - 1))
    src_len, tgt_len = columns[2].astype(np.int64), columns[4].astype(np.int64)
    width = int(max(src_len.max(initial=0), tgt_len.max(initial=0), 1))
    src_ids = phrase_words(corpus.sources, columns[0], columns[1], width)
    tgt_ids = phrase_words(corpus.targets, columns[0], columns[3], width)
    lex_f_e, lex_e_f = (
        weights.tolist() for weights in lexicon.weights(src_ids, src_len, tgt_ids, tgt_len, alignment_points(insides))
    )
    src_words, tgt_words = corpus.src_vocab.words, corpus.tgt_vocab.words
    src_rows, tgt_rows = src_ids.tolist(), tgt_ids.tolist()
    lines = []
    for i, ((_, _, sl, _, tl), inside) in enumerate(zip(rows, insides)):
        source = " ".join(src_words[w] for w in src_rows[i][:sl])
        key = f"{source} ||| {' '.join(tgt_words[w] for w in tgt_rows[i][:tl])} |||"
        lines.append(
            (
                f"{key} {f32[0][i]:.6g} {g6(lex_f_e[i])} {f32[1][i]:.6g} {g6(lex_e_f[i])}"
                f" ||| {' '.join(f'{s}-{t}' for s, t in inside)} ||| {counts[0][i]:.6g} {counts[1][i]:.6g} "
                f"{counts[2][i]:.6g}\0{key} {' '.join(f'{v:f}' for v in reordering[i])}\n"
            ).encode()
        )
    return lines


def phrase_words(side: Sentences, sentence: np.ndarray, start: np.ndarray, width: int) -> np.ndarray:
    """(n, width) word ids of the phrases starting at ``start`` in ``sentence``; past a phrase's end a row
    holds whatever follows it (callers read a row's first length ids only)."""
    at = side.offsets[sentence][:, None] + start.astype(np.int64)[:, None] + np.arange(width)[None, :]
    return side.flat[np.minimum(at, len(side.flat) - 1)] if len(side.flat) else np.zeros(at.shape, np.int32)


def alignment_points(insides: list[tuple[tuple[int, int], ...]]) -> np.ndarray:
    """(m, 3) rows ``pair, source position, target position`` of each pair's alignment points, in order."""
    sizes = np.fromiter(map(len, insides), dtype=np.int64, count=len(insides))
    flat = np.fromiter(chain.from_iterable(chain.from_iterable(insides)), dtype=np.int64, count=2 * int(sizes.sum()))
    return np.column_stack([np.repeat(np.arange(len(insides)), sizes), flat.reshape(-1, 2)])


def write_runs(
    inst: PhraseInstances,
    corpus: AlignedCorpus,
    pairs: PhrasePairs,
    lexicon: Lexicon,
    prefix: Path,
    processes: int = 2,
    progress: tqdm | None = None,
    run_size: int = RUN_SIZE,
) -> list[Path]:
    """Format the pairs' table lines and sort them in runs of at most ``run_size`` pairs on ``processes``
    workers (as many runs each), into files ``PREFIX.runK``; return the files."""
    order = np.argsort(pairs.representative, kind="stable")
    tables = (inst, corpus, pairs, lexicon, order)
    runs = max(1, -(-len(order) // run_size))
    size = max(1, -(-len(order) // (-(-runs // processes) * processes)))  # as many runs per worker
    jobs = [(lo, min(lo + size, len(order)), f"{prefix}.run{k}") for k, lo in enumerate(range(0, len(order), size))]
    return [
        Path(path)
        for path in ordered_map(_write_run, jobs, processes, progress, size=lambda job: job[1] - job[0], shared=tables)
    ]


def merge_runs(runs: list[Path], phrase_table: Path, reordering_table: Path | None) -> None:
    """Merge sorted runs into the phrase table (and reordering table), in Moses' byte order."""
    with ExitStack() as stack:
        handles = [stack.enter_context(open(path, encoding="utf-8")) for path in runs]
        pt = stack.enter_context(atomic_writer(phrase_table))
        rt = stack.enter_context(atomic_writer(reordering_table)) if reordering_table is not None else None
        for line in heapq.merge(*handles):
            phrase_line, _, reordering_line = line.partition("\0")
            pt.write(phrase_line + "\n")
            if rt is not None:
                rt.write(reordering_line)


def write_tables(
    inst: PhraseInstances,
    corpus: AlignedCorpus,
    pairs: PhrasePairs,
    lexical: LexicalTables,
    phrase_table: Path,
    reordering_table: Path | None,
    processes: int = 2,
    progress: tqdm | None = None,
) -> int:
    """Write the phrase table (and reordering table) of pairs counted in memory, sorted as Moses sorts them;
    return the pair count. Runs are sorted on ``processes`` workers in a temporary folder beside the
    table, then merged."""
    folder = temporary_folder(phrase_table)
    try:
        runs = write_runs(
            inst,
            corpus,
            pairs,
            lexical.encode(corpus.src_vocab, corpus.tgt_vocab),
            folder / "pairs",
            processes,
            progress,
        )
        merge_runs(runs, phrase_table, reordering_table)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return len(pairs)
