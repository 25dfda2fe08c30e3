"""Scoring within a memory budget (``pysmt train --memory``): the same tables at any budget."""

from __future__ import annotations

import errno
import gzip
from pathlib import Path

import numpy as np
import pytest

import pysmt.training.buckets as buckets
from pysmt.errors import PysmtError
from pysmt.running.memory_budget import parse_size
from pysmt.testing import one_line_error, run_pysmt
from pysmt.training.buckets import bucket_count, score_occurrences
from pysmt.training.corpus import AlignedCorpus
from pysmt.training.extraction import OCCURRENCE, extract_corpus, extracted_parts, write_occurrences
from pysmt.training.lexical import Lexicon, estimate_lexical_tables
from pysmt.training.options import TrainingOptions
from pysmt.training.pipeline import Pipeline
from pysmt.training.scoring import count_pairs, write_tables
from tests.helpers import slow_cases


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


@pytest.mark.parametrize("budget, processes", [(10_000, 1), (1 << 30, 2), *slow_cases((3_000, 2))])
def test_scoring_in_buckets_writes_the_tables_of_scoring_in_memory(tmp_path, monkeypatch, budget, processes):
    corpus = random_corpus(tmp_path)
    lexical = estimate_lexical_tables(corpus)
    instances = extract_corpus(corpus.sources, corpus.targets, corpus.alignments, processes=1)
    n = write_tables(instances, corpus, count_pairs(instances, corpus), lexical, tmp_path / "pt", tmp_path / "rt", 1)
    occurrences = tmp_path / "extract.occurrences"
    with open(occurrences, "wb") as out:
        parts = extracted_parts(corpus.sources, corpus.targets, corpus.alignments)
        assert write_occurrences(parts, out) == len(instances)
    assert occurrences.stat().st_size == len(instances) * OCCURRENCE.itemsize
    monkeypatch.setattr(buckets, "CHUNK", 500)  # several chunks cut into buckets
    expected = 1 if budget > 1e6 else -(-len(instances) * 200 // int(0.35 * budget))
    assert bucket_count(len(instances), budget) == expected
    pt, rt = tmp_path / "bucketed.pt.gz", tmp_path / "bucketed.rt.gz"
    encoded = lexical.encode(corpus.src_vocab, corpus.tgt_vocab)
    assert score_occurrences(occurrences, corpus, encoded, pt, rt, budget, processes) == n
    with gzip.open(pt, "rb") as a, gzip.open(rt, "rb") as b:
        assert a.read() == (tmp_path / "pt").read_bytes() and b.read() == (tmp_path / "rt").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["a", "e", "f", "extract.occurrences", "pt", "rt", pt.name, rt.name]
    )  # no temporary file left


