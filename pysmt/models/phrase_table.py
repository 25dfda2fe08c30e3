"""Moses phrase tables (``src ||| tgt ||| scores [||| alignment [||| counts]]``), text or gzip, or binarized.

The table is held compactly: target words as int32 ids in one flat array, scores in one float32
matrix, alignments interned, and one dict from source phrase to its block of entries. Entries of a
source phrase need not be contiguous in the file; they are grouped after loading.

A folder written by ``pysmt binarize`` (:mod:`pysmt.models.binary_table`) holds the same arrays,
memory-mapped: it loads in milliseconds, and its lookups give exactly the text table's entries.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pysmt.errors import at_line
from pysmt.models.binary_table import load_phrase_table
from pysmt.models.scores import log_probabilities
from pysmt.models.vocabulary import Vocabulary
from pysmt.textio import read_lines

FIELD_SEPARATOR = "|||"


@dataclass(frozen=True, slots=True)
class PhraseEntry:
    """One target side of a source phrase, with its (logged) scores."""

    target: tuple[str, ...]
    scores: np.ndarray
    alignment: str


def split_fields(line: str, path: str | Path, line_no: int, min_fields: int) -> list[str]:
    """Split a ``|||``-separated line into stripped fields, checking there are enough of them."""
    fields = [field.strip() for field in line.split(FIELD_SEPARATOR)]
    if len(fields) < min_fields:
        raise at_line(path, line_no, f"expected at least {min_fields} '|||'-separated fields, found {len(fields)}")
    return fields


def parse_scores(text: str, path: str | Path, line_no: int, expected: int | None) -> list[float]:
    """Parse a whitespace-separated score field, checking the count against the first line's."""
    try:
        values = [float(token) for token in text.split()]
    except ValueError:
        raise at_line(path, line_no, f"scores must be numbers, found {text!r}") from None
    if not values:
        raise at_line(path, line_no, "no scores")
    if expected is not None and len(values) != expected:
        raise at_line(path, line_no, f"{len(values)} scores where earlier lines have {expected}")
    if not math.isfinite(sum(values)):  # one test per line: a nan or inf makes the sum so
        for position, value in enumerate(values, start=1):
            if not math.isfinite(value):
                raise at_line(path, line_no, f"score {position} is {value}: scores must be finite numbers")
    return values


def phrase_entries(path: Path, log_scores: bool) -> Iterator[tuple[int, str, list[str], str, list[float]]]:
    """``(line_no, source, target words, alignment, scores)`` of each entry of a text table, checked
    (a bad line is an error naming file and line); the source's words are joined by single spaces."""
    num_scores = 0
    for line_no, line in read_lines(path, progress=f"load {path.name}"):
        if not line.strip():
            continue
        fields = split_fields(line, path, line_no, 3)
        source, target = fields[0], fields[1]
        if not source or not target:
            raise at_line(path, line_no, "empty source or target phrase")
        values = parse_scores(fields[2], path, line_no, num_scores or None)
        if not log_scores and min(values) < 0:
            raise at_line(path, line_no, "negative probability (for a table of log scores, set log-scores = true)")
        num_scores = len(values)
        yield line_no, " ".join(source.split()), target.split(), fields[3] if len(fields) > 3 else "", values


class PhraseTable:
    """A Moses phrase table in memory, looked up by source phrase (words joined by single spaces).

    ``log_scores=False`` (Moses' convention) logs the probabilities on load, floored at -100;
    ``log_scores=True`` takes the values as they are, for tables that already store log scores.

    ``path`` may also be a binary table folder (``pysmt binarize``); it must have been made with the
    same ``log_scores``. Either way the table offers ``lookup``, ``sources`` (source phrase to id:
    a dict, or a sorted memory-mapped stand-in with ``get``, ``in``, ``len`` and iteration),
    ``num_scores``, ``max_source_length`` and ``len``.
    """

    def __init__(self, path: str | Path, *, log_scores: bool = False) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            self.__dict__.update(load_phrase_table(self.path, log_scores))
            return
        self.target_vocab = Vocabulary()
        self.target_words = self.target_vocab.words
        self.sources: dict[str, int] = {}
        alignments = Vocabulary()
        entry_source = array("i")
        entry_target_start = array("q")
        entry_target_len = array("i")
        entry_alignment = array("i")
        target_ids = array("i")
        flat_scores = array("d")
        self.num_scores = 0
        self.max_source_length = 0
        add_word = self.target_vocab.add
        for _, source, words, alignment, values in phrase_entries(self.path, log_scores):
            self.num_scores = len(values)
            sid = self.sources.get(source)
            if sid is None:
                sid = self.sources[source] = len(self.sources)
                self.max_source_length = max(self.max_source_length, source.count(" ") + 1)
            entry_source.append(sid)
            entry_target_start.append(len(target_ids))
            entry_target_len.append(len(words))
            target_ids.extend([add_word(word) for word in words])
            entry_alignment.append(alignments.add(alignment))
            flat_scores.extend(values)
        self.alignments = alignments.words
        scores = np.frombuffer(flat_scores, dtype=np.float64).reshape(-1, max(self.num_scores, 1))
        # Group the entries of each source phrase (stable: file order within a source is kept).
        order = np.argsort(np.frombuffer(entry_source, dtype=np.int32), kind="stable")
        self.scores = (scores if log_scores else log_probabilities(scores))[order].astype(np.float32)
        self.target_start, self.target_len, self.target_ids = regroup_targets(
            np.frombuffer(entry_target_start, dtype=np.int64), np.frombuffer(entry_target_len, dtype=np.int32),
            np.frombuffer(target_ids, dtype=np.int32), order)
        self.alignment_id = np.frombuffer(entry_alignment, dtype=np.int32)[order]
        counts = np.bincount(np.frombuffer(entry_source, dtype=np.int32), minlength=len(self.sources))
        self.block_start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

    def __len__(self) -> int:
        return len(self.target_start)

    def lookup(self, source: str) -> list[PhraseEntry]:
        """All target sides of ``source`` in file order; empty if the phrase is not in the table."""
        sid = self.sources.get(source)
        if sid is None:
            return []
        first, last = int(self.block_start[sid]), int(self.block_start[sid + 1])
        starts = self.target_start[first:last].tolist()
        lengths = self.target_len[first:last].tolist()
        alignment_ids = self.alignment_id[first:last].tolist()
        scores = self.scores[first:last].astype(np.float64)
        words, alignments = self.target_words, self.alignments
        base = starts[0]  # a source's target words are contiguous in target_ids
        block = [words[i] for i in self.target_ids[base:starts[-1] + lengths[-1]].tolist()]
        return [PhraseEntry(tuple(block[start - base:start - base + length]), scores[k], alignments[alignment])
                for k, (start, length, alignment) in enumerate(zip(starts, lengths, alignment_ids))]


def regroup_targets(target_start: np.ndarray, target_len: np.ndarray, target_ids: np.ndarray,
                    rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Entries ``rows`` (in this order) with their target words copied contiguously: (start, len, ids)."""
    lengths = np.ascontiguousarray(target_len[rows], dtype=np.int32)
    starts = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    positions = np.repeat(target_start[rows] - starts[:-1], lengths) + np.arange(starts[-1], dtype=np.int64)
    return starts[:-1], lengths, np.ascontiguousarray(target_ids[positions], dtype=np.int32)
