"""Moses lexicalized reordering tables: ``src ||| tgt ||| p1 ... pK`` (or ``src ||| p1 ... pK``).

``fe`` tables are keyed by the phrase pair, ``f`` tables by the source phrase alone. The
probabilities are logged on load and floored at -100, as Moses does. A key given twice takes its
last line's scores (Moses' table is a map assigned line by line). The keys are one string blob with
a hash index (:class:`pysmt._core.StringIndex`: a dict of a news table's keys took 150 MB), which
the compiled reordering twin reads too (:class:`pysmt._core.ReorderingTableView`).

A folder written by ``pysmt binarize`` (:mod:`pysmt.models.binary_table`) holds the same scores,
memory-mapped, with the keys sorted for binary search.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from pysmt._core import ReorderingTableView, StringIndex
from pysmt.errors import PysmtError, at_line
from pysmt.files.textio import read_lines, require_file
from pysmt.models.binary_table import load_reordering_table, reordering_table_header
from pysmt.models.phrase_table import first_fields, parse_scores, split_fields
from pysmt.models.scores import log_probabilities


def reordering_key(source: str, target: str | None) -> str:
    """The lookup key of a phrase pair (``target=None`` for source-only tables)."""
    return source if target is None else f"{source} ||| {target}"


def reordering_entries(path: Path, num_scores: int, source_only: bool) -> Iterator[tuple[int, str, list[float]]]:
    """``(line_no, key, probabilities)`` of each line of a text table, checked (errors name file and line)."""
    key_fields = 1 if source_only else 2
    for line_no, line in read_lines(path, progress=f"load {path.name}"):
        if not line.strip():
            continue
        fields = split_fields(line, path, line_no, key_fields + 1)
        scores = parse_scores(fields[key_fields], path, line_no, num_scores)
        if min(scores) < 0:
            raise at_line(path, line_no, "negative probability")
        source = " ".join(fields[0].split())
        yield line_no, reordering_key(source, None if source_only else " ".join(fields[1].split())), scores


def check_reordering_table(path: str | Path, num_scores: int, source_only: bool) -> None:
    """What can be known of a table in milliseconds, before any table loads (as
    :func:`~pysmt.models.phrase_table.check_phrase_table`): a binary one holds what the model needs; a text one's
    first line has the model's key fields and number of scores (a phrase table given instead is found here)."""
    path = require_file(path, folder_ok=True)
    if path.is_dir():
        reordering_table_header(path, num_scores, source_only)
        return
    key_fields = 1 if source_only else 2
    fields = first_fields(path, key_fields + 1)
    if fields is not None and len(fields[key_fields].split()) != num_scores:
        keys = "source phrase" if source_only else "phrase pair"
        raise PysmtError(
            f"{path}: its first line has {len(fields[key_fields].split())} scores in field {key_fields + 1}, but the "
            f"feature's model needs {num_scores} per {keys}: not this model's reordering table"
        )


class ReorderingTable:
    """A lexicalized reordering table; ``lookup`` gives the logged scores of a pair, or None.

    ``path`` is a text or gzip table or a binary table folder (``pysmt binarize``) made for the
    same ``num_scores`` and ``source_only``; ``rows`` maps a key to its row of ``scores`` (a
    :class:`~pysmt._core.StringIndex`: ``get``, ``in``, ``len``, iteration); ``view`` is the table
    as the compiled twin reads it.
    """

    rows: StringIndex

    def __init__(self, path: str | Path, *, num_scores: int, source_only: bool = False) -> None:
        self.path = Path(path)
        self.num_scores = num_scores
        self.source_only = source_only
        if self.path.is_dir():
            self.__dict__.update(load_reordering_table(self.path, num_scores, source_only))
        else:
            self.rows = StringIndex()
            values = array("d")
            add = self.rows.add
            for _, key, scores in reordering_entries(self.path, num_scores, source_only):
                row = add(key)
                if row * num_scores < len(values):  # a key given again: its last line's scores
                    values[row * num_scores : (row + 1) * num_scores] = array("d", scores)
                else:
                    values.extend(scores)
            matrix = np.frombuffer(values, dtype=np.float64).reshape(-1, num_scores)
            self.scores = log_probabilities(matrix).astype(np.float64)
        self.view = ReorderingTableView(keys=self.rows, scores=self.scores)

    def __len__(self) -> int:
        return len(self.rows)

    def lookup(self, source: str, target: str) -> tuple[float, ...] | None:
        """The logged scores for a phrase pair, or None when the table has no entry for it."""
        row = self.rows.find(reordering_key(source, None if self.source_only else target))
        return None if row < 0 else tuple(self.scores[row].tolist())