@pytest.mark.parametrize(
    "text, size",
    [("1G", 1 << 30), ("800M", 800 << 20), ("1.5g", 3 << 29), ("300MB", 300 << 20), (str(1 << 30), 1 << 30)],
)
def test_memory_sizes(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text, message", [("lots", "is not a size"), ("10M", "below the smallest budget, 200M")])
def test_a_bad_memory_size_is_one_line_naming_the_option(tmp_path, text, message):
    proc = run_pysmt("train", "--corpus", tmp_path / "c", "--out", tmp_path / "out", "--memory", text)
    one_line_error(proc, "--memory", message, status=2)


def test_the_lexicon_gives_the_reference_lexical_weights_bit_for_bit(tmp_path):
    """Lexicon.weights (arrays, many pairs at once) against LexicalTables.weights (the definition), on
    random pairs with unaligned words, words linked several times and entries missing from a table."""
    corpus = random_corpus(tmp_path)
    tables = estimate_lexical_tables(corpus)
    for table in (tables.f2e, tables.e2f):  # some entries missing: they count as 1
        for key in list(table)[::7]:
            del table[key]
    lexicon = tables.encode(corpus.src_vocab, corpus.tgt_vocab)
    rng = np.random.default_rng(1)
    n, width = 300, 5
    src = rng.integers(0, len(corpus.src_vocab), (n, width))
    tgt = rng.integers(0, len(corpus.tgt_vocab), (n, width))
    src_len, tgt_len = rng.integers(1, width + 1, n), rng.integers(1, width + 1, n)
    alignments = [
        tuple(
            sorted(
                {
                    (int(rng.integers(0, src_len[i])), int(rng.integers(0, tgt_len[i])))
                    for _ in range(int(rng.integers(0, 6)))
                },
                key=lambda p: (p[1], p[0]),
            )
        )
        for i in range(n)
    ]
    points = np.array([(i, s, t) for i, inside in enumerate(alignments) for s, t in inside], dtype=np.int64)
    f_e, e_f = lexicon.weights(src, src_len, tgt, tgt_len, points)
    words = lambda vocab, ids: [vocab.words[w] for w in ids]  # noqa: E731
    for i in range(n):
        expected = tables.weights(
            words(corpus.src_vocab, src[i, : src_len[i]]), words(corpus.tgt_vocab, tgt[i, : tgt_len[i]]), alignments[i]
        )
        assert (f_e[i], e_f[i]) == expected  # exactly, not approximately


def test_the_lexicon_read_from_files_equals_the_one_encoded_from_tables(tmp_path):
    corpus = random_corpus(tmp_path)
    tables = estimate_lexical_tables(corpus)
    tables.save(tmp_path / "lex.f2e", tmp_path / "lex.e2f")
    read = Lexicon.load(tmp_path / "lex.f2e", tmp_path / "lex.e2f", corpus.src_vocab, corpus.tgt_vocab)
    encoded = tables.encode(corpus.src_vocab, corpus.tgt_vocab)
    for name in ("keys", "f2e", "e2f"):
        assert np.array_equal(getattr(read, name), getattr(encoded, name))
    assert len(read.keys) == len(tables.f2e)


def scored_corpus(tmp_path: Path) -> tuple[AlignedCorpus, Path, Lexicon]:
    corpus = random_corpus(tmp_path)
    occurrences = tmp_path / "extract.occurrences"
    with open(occurrences, "wb") as out:
        write_occurrences(extracted_parts(corpus.sources, corpus.targets, corpus.alignments, processes=1), out)
    return corpus, occurrences, estimate_lexical_tables(corpus).encode(corpus.src_vocab, corpus.tgt_vocab)


@pytest.mark.slow
def test_temporary_files_go_to_the_temp_dir_and_are_removed(tmp_path, monkeypatch):
    corpus, occurrences, lexicon = scored_corpus(tmp_path)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    seen = []
    spill = buckets.spill_buckets
    monkeypatch.setattr(buckets, "spill_buckets", lambda *args: seen.append(args[2]) or spill(*args))
    out = tmp_path / "out"
    out.mkdir()
    score_occurrences(occurrences, corpus, lexicon, out / "pt.gz", out / "rt.gz", 10_000, 1, temp_dir=scratch)
    assert seen[0].parent == scratch and not seen[0].exists() and not any(scratch.iterdir())
    assert sorted(p.name for p in out.iterdir()) == ["pt.gz", "rt.gz"]


@pytest.mark.slow
def test_a_full_disk_is_one_line_and_leaves_no_temporary_file(tmp_path, monkeypatch):
    corpus, occurrences, lexicon = scored_corpus(tmp_path)
    out = tmp_path / "out"
    out.mkdir()

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(buckets, "write_runs", full)
    pipeline = Pipeline(
        TrainingOptions(src_lang="en", tgt_lang="fr", corpora=[tmp_path / "c"], out=out, temp_dir=tmp_path / "scratch")
    )
    monkeypatch.setattr(
        Pipeline,
        "step_score",
        lambda self: score_occurrences(
            occurrences, corpus, lexicon, out / "pt.gz", out / "rt.gz", 10_000, 1, temp_dir=tmp_path / "scratch"
        ),
    )
    (tmp_path / "scratch").mkdir()
    with pytest.raises(PysmtError) as failure:
        pipeline.run_step("score")
    assert str(failure.value) == (
        f"step score: No space left on device; make room in {out} and {tmp_path / 'scratch'} "
        "(or give --temp-dir on a disk with room) and run the same command again to resume"
    )
    assert not any(out.iterdir()) and not any((tmp_path / "scratch").iterdir())
