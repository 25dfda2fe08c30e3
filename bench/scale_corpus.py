"""A preset's bitext at another size, to measure how training scales (``bench/train.py --corpus``).

    python bench/scale_corpus.py --out runs/scale/news-25 --fraction 0.25   # every 4th pair
    python bench/scale_corpus.py --out runs/scale/news-400 --copies 4       # 4x the pairs, 4x the distinct pairs

A fraction keeps every k-th pair of the preset's corpora (one stratified slice of the same mixture).
Copies repeat the whole bitext with the words of copy k (k >= 1) marked: every token that starts
with a letter gets the prefix ``xq`` plus the copy's letter (``xqbhouse``), which tokenization and
truecasing leave whole, so the copies share no phrase pair and the corpus has about ``copies``
times the distinct pairs, as a larger corpus would. Writes ``OUT.en`` and ``OUT.fr``.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from pysmt.training.options import PRESETS

ROOT = Path(__file__).resolve().parents[1]

WORD = re.compile(r"(?<!\S)(?=[^\W\d_])")  # the start of a token that starts with a letter


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="prefix of the two files to write")
    parser.add_argument("--preset", default="news")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--fraction", type=float, default=1.0)
    parser.add_argument("--copies", type=int, default=1)
    args = parser.parse_args()
    every = round(1 / args.fraction)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for lang in ("en", "fr"):
        lines = [
            line
            for prefix in PRESETS[args.preset]
            for line in (args.data / f"{prefix}.{lang}").read_text(encoding="utf-8").splitlines()
        ]
        with open(f"{args.out}.{lang}", "w", encoding="utf-8") as out:
            for copy in range(args.copies):
                mark = f"xq{'abcdefghijklmnopqrstuvwyz'[copy]}" if copy else ""
                for line in lines[::every]:
                    out.write((WORD.sub(mark, line) if mark else line) + "\n")


if __name__ == "__main__":
    main()
