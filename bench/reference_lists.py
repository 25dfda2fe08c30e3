"""Decode the recorded reference input again and compare the n-best lists with the recorded ones, byte for byte.

    python -m bench.reference_lists                      # both searches, the first 300 lines, 10-best
    python -m bench.reference_lists --search cube --lines 50
    python -m bench.reference_lists -c SYSTEM-bin/pysmt.toml   # the same system binarized

The lists in ``tests/search/data/reference`` were written by the pure-Python search (see its
README); every change to the search and to option building must leave them as they are. The
test suite checks the first lines within a tolerance; this checks every line of the 300, exactly,
as ``pysmt decode --nbest`` writes them. Exit status 1 when a list differs.
"""

from __future__ import annotations

import argparse
import gzip
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "tests" / "search" / "data" / "reference"
SHARED = ROOT.parent / "shared" / "data" / "moses-news"


def decode(config: str, lines: list[str], search: str, size: int, folder: Path) -> list[str]:
    """``pysmt decode``'s n-best list of ``lines`` (prepared input), as written."""
    source = folder / "input.en"
    source.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    out = folder / f"nbest.{search}.txt"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pysmt",
            "decode",
            "-c",
            config,
            "-i",
            str(source),
            "--prepared",
            "--search",
            search,
            "--nbest",
            str(out),
            "--nbest-size",
            str(size),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return out.read_text(encoding="utf-8").splitlines()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-c", "--config", default=str(SHARED / "model" / "moses.ini"))
    parser.add_argument("--search", choices=["cube", "normal", "both"], default="both")
    parser.add_argument("--lines", type=int, default=300, help="first lines to check (at most 300)")
    args = parser.parse_args()
    lines = (SHARED / "inputs" / "newstest2013.first500.tok.true.en").read_text(encoding="utf-8").splitlines()
    lines = lines[: min(args.lines, 300)]
    failed = False
    for search in ["cube", "normal"] if args.search == "both" else [args.search]:
        with gzip.open(REFERENCE / f"moses-news.first300.{search}.nbest10.gz", "rt", encoding="utf-8") as handle:
            expected = [line.rstrip("\n") for line in handle if int(line.split(" ||| ", 1)[0]) < len(lines)]
        with tempfile.TemporaryDirectory() as folder:
            got = decode(args.config, lines, search, 10, Path(folder))
        differing = [k for k, (a, b) in enumerate(zip(expected, got)) if a != b]
        if len(got) != len(expected) or differing:
            failed = True
            first = differing[0] if differing else min(len(got), len(expected))
            print(
                f"{search}: DIFFERENT: {len(got)} lines against {len(expected)}, {len(differing)} differ; first "
                f"at line {first + 1}:\n  expected {expected[first] if first < len(expected) else '(none)'}\n"
                f"  got      {got[first] if first < len(got) else '(none)'}"
            )
        else:
            print(f"{search}: identical ({len(got)} lines, {len(lines)} sentences)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
