"""The sentence model's scoring speed on real n-best lists: hypotheses per second, as the rescoring pass runs.

    python bench/sentence_scoring.py --model SYSTEM/sentence --nbest NBEST --source PREPARED_SOURCE [--lines N]

NBEST is a Moses n-best list (``pysmt decode --nbest FILE --nbest-size 200``), PREPARED_SOURCE the decoder's
input as the system prepared it (tokenized, truecased; one line per sentence id). Each sentence's entries are
scored together by :class:`rnn_feature.sentence.scoring.SentenceScorer` (the source encoded once, the distinct
hypotheses through a prefix tree whose every prefix is scored once, in batches), exactly what the ``sentence``
feature does inside ``decode``.
Prints entries, distinct hypotheses, seconds (wall and CPU), both rates, and the minutes the whole list takes.
"""

from __future__ import annotations

import argparse
import time
from itertools import groupby
from pathlib import Path

import torch

from pysmt.rescoring import read_entries
from rnn_feature.sentence.scoring import SentenceScorer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--nbest", type=Path, required=True)
    parser.add_argument("--source", type=Path, required=True)
    parser.add_argument("--lines", type=int, default=None, help="score only the first N sentences")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    sources = args.source.read_text(encoding="utf-8").splitlines()
    scorer = SentenceScorer(args.model, args.device, args.batch_size)
    entries = distinct = sentences = 0
    start, cpu = time.perf_counter(), time.process_time()
    for index, group in groupby(read_entries(args.nbest), key=lambda entry: entry[0]):
        if args.lines is not None and sentences >= args.lines:
            break
        hypotheses = [tuple(words.split()) for _, words, _, _ in group]
        scorer.score(sources[index].split(), hypotheses)
        entries += len(hypotheses)
        distinct += len(set(hypotheses))
        sentences += 1
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    total_sentences = len({entry[0] for entry in read_entries(args.nbest)})
    print(f"model {args.model} ({scorer.model.hp.preset}), device {args.device}, {args.threads} thread(s)")
    print(f"{sentences:,} sentences, {entries:,} entries, {distinct:,} distinct hypotheses")
    for name, spent in (("wall", seconds), ("CPU", cpu)):  # CPU time: the figure on a machine other jobs share
        print(
            f"{name}: {spent:.1f} s, {entries / spent:,.0f} entries/s, {distinct / spent:,.0f} distinct hypotheses/s; "
            f"the whole list ({total_sentences:,} sentences) {spent / sentences * total_sentences / 60:.1f} min"
        )


if __name__ == "__main__":
    main()
