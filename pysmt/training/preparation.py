"""Preparing a training corpus as the Moses baseline does: a truecaser trained on the corpus, every
line normalized, tokenized and truecased (:class:`~pysmt.text_processing.TextProcessor`, the same
preparation ``pysmt decode`` applies to raw input) in worker processes, and cleaning.
"""

from __future__ import annotations

import unicodedata
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain, islice
from pathlib import Path

from sacremoses import MosesTruecaser

from pysmt.files.textio import atomic_path
from pysmt.running.parallel import ordered_results, worker_pool
from pysmt.text_processing import TextProcessor, unescape_pipes


def train_truecaser(tokenized: Iterable[str], model_path: Path) -> None:
    """Train a Moses truecase model on tokenized text, read line by line, and save it in Moses' format.

    The counting is sacremoses' own (``learn_truecase_weights``, then its Moses-format writer), done
    here a line at a time: its ``train`` holds every token's weight of the whole corpus at once.
    """
    truecaser = MosesTruecaser()
    casing: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for line in tokenized:
        for lowercase, surface, weight in truecaser.learn_truecase_weights(line.split()):
            casing[lowercase][surface] += weight
    with atomic_path(model_path) as tmp:
        truecaser._save_model_from_casing(casing, str(tmp))


_METHOD = None  # the bound TextProcessor method a worker process applies


def _init_worker(lang: str, truecase_model: str | None, tokenize: bool, mode: str) -> None:
    global _METHOD
    _METHOD = getattr(TextProcessor(lang, truecase_model, tokenize), mode)


def _apply(lines: list[str]) -> list[str]:
    return [_METHOD(line) for line in lines]  # type: ignore[misc]


def process_lines(
    lines: Iterable[str],
    lang: str,
    *,
    truecase_model: Path | None = None,
    tokenize: bool = True,
    mode: str = "tokens",
    processes: int = 2,
    chunk: int = 2000,
) -> Iterator[str]:
    """Apply ``TextProcessor.<mode>`` (tokens, truecase or prepare) to every line, in order, on several
    processes; ``lines`` are read as the workers need them, so a file streams through in bounded memory."""
    source = iter(lines)
    chunks = iter(lambda: list(islice(source, chunk)), [])
    first = list(islice(chunks, 2))
    args = (lang, str(truecase_model) if truecase_model else None, tokenize, mode)
    if processes <= 1 or len(first) <= 1:
        _init_worker(*args)
        for part in chain(first, chunks):
            yield from _apply(part)
        return
    with worker_pool(processes, _init_worker, args) as pool:
        for part in ordered_results(pool, _apply, chain(first, chunks), 2 * processes):
            yield from part


def is_punctuation_only(tokens: list[str]) -> bool:
    return all(all(unicodedata.category(ch)[0] in "PS" for ch in unescape_pipes(t)) for t in tokens)


@dataclass
class CleaningReport:
    """How many sentence pairs cleaning kept and why it dropped the others."""

    kept: int = 0
    dropped: Counter = field(default_factory=Counter)

    def summary(self) -> str:
        reasons = ", ".join(f"{n:,} {why}" for why, n in sorted(self.dropped.items())) or "none"
        return f"kept {self.kept:,} pairs; dropped: {reasons}"


def keep_pair(source: str, target: str, max_length: int = 80, max_ratio: float = 9.0) -> str | None:
    """None to keep a pair, else why it is dropped (Moses' clean-corpus-n rules, plus punctuation-only)."""
    src, tgt = source.split(), target.split()
    if not src or not tgt:
        return "empty"
    if len(src) > max_length or len(tgt) > max_length:
        return f"longer than {max_length} tokens"
    if len(src) / len(tgt) > max_ratio or len(tgt) / len(src) > max_ratio:
        return f"length ratio over {max_ratio:g}"
    if is_punctuation_only(src) or is_punctuation_only(tgt):
        return "punctuation only"
    return None
