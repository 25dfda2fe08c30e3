"""Scoring within a memory budget (``pysmt train --memory``): the same tables at any budget."""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pysmt.training.buckets as buckets
from pysmt.memory_budget import parse_size
from pysmt.training.buckets import bucket_count, score_occurrences
from pysmt.training.corpus import AlignedCorpus
from pysmt.training.extraction import OCCURRENCE, extract_corpus, extracted_parts, write_occurrences
from pysmt.training.lexical import estimate_lexical_tables
from pysmt.training.scoring import count_pairs, write_tables


def random_corpus(folder: Path, sentences: int = 400, seed: int = 0) -> AlignedCorpus:
    """Sentences over a small vocabulary (so phrases repeat, with several alignments and ties), aligned
    near the diagonal, with unaligned words."""
    rng = np.random.default_rng(seed)
    src, tgt, align = [], [], []
    for _ in range(sentences):
        n, m = int(rng.integers(1, 9)), int(rng.integers(1, 9))
        src.append(" ".join(f"s{w}" for w in rng.integers(0, 12, n)))
        tgt.append(" ".join(f"t{w}" for w in rng.integers(0, 12, m)))
        points = {(i, min(m - 1, round(i * m / n) + int(rng.integers(-1, 2)))) for i in range(n) if rng.random() < 0.8}
        align.append(" ".join(f"{i}-{max(j, 0)}" for i, j in sorted(points)))
    for name, lines in (("f", src), ("e", tgt), ("a", align)):
        (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return AlignedCorpus.load(folder / "f", folder / "e", folder / "a")


@pytest.mark.parametrize("budget, processes", [(10_000, 1), (3_000, 2), (1 << 30, 2)])
def test_scoring_in_buckets_writes_the_tables_of_scoring_in_memory(tmp_path, monkeypatch, budget, processes):
    corpus = random_corpus(tmp_path)
    lexical = estimate_lexical_tables(corpus)
    instances = extract_corpus(corpus.sources, corpus.targets, corpus.alignments, processes=1)
    n = write_tables(instances, corpus, count_pairs(instances, corpus), lexical, tmp_path / "pt", tmp_path / "rt", 1)
    occurrences = tmp_path / "extract.occurrences"
    with open(occurrences, "wb") as out:
        assert write_occurrences(extracted_parts(corpus.sources, corpus.targets, corpus.alignments), out) == len(instances)
    assert occurrences.stat().st_size == len(instances) * OCCURRENCE.itemsize
    monkeypatch.setattr(buckets, "CHUNK", 500)  # several chunks, and target tables merged on the way
    assert bucket_count(len(instances), budget) == (1 if budget > 1e6 else -(-len(instances) * 200 // int(0.35 * budget)))
    pt, rt = tmp_path / "bucketed.pt.gz", tmp_path / "bucketed.rt.gz"
    encoded = lexical.encode(corpus.src_vocab, corpus.tgt_vocab)
    assert score_occurrences(occurrences, corpus, encoded, pt, rt, budget, processes) == n
    with gzip.open(pt, "rb") as a, gzip.open(rt, "rb") as b:
        assert a.read() == (tmp_path / "pt").read_bytes() and b.read() == (tmp_path / "rt").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["a", "e", "f", "extract.occurrences", "pt", "rt",
                                                                 pt.name, rt.name])  # no temporary file left


@pytest.mark.parametrize("text, size", [("1G", 1 << 30), ("800M", 800 << 20), ("1.5g", 3 << 29), ("300MB", 300 << 20),
                                        (str(1 << 30), 1 << 30)])
def test_memory_sizes(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text, message", [("lots", "is not a size"), ("10M", "below the smallest budget, 200M")])
def test_a_bad_memory_size_is_one_line_naming_the_option(tmp_path, text, message):
    proc = subprocess.run([sys.executable, "-m", "pysmt.cli", "train", "--corpus", str(tmp_path / "c"), "--out",
                           str(tmp_path / "out"), "--memory", text], capture_output=True, text=True)
    assert proc.returncode == 2 and "--memory" in proc.stderr and message in proc.stderr
    assert "Traceback" not in proc.stderr
