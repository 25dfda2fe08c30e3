"""Moses n-best lists as MERT sees them: feature vectors with BLEU statistics, pooled across iterations.

A line is ``id ||| words ||| Label0= v1 v2 Label1= v ... ||| total`` (more fields may follow).
The tuner knows features only through these labels: every line must carry the same labels with
the same number of values, so a plugin's scores are tuned like the built-in ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pysmt.errors import PysmtError, at_line
from pysmt.files.formats import Labels, format_labels, parse_features
from pysmt.files.textio import read_lines
from tuning.bleu import BleuStatistics


@dataclass
class NbestEntry:
    sentence: int
    words: str
    features: tuple[float, ...]


def read_nbest(path: Path, sentences: int) -> tuple[Labels, list[NbestEntry]]:
    """All entries of an n-best list, checking ids and that every line has the same features."""
    labels: Labels | None = None
    entries = []
    for line_no, line in read_lines(path):
        fields = line.split(" ||| ")
        if len(fields) < 4:
            raise at_line(path, line_no, "expected 'id ||| words ||| features ||| total'")
        try:
            sentence = int(fields[0])
            line_labels, values = parse_features(fields[2])
        except ValueError as err:
            raise at_line(path, line_no, f"bad n-best line ({err})") from None
        if not 0 <= sentence < sentences:
            raise at_line(path, line_no, f"sentence id {sentence} outside the dev set of {sentences} sentences")
        if labels is None:
            labels = line_labels
        elif line_labels != labels:
            raise at_line(
                path,
                line_no,
                f"features {format_labels(line_labels)} differ from the first line's {format_labels(labels)}",
            )
        entries.append(NbestEntry(sentence, fields[1].strip(), tuple(values)))
    if labels is None:
        raise PysmtError(f"{path}: empty n-best list")
    return labels, entries


@dataclass
class NbestPool:
    """The distinct candidates of every dev sentence over all iterations, with their BLEU statistics.

    ``postprocess`` turns a hypothesis' model tokens into the text BLEU is computed on (the
    system's detruecasing and detokenization), so the statistics match sacrebleu on real output.
    Post-processing and BLEU statistics are most of the time :meth:`add` takes, and a 100-best list
    repeats a text under different derivations (on newstest2012, 300,000 candidates held 78,000
    distinct texts), so the statistics are kept per distinct text and computed once.
    """

    scorer: BleuStatistics
    postprocess: Callable[[str], str]
    labels: Labels | None = None
    seen: list[dict[tuple[str, tuple[float, ...]], int]] = field(default_factory=list)
    features: list[list[tuple[float, ...]]] = field(default_factory=list)
    stats: list[list[np.ndarray]] = field(default_factory=list)
    text_stats: list[dict[str, np.ndarray]] = field(default_factory=list)

    def __post_init__(self) -> None:
        n = len(self.scorer)
        self.seen, self.features, self.stats = [{} for _ in range(n)], [[] for _ in range(n)], [[] for _ in range(n)]
        self.text_stats = [{} for _ in range(n)]

    def add(self, path: Path) -> int:
        """Merge an n-best list into the pool; return how many candidates were new."""
        labels, entries = read_nbest(path, len(self.scorer))
        if self.labels is None:
            self.labels = labels
        elif labels != self.labels:
            raise PysmtError(
                f"{path}: features {format_labels(labels)} differ from earlier lists' {format_labels(self.labels)}"
            )
        new = 0
        for entry in entries:
            key = (entry.words, entry.features)
            seen = self.seen[entry.sentence]
            if key in seen:
                continue
            seen[key] = len(seen)
            self.features[entry.sentence].append(entry.features)
            self.stats[entry.sentence].append(self.text_statistics(entry.sentence, entry.words))
            new += 1
        return new

    def text_statistics(self, sentence: int, words: str) -> np.ndarray:
        """The BLEU statistics of one hypothesis text, computed the first time it is seen."""
        known = self.text_stats[sentence]
        if words not in known:
            known[words] = self.scorer(sentence, self.postprocess(words))
        return known[words]

    def arrays(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """(features, stats) per sentence, as :func:`tuning.optimize` takes them."""
        missing = [s for s, f in enumerate(self.features) if not f]
        if missing:
            raise PysmtError(
                f"no n-best entries for dev sentence(s) {', '.join(str(s) for s in missing[:5])}"
                f"{' ...' if len(missing) > 5 else ''}"
            )
        return [np.array(f, dtype=np.float64) for f in self.features], [np.array(s) for s in self.stats]

    def __len__(self) -> int:
        return sum(len(f) for f in self.features)
