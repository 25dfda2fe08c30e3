"""Sampling, the seeded table sample, and the analysis commands (the paper's Tables 2-3, Figures 3-5)."""

import math
import random
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch

from pysmt.testing import run_pysmt
from rnn_feature.analysis import ranked, top_phrases
from rnn_feature.data import Ragged
from rnn_feature.hyperparameters import preset
from rnn_feature.model import EncoderDecoder
from rnn_feature.scoring import score_phrases
from rnn_feature.table_sample import Reservoir, SampleSizes, named_sources, sample_table
from rnn_feature.training import TrainingLimits, train
from rnn_feature.vocabulary import EOS_ID, UNK_ID, Shortlist
from rnn_testing import TINY, toy_table

SMALL = preset("default", hidden=4, embedding=3, maxout=2, output_rank=2, source_shortlist=6, target_shortlist=5)


def randomized(model, seed=0, scale=0.8):
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=generator) * scale)
    return model


def test_samples_follow_the_model_distribution_without_unk():
    model = randomized(EncoderDecoder(SMALL, 6, 5)).double()
    n = 4000
    src, src_len = Ragged.from_lists([[2, 3]] * n).padded(np.arange(n))
    words, lengths = model.sample(src, src_len, max_length=3, generator=torch.Generator().manual_seed(0))
    assert words.shape == (n, 3) and ((lengths >= -1) & (lengths <= 3)).all()
    first = [int(row[0]) if k != 0 else EOS_ID for row, k in zip(words, lengths)]  # k = -1: no end yet
    assert UNK_ID not in first and all(UNK_ID not in row[:k].tolist() for row, k in zip(words, lengths) if k > 0)
    # the first word's distribution: the decoder's first softmax without [UNK], renormalized
    c = model.encode(src[:1], src_len[:1])
    h, context = model.decoder_start(c)
    previous = torch.zeros(1, SMALL.embedding, dtype=torch.float64)
    logits = model.output_logits(model.decoder_step(h, model.decoder_input(previous), context), previous, context[3])
    logits[0, UNK_ID] = -math.inf
    expected = torch.softmax(logits, dim=-1)[0].detach().numpy()
    observed = Counter(first)
    for word in range(5):
        assert observed[word] / n == pytest.approx(expected[word], abs=0.03), word
    again, _ = model.sample(src, src_len, max_length=3, generator=torch.Generator().manual_seed(0))
    assert torch.equal(words, again)  # seeded


def test_reservoir_is_uniform_and_seeded():
    hits = Counter()
    for seed in range(2000):
        reservoir = Reservoir(3, random.Random(seed))
        for item in range(10):
            reservoir.offer(lambda item=item: item)
        hits.update(reservoir.items)
        assert len(reservoir.items) == 3 and reservoir.seen == 10
    assert all(abs(hits[item] / 2000 - 0.3) < 0.05 for item in range(10))


def write_table(path: Path) -> Path:
    lines = [  # source ||| target ||| p(f|e) lex(f|e) p(e|f) lex(e|f) ||| alignment ||| count(e) count(f) count(f,e)
        "a b ||| x ||| 0.1 0.1 0.5 0.1 ||| 0-0 ||| 4 40 20",
        "a b c d ||| w x y z ||| 0.1 0.1 0.2 0.1 ||| 0-0 ||| 9 50 10",
        "a b c d ||| x y ||| 0.1 0.1 0.5 0.1 ||| 0-0 ||| 9 50 25",
        "a b c d ||| y ||| 0.1 0.1 0.3 0.1 ||| 0-0 ||| 9 50 15",
        "b c d e ||| z ||| 0.1 0.1 1 0.1 ||| 0-0 ||| 1 1 1",
        "c d e f ||| y y ||| 0.1 0.1 0.5 0.1 ||| 0-0 ||| 2 5 2",
        "c d e f ||| z z ||| 0.1 0.1 0.5 0.1 ||| 0-0 ||| 2 5 2",
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_table_sample_groups_sources_by_count_and_length(tmp_path):
    table = write_table(tmp_path / "pt.txt")
    sample = sample_table(
        table, SampleSizes(frequent=5, rare=5, pairs=100, long_phrases=100, frequent_min=20, rare_max=1)
    )
    assert [p.text for p in sample.frequent] == ["a b c d"]  # "a b" is frequent but short
    assert sample.frequent[0].targets == ["w x y z", "x y", "y"]
    assert sample.frequent[0].tm == pytest.approx([math.log(0.2), math.log(0.5), math.log(0.3)])
    assert sample.frequent[0].count == 50
    assert [p.text for p in sample.rare] == ["b c d e"]  # "c d e f" (count 5) is neither
    assert len(sample.pairs) == 7 and sample.sources == 4 and sample.long_sources == 3
    assert sorted(sample.long_phrases) == ["a b c d", "b c d e", "c d e f"]
    small = sample_table(table, SampleSizes(pairs=3), seed=1)
    assert len(small.pairs) == 3 and small.pairs == sample_table(table, SampleSizes(pairs=3), seed=1).pairs
    named = named_sources(table, ["c d e f", "q r"])
    assert named[0].targets == ["y y", "z z"] and named[1].targets == []


def test_top_phrases_rank_by_each_model(tmp_path):
    table = write_table(tmp_path / "pt.txt")
    model = randomized(EncoderDecoder(SMALL, 6, 5), seed=3)
    source = Shortlist(["[EOS]", "[UNK]", "a", "b", "c", "d"])
    target = Shortlist(["[EOS]", "[UNK]", "x", "y", "z"])
    phrase = named_sources(table, ["a b c d"])[0]
    text = top_phrases(model, source, target, {"Chosen": [phrase]}, k=2)
    row = next(line for line in text.splitlines() if line.startswith("| a b c d"))
    source_cell, tm_cell, rnn_cell = row.strip("| ").split(" | ")
    assert source_cell == "a b c d (50)"
    assert tm_cell == f"x y ({math.log(0.5):.2f})<br>y ({math.log(0.3):.2f})"
    rnn = score_phrases(model, source, target, [("a b c d".split(), t.split()) for t in phrase.targets])
    best = ranked(phrase.targets, rnn.tolist(), 2)
    assert rnn_cell == "<br>".join(f"{t} ({s:.2f})" for t, s in best)
    assert best[0][1] >= best[1][1]


@pytest.mark.slow
def test_analysis_commands_write_markdown_and_png(tmp_path):
    table = toy_table(tmp_path / "pt.gz", n=120)
    train(table, tmp_path / "m", TINY, torch.device("cpu"), TrainingLimits(max_updates=20, valid_every=20))
    common = [
        "--model",
        str(tmp_path / "m"),
        "--phrase-table",
        str(table),
        "--out",
        str(tmp_path / "a"),
        "--device",
        "cpu",
    ]
    selection = ["--min-words", "3", "--frequent-min", "1", "--frequent", "2"]
    for command in (
        ["top-phrases", *selection],
        ["samples", *selection, "--samples", "10"],
        ["scatter", "--pairs", "50"],
        ["maps", "--words", "6"],
    ):
        proc = run_pysmt("rnn", *command, *common)
        assert proc.returncode == 0, proc.stderr
    out = tmp_path / "a"
    assert "| source (count) | translation model | RNN Encoder-Decoder |" in (out / "top-phrases.md").read_text()
    assert (out / "samples.md").read_text().count("\n| ") >= 3  # header, rule, 2 sources
    assert "50 phrase pairs" in (out / "scatter.md").read_text()
    for png in ("scatter.png", "word-embeddings.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
