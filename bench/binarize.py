"""Binarizing time and memory: wall time and peak RSS of ``binarize_table`` on one table, in its own process.

    python bench/binarize.py --table SYSTEM/phrase-table.gz                     # a phrase table, --memory 1G
    python bench/binarize.py --table SYSTEM/reordering-table.wbe-msd-bidirectional-fe.gz --num-scores 6
    python bench/binarize.py --table ... --memory 300M --temp-dir /tmp/scratch

The binary folder goes to ``--out`` (default: a temporary folder, removed). Peak memory is the
child's maximum resident set size (``getrusage``), the table's process alone.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import sys
from pathlib import Path
from pysmt.running.memory_budget import parse_size
from pysmt.models.binary_table import PHRASE_TABLE, REORDERING_TABLE
from pysmt.models.binary_writer import binarize_table
table, out, memory, num_scores, temp_dir = sys.argv[1:]
options = {"num_scores": int(num_scores)} if int(num_scores) else {}
binarize_table(Path(table), Path(out), REORDERING_TABLE if options else PHRASE_TABLE, memory=parse_size(memory),
               temp_dir=Path(temp_dir) if temp_dir else None, **options)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", type=Path, required=True, help="a text or gzip phrase or reordering table")
    parser.add_argument("--num-scores", type=int, default=0, help="a reordering table's scores (0: a phrase table)")
    parser.add_argument("--memory", default="1G")
    parser.add_argument("--temp-dir", default="")
    parser.add_argument("--out", type=Path, help="the binary folder (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        out = args.out or Path(scratch) / "table.bin"
        start = time.time()
        subprocess.run(
            [sys.executable, "-c", CHILD, str(args.table), str(out), args.memory, str(args.num_scores), args.temp_dir],
            check=True,
            cwd=ROOT,
        )
        wall = time.time() - start
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"{args.table.name}: {wall:.1f} s, peak {peak_mb:.0f} MB (--memory {args.memory})")


if __name__ == "__main__":
    main()
