"""Shared fixtures: tiny hand-made Moses systems whose scores can be computed by hand."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
LN10 = math.log(10)

#: A bigram LM over x, y, z with round log10 numbers (so scores are easy to compute by hand).
TINY_ARPA = """\\data\\
ngram 1=6
ngram 2=5

\\1-grams:
-99\t<s>\t-0.3
-0.5\t</s>
-1.0\t<unk>
-0.6\tx\t-0.2
-0.7\ty\t-0.1
-0.9\tz\t-0.25

\\2-grams:
-0.2\t<s> x
-0.3\tx y
-0.25\ty z
-0.4\tz </s>
-0.35\ty x

\\end\\
"""

TINY_PHRASES = """a ||| x ||| 0.5 0.5 ||| 0-0
a ||| y ||| 0.25 0.25 ||| 0-0
b ||| y ||| 0.5 0.4 ||| 0-0
a b ||| x y ||| 0.3 0.2 ||| 0-0 1-1
c ||| z ||| 0.9 0.9 ||| 0-0
b c ||| z x ||| 0.1 0.1 ||| 0-1 1-0
"""

TINY_REORDERING = """a ||| x ||| 0.5 0.25 0.25 0.6 0.2 0.2
b ||| y ||| 0.4 0.4 0.2 0.5 0.25 0.25
c ||| z ||| 0.8 0.1 0.1 0.7 0.1 0.2
a b ||| x y ||| 0.5 0.3 0.2 0.5 0.3 0.2
"""


def write_moses_system(directory: Path, *, phrases: str = TINY_PHRASES, reordering: str | None = TINY_REORDERING,
                       arpa: str = TINY_ARPA, weights: dict[str, str] | None = None, extra: str = "") -> Path:
    """Write a tiny Moses system (moses.ini and its models) and return the ini's path."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "phrases.txt").write_text(phrases, encoding="utf-8")
    (directory / "lm.arpa").write_text(arpa, encoding="utf-8")
    num_tm = len(phrases.splitlines()[0].split("|||")[2].split())
    lines = ["[feature]", "KENLM order=2 path=lm.arpa", "Distortion", "WordPenalty", "UnknownWordPenalty",
             f"PhraseDictionaryMemory path=phrases.txt num-features={num_tm} table-limit=20"]
    w = {"KENLM0": "0.5", "Distortion0": "0.3", "WordPenalty0": "-1", "PhraseDictionaryMemory0": " ".join(["0.2"] * num_tm)}
    if reordering is not None:
        (directory / "reordering.txt").write_text(reordering, encoding="utf-8")
        lines.insert(3, "LexicalReordering type=msd-bidirectional-fe num-features=6 path=reordering.txt")
        w["LexicalReordering0"] = "0.3 0.3 0.3 0.3 0.3 0.3"
    w.update(weights or {})
    lines += ["", "[weight]"] + [f"{name}= {value}" for name, value in w.items()]
    ini = directory / "moses.ini"
    ini.write_text("\n".join(lines) + "\n" + extra, encoding="utf-8")
    return ini


@pytest.fixture
def tiny_system(tmp_path: Path) -> Path:
    return write_moses_system(tmp_path / "system")


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data, skipping the test when the data is not there."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not available")
    return path
