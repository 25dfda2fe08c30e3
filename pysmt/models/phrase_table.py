"""Moses phrase tables (``src ||| tgt ||| scores [||| alignment [||| counts]]``), text or gzip, or binarized.

The table is held compactly, as typed arrays the compiled option builder reads too
(:class:`pysmt._core.PhraseTableView`): target words as int32 ids in one flat array, scores in one
float32 matrix, and the source phrases, target words and alignments each as one string blob with a
hash index (:class:`pysmt._core.StringIndex`; a dict of a table's source phrases took several times
their size). Entries of a source phrase need not be contiguous in the file; they are grouped after
loading.

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

from pysmt._core import PhraseTableView, StringIndex
from pysmt.errors import at_line
from pysmt.files.formats import ALIGNMENT
from pysmt.files.textio import read_lines, require_file
from pysmt.models.binary_table import load_phrase_table, phrase_table_header
from pysmt.models.scores import log_probabilities

FIELD_SEPARATOR = "|||"


@dataclass(frozen=True, slots=True)
class PhraseEntry:
    """One target side of a source phrase, with its (logged) scores and its row in the table."""

    target: tuple[str, ...]
    scores: np.ndarray
    alignment: str
    row: int


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
    alignments: set[str] = set()  # those seen and found well formed (a table holds few distinct ones)
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
        alignment = fields[3] if len(fields) > 3 else ""
        if alignment not in alignments:
            if not ALIGNMENT.fullmatch(alignment):
                raise at_line(
                    path, line_no, f"alignment {alignment.strip()[:60]!r} is not a list of word pairs (0-0 1-2 ...)"
                )
            alignments.add(alignment)
        yield line_no, " ".join(source.split()), target.split(), alignment, values


def check_phrase_table(path: str | Path, log_scores: bool) -> int | None:
    """What can be known of a table in milliseconds, before any table loads, and its number of scores (None: an
    empty table, or a binary one too old to say): a text table is a regular file whose first line has a phrase
    table's fields (an LM given instead is found here, a reordering table by its number of scores); a binary one
    is a phrase table made with ``log_scores``."""
    path = require_file(path, folder_ok=True)
    if path.is_dir():
        found = phrase_table_header(path, log_scores).get("num_scores")
        return found if isinstance(found, int) else None
    fields = first_fields(path, 3)
    return None if fields is None else len(fields[2].split())


def first_fields(path: Path, min_fields: int) -> list[str] | None:
    """The ``|||``-separated fields of a text table's first line that is not blank (None: no such line), at least
    ``min_fields`` of them: a table's shape, read in milliseconds (its values are checked when it loads)."""
    first = next(((line_no, line) for line_no, line in read_lines(path) if line.strip()), None)  # (file closed here)
    return None if first is None else split_fields(first[1], path, first[0], min_fields)


class PhraseTable:
    """A Moses phrase table in memory, looked up by source phrase (words joined by single spaces).

    ``log_scores=False`` (Moses' convention) logs the probabilities on load, floored at -100;
    ``log_scores=True`` takes the values as they are, for tables that already store log scores.

    ``path`` may also be a binary table folder (``pysmt binarize``); it must have been made with the
    same ``log_scores``. Either way the table offers ``lookup``, ``sources`` (source phrase to id, a
    :class:`~pysmt._core.StringIndex`: ``get``, ``in``, ``len``, iteration), ``vocabulary`` and
    ``alignments`` (strings by id), ``num_scores``, ``max_source_length``, ``len``, and ``view``, the
    arrays as the compiled option builder reads them.
    """

    sources: StringIndex
    vocabulary: StringIndex
    alignments: StringIndex

    def __init__(self, path: str | Path, *, log_scores: bool = False) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            self.__dict__.update(load_phrase_table(self.path, log_scores))
        else:
            self.load_text(log_scores)
        self.view = PhraseTableView(
            sources=self.sources,
            vocabulary=self.vocabulary,
            alignments=self.alignments,
            block_start=self.block_start,
            target_start=self.target_start,
            target_len=self.target_len,
            target_ids=self.target_ids,
            scores=np.ascontiguousarray(self.scores),
            alignment_id=self.alignment_id,
        )

    def load_text(self, log_scores: bool) -> None:
        self.sources, self.vocabulary, self.alignments = StringIndex(), StringIndex(), StringIndex()
        entry_source = array("i")
        entry_target_start = array("q")
        entry_target_len = array("i")
        entry_alignment = array("i")
        target_ids = array("i")
        flat_scores = array("d")
        self.num_scores = 0
        self.max_source_length = 0
        add_source, add_words, add_alignment = self.sources.add, self.vocabulary.add_all, self.alignments.add
        for _, source, words, alignment, values in phrase_entries(self.path, log_scores):
            self.num_scores = len(values)
            sid = add_source(source)
            if sid == len(self.sources) - 1:
                self.max_source_length = max(self.max_source_length, source.count(" ") + 1)
            entry_source.append(sid)
            entry_target_start.append(len(target_ids))
            entry_target_len.append(len(words))
            target_ids.extend(add_words(words))
            entry_alignment.append(add_alignment(alignment))
            flat_scores.extend(values)
        scores = np.frombuffer(flat_scores, dtype=np.float64).reshape(-1, max(self.num_scores, 1))
        # Group the entries of each source phrase (stable: file order within a source is kept).
        order = np.argsort(np.frombuffer(entry_source, dtype=np.int32), kind="stable")
        self.scores = (scores if log_scores else log_probabilities(scores))[order].astype(np.float32)
        self.target_start, self.target_len, self.target_ids = regroup_targets(
            np.frombuffer(entry_target_start, dtype=np.int64),
            np.frombuffer(entry_target_len, dtype=np.int32),
            np.frombuffer(target_ids, dtype=np.int32),
            order,
        )
        self.alignment_id = np.frombuffer(entry_alignment, dtype=np.int32)[order]
        counts = np.bincount(np.frombuffer(entry_source, dtype=np.int32), minlength=len(self.sources))
        self.block_start = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)

    def __len__(self) -> int:
        return len(self.target_start)

    def lookup(self, source: str) -> list[PhraseEntry]:
        """All target sides of ``source`` in file order; empty if the phrase is not in the table."""
        sid = self.sources.find(source)
        if sid < 0:
            return []
        first, last = int(self.block_start[sid]), int(self.block_start[sid + 1])
        return [self.entry(k) for k in range(first, last)]

    def entry(self, k: int) -> PhraseEntry:
        """Entry ``k`` (a row of the table's arrays), its scores as float64."""
        start, length = int(self.target_start[k]), int(self.target_len[k])
        words = self.vocabulary
        return PhraseEntry(
            tuple(words[i] for i in self.target_ids[start : start + length].tolist()),
            self.scores[k].astype(np.float64),
            self.alignments[int(self.alignment_id[k])],
            k,
        )


def regroup_targets(
    target_start: np.ndarray, target_len: np.ndarray, target_ids: np.ndarray, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Entries ``rows`` (in this order) with their target words copied contiguously: (start, len, ids)."""
    lengths = np.ascontiguousarray(target_len[rows], dtype=np.int32)
    starts = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    positions = np.repeat(target_start[rows] - starts[:-1], lengths) + np.arange(starts[-1], dtype=np.int64)
    return starts[:-1], lengths, np.ascontiguousarray(target_ids[positions], dtype=np.int32)
