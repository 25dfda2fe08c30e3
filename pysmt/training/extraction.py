"""Phrase-pair extraction consistent with a word alignment, with word-based MSD orientations.

This is Moses' ``extract`` (``--model wbe-msd``): for every target span of at most ``max_length``
words that has an alignment point, take the source span its points cover; keep it if no source
word inside is aligned outside the target span; then also emit every widening of the source span
over unaligned source words at its edges (up to ``max_length``).

Orientations (word-based): the previous orientation is *monotone* when the word diagonally before
the phrase's top-left corner, (start_src - 1, start_tgt - 1), is aligned and (end_src + 1,
start_tgt - 1) is not; *swap* in the opposite case; *other* otherwise. The next orientation mirrors
it at the bottom-right corner. The sentence start (-1, -1) and end (src_len, tgt_len) count as
aligned.

Corpus-level extraction keeps everything integer-encoded: each phrase is represented by the hash
of its tuple of word ids (Python's tuple-of-int hash is deterministic) and each instance by where
it occurs, so counting is numpy work and memory stays a few dozen bytes per instance.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import BinaryIO

import numpy as np
from tqdm import tqdm

from pysmt.files.textio import write_array
from pysmt.running.parallel import ordered_stream, shared

MONO, SWAP, OTHER = 0, 1, 2
ORIENTATION_NAMES = ("mono", "swap", "other")


def extract_sentence(
    src_len: int, tgt_len: int, points: Sequence[tuple[int, int]], max_length: int = 7
) -> Iterator[tuple[int, int, int, int, int, int]]:
    """Yield ``(src_start, src_end, tgt_start, tgt_end, prev, next)`` (inclusive ends) for every phrase pair."""
    aligned_to_tgt: list[list[int]] = [[] for _ in range(tgt_len)]
    src_count = [0] * src_len
    point_set = set()
    for s, t in points:
        aligned_to_tgt[t].append(s)
        src_count[s] += 1
        point_set.add((s, t))

    def aligned(s: int, t: int) -> bool:
        if s == -1 and t == -1 or s == src_len and t == tgt_len:
            return True
        return (s, t) in point_set

    def orientation(before: bool, after: bool) -> int:
        if before and not after:
            return MONO
        if after and not before:
            return SWAP
        return OTHER

    for start_t in range(tgt_len):
        used = list(src_count)
        min_s, max_s = 1 << 30, -1
        for end_t in range(start_t, min(tgt_len, start_t + max_length)):
            for s in aligned_to_tgt[end_t]:
                min_s = min(min_s, s)
                max_s = max(max_s, s)
                used[s] -= 1
            if max_s < 0 or max_s - min_s >= max_length:
                continue
            if any(used[s] > 0 for s in range(min_s, max_s + 1)):
                continue
            start_s = min_s
            while start_s >= 0 and start_s > max_s - max_length and (start_s == min_s or src_count[start_s] == 0):
                end_s = max_s
                while end_s < src_len and end_s < start_s + max_length and (end_s == max_s or src_count[end_s] == 0):
                    prev = orientation(aligned(start_s - 1, start_t - 1), aligned(end_s + 1, start_t - 1))
                    nxt = orientation(aligned(end_s + 1, end_t + 1), aligned(start_s - 1, end_t + 1))
                    yield start_s, end_s, start_t, end_t, prev, nxt
                    end_s += 1
                start_s -= 1


def parse_points(line: str) -> list[tuple[int, int]]:
    """Pharaoh ``s-t`` points in file order (their order matters for Moses' alignment output)."""
    points = []
    for token in line.split():
        s, _, t = token.partition("-")
        points.append((int(s), int(t)))
    return points


def phrase_alignment(
    points: Sequence[tuple[int, int]], src_start: int, src_end: int, tgt_start: int, tgt_end: int
) -> tuple[tuple[int, int], ...]:
    """The alignment inside a phrase pair, relative ``(s, t)`` points ordered target-major (as Moses writes them)."""
    inside = [
        (t - tgt_start, s - src_start) for s, t in points if src_start <= s <= src_end and tgt_start <= t <= tgt_end
    ]
    return tuple((s, t) for t, s in sorted(inside))


#: One occurrence as ``pysmt train`` keeps it on disk between its extract and score steps (36 bytes).
OCCURRENCE_FIELDS = [
    ("src_hash", "<i8"),
    ("tgt_hash", "<i8"),
    ("align_hash", "<i8"),
    ("prev", "i1"),
    ("next", "i1"),
    ("sentence", "<i4"),
    ("src_start", "<i2"),
    ("src_len", "i1"),
    ("tgt_start", "<i2"),
    ("tgt_len", "i1"),
]
OCCURRENCE = np.dtype(OCCURRENCE_FIELDS)


@dataclass
class PhraseInstances:
    """Extracted phrase-pair occurrences, as parallel numpy arrays (the fields of :data:`OCCURRENCE`)."""

    src_hash: np.ndarray
    tgt_hash: np.ndarray
    align_hash: np.ndarray
    prev: np.ndarray
    next: np.ndarray
    sentence: np.ndarray
    src_start: np.ndarray
    src_len: np.ndarray
    tgt_start: np.ndarray
    tgt_len: np.ndarray

    def __len__(self) -> int:
        return len(self.src_hash)

    def records(self) -> np.ndarray:
        """The occurrences as one :data:`OCCURRENCE` array, to write to disk."""
        records = np.empty(len(self), dtype=OCCURRENCE)
        for name in self.__dataclass_fields__:
            records[name] = getattr(self, name)
        return records

    @classmethod
    def from_records(cls, records: np.ndarray) -> PhraseInstances:
        return cls(**{name: np.ascontiguousarray(records[name]) for name in cls.__dataclass_fields__})

    @classmethod
    def concatenate(cls, parts: list[PhraseInstances]) -> PhraseInstances:
        return cls(**{k: np.concatenate([getattr(p, k) for p in parts]) for k in cls.__dataclass_fields__})


def _extract_range(bounds: tuple[int, int]) -> PhraseInstances:
    sources, targets, alignments, max_length = shared()
    cols = {
        k: array(code)
        for k, code in (
            ("src_hash", "q"),
            ("tgt_hash", "q"),
            ("align_hash", "q"),
            ("prev", "b"),
            ("next", "b"),
            ("sentence", "i"),
            ("src_start", "h"),
            ("src_len", "b"),
            ("tgt_start", "h"),
            ("tgt_len", "b"),
        )
    }
    for k in range(*bounds):
        src, tgt, points = sources[k], targets[k], parse_points(alignments[k])
        for ss, se, ts, te, prev, nxt in extract_sentence(len(src), len(tgt), points, max_length):
            cols["src_hash"].append(hash(src[ss : se + 1]))
            cols["tgt_hash"].append(hash(tgt[ts : te + 1]))
            cols["align_hash"].append(hash(phrase_alignment(points, ss, se, ts, te)))
            cols["prev"].append(prev)
            cols["next"].append(nxt)
            cols["sentence"].append(k)
            cols["src_start"].append(ss)
            cols["src_len"].append(se - ss + 1)
            cols["tgt_start"].append(ts)
            cols["tgt_len"].append(te - ts + 1)
    return PhraseInstances(
        **{k: np.frombuffer(v, dtype=v.typecode) if len(v) else np.array([], dtype=v.typecode) for k, v in cols.items()}
    )


def extracted_parts(
    sources: Sequence[tuple[int, ...]],
    targets: Sequence[tuple[int, ...]],
    alignments: list[str],
    max_length: int = 7,
    processes: int = 2,
    progress: tqdm | None = None,
) -> Iterator[PhraseInstances]:
    """The phrase pairs of an integer-encoded, aligned corpus, in order, a part (2,000 sentences) at a
    time as soon as it is extracted (on several processes): memory holds a few parts, not the corpus's."""
    corpus = (sources, targets, alignments, max_length)
    step = 2000
    ranges = [(k, min(k + step, len(sources))) for k in range(0, len(sources), step)] or [(0, 0)]
    for (lo, hi), part in zip(ranges, ordered_stream(_extract_range, ranges, processes, shared=corpus)):
        if progress is not None:
            progress.update(hi - lo)
        yield part


def extract_corpus(
    sources: Sequence[tuple[int, ...]],
    targets: Sequence[tuple[int, ...]],
    alignments: list[str],
    max_length: int = 7,
    processes: int = 2,
    progress: tqdm | None = None,
) -> PhraseInstances:
    """Every phrase pair of an integer-encoded, aligned corpus, in memory (in order, on several processes)."""
    return PhraseInstances.concatenate(
        list(extracted_parts(sources, targets, alignments, max_length, processes, progress))
    )


def write_occurrences(parts: Iterable[PhraseInstances], out: BinaryIO) -> int:
    """Write each part's occurrences to ``out`` as :data:`OCCURRENCE` records as it comes; return how many."""
    written = 0
    for part in parts:
        write_array(part.records(), out)
        written += len(part)
    return written
