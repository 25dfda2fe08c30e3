"""RNN Encoder-Decoder scoring throughput: phrase pairs per second, beside what the FLOP count allows.

    python bench/rnn_score.py                                   # both presets on the CPU
    python bench/rnn_score.py --device cuda --pairs 200000      # on a GPU
    python bench/rnn_score.py --phrase-table SYSTEM/phrase-table.gz

Pairs come from a real phrase table (default: the Moses regression-test table in ../shared/data,
so phrase lengths are realistic), scored by a freshly initialized model of each preset with
full-size shortlists: the weights do not change the work. For each preset it prints pairs/s of
:func:`rnn_feature.scoring.score_encoded` (the path both ``pysmt rnn score`` and the ``rnn``
feature use), the model FLOPs per pair (multiply-adds x 2, from the shapes and the pairs'
lengths), the FLOP rate that makes, and the ceiling: the device's dense matrix-product rate
(measured here with one large fp32 matmul) divided by the FLOPs per pair.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from rnn_feature.data import Ragged, read_table
from rnn_feature.hyperparameters import Hyperparameters, preset
from rnn_feature.model import EncoderDecoder
from rnn_feature.scoring import score_encoded

ROOT = Path(__file__).resolve().parents[1]

DEFAULT_TABLE = (
    ROOT.parent / "shared" / "data" / "fixtures" / "moses" / "lexicalized-reordering" / "phrase-table.0-0.gz"
)


def pair_lengths(table: Path, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """Source and target lengths of the table's first ``limit`` pairs."""
    source, target = [], []
    for line in read_table(table):
        source.append(len(line.source))
        target.append(len(line.target))
        if len(source) == limit:
            break
    return np.array(source), np.array(target)


def random_pairs(lengths: np.ndarray, vocabulary: int, rng: np.random.Generator) -> Ragged:
    return Ragged.from_lists([rng.integers(2, vocabulary, n).tolist() for n in lengths])


def flops_per_pair(hp: Hyperparameters, source_len: float, target_len: float, vocabulary: int) -> float:
    """Model FLOPs (2 per multiply-add) of scoring one pair of the given mean lengths."""
    H, E, M, R = hp.hidden, hp.embedding, hp.maxout, hp.output_rank
    encoder_step = 3 * E * H + 3 * H * H  # [W_r; W_z; W] e(x), [U_r; U_z] h, U (r * h)
    once = H * H + H * H + 3 * H * H + 2 * M * H  # V h_N, V' c, [C_r; C_z; C] c, O_c c
    decoder_step = 3 * E * H + 3 * H * H + 2 * M * H + 2 * M * E + M * R + R * vocabulary  # GRU, deep output, G
    steps = target_len + 1  # the words and end-of-sequence
    return 2.0 * (source_len * encoder_step + once + steps * decoder_step)


def matmul_rate(device: torch.device, size: int = 2048, repeats: int = 10) -> float:
    """Dense fp32 matrix-product FLOP/s of the device (the practical ceiling for this model)."""
    a = torch.randn(size, size, device=device)
    b = torch.randn(size, size, device=device)
    a @ b
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeats):
        a @ b
    if device.type == "cuda":
        torch.cuda.synchronize()
    return 2.0 * size**3 * repeats / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--presets", default="default,paper")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--pairs", type=int, default=20_000, help="pairs scored per preset")
    parser.add_argument("--batch-size", type=int, default=512)
    parser.add_argument("--phrase-table", type=Path, default=DEFAULT_TABLE, help="where the pair lengths come from")
    args = parser.parse_args()
    device = torch.device(args.device)
    source_len, target_len = pair_lengths(args.phrase_table, args.pairs)
    rng = np.random.default_rng(0)
    peak = matmul_rate(device)
    print(
        f"device {device} ({torch.get_num_threads()} CPU threads); {len(source_len):,} pairs from "
        f"{args.phrase_table.name}, mean lengths {source_len.mean():.2f} -> {target_len.mean():.2f}; "
        f"fp32 matmul {peak / 1e9:.0f} GFLOP/s"
    )
    print(f"{'preset':<8} {'pairs/s':>9} {'MFLOP/pair':>11} {'GFLOP/s':>8} {'ceiling pairs/s':>16}")
    for name in args.presets.split(","):
        hp = preset(name)
        model = EncoderDecoder(hp, hp.source_shortlist, hp.target_shortlist).to(device).eval()
        source = random_pairs(source_len, hp.source_shortlist, rng)
        target = random_pairs(target_len, hp.target_shortlist, rng)
        warm = min(len(source_len), 2 * args.batch_size)
        score_encoded(model, source.take(np.arange(warm)), target.take(np.arange(warm)), args.batch_size)
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        score_encoded(model, source, target, args.batch_size)  # returns numpy: synchronized
        rate = len(source_len) / (time.perf_counter() - start)
        flops = flops_per_pair(hp, source_len.mean(), target_len.mean(), hp.target_shortlist)
        print(f"{name:<8} {rate:9.0f} {flops / 1e6:11.1f} {rate * flops / 1e9:8.1f} {peak / flops:16.0f}")


if __name__ == "__main__":
    main()
