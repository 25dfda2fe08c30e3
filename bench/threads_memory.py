"""Memory of ``pysmt decode --threads N``: what each process holds, and what only it holds.

    python -m bench.threads_memory                       # moses-news, 500 lines, --threads 2
    python -m bench.threads_memory --threads 4 -c SYSTEM-bin/pysmt.toml -i INPUT --prepared

The decoder's workers are forked from the process that loaded the system, so the tables, the LM
and the compiled core's data are shared pages until someone writes to them; memory-mapped binary
tables are shared by every process that maps them. Every 0.1 s, each process's
``/proc/PID/smaps_rollup`` is read: its resident set (RSS, shared pages counted in full), its
proportional set (PSS, shared pages divided among their users: the sum is the machine's real
footprint) and its private memory (pages no other process maps: what one more worker costs).
Printed: the peak of each, per process, and the peak of the summed PSS.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "moses-news"
FIELDS = ("Rss", "Pss", "Private_Clean", "Private_Dirty")


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


def rollup(pid: int) -> dict[str, int] | None:
    """The process's memory in kB, or None once it has gone."""
    try:
        lines = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
    except OSError:
        return None
    values = {}
    for line in lines:
        name, _, rest = line.partition(":")
        if name in FIELDS:
            values[name] = int(rest.split()[0])
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-c", "--config", default=str(SHARED / "model" / "moses.ini"))
    parser.add_argument("-i", "--input", default=str(SHARED / "inputs" / "newstest2013.first500.tok.true.en"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--prepared", action="store_true", help="as decode's --prepared (moses.ini systems need none)")
    args = parser.parse_args()
    command = [
        sys.executable,
        "-m",
        "pysmt",
        "decode",
        "-c",
        args.config,
        "-i",
        args.input,
        "--threads",
        str(args.threads),
        *(["--prepared"] if args.prepared else []),
    ]
    peaks: dict[int, dict[str, int]] = {}
    roles: dict[int, str] = {}
    total_pss = 0
    started = time.monotonic()
    with subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as process:
        roles[process.pid] = "main (loads, reads, writes)"
        while process.poll() is None:
            pids = [process.pid] + children(process.pid)
            pss = 0
            for pid in pids:
                values = rollup(pid)
                if values is None:
                    continue
                roles.setdefault(pid, f"worker {len(roles)}")
                peak = peaks.setdefault(pid, dict.fromkeys(FIELDS, 0))
                values["Private"] = values["Private_Clean"] + values["Private_Dirty"]
                for name, value in values.items():
                    peak[name] = max(peak.get(name, 0), value)
                pss += values["Pss"]
            total_pss = max(total_pss, pss)
            time.sleep(0.1)
    print(f"pysmt decode --threads {args.threads}: {time.monotonic() - started:.1f} s, exit {process.returncode}")
    print(f"{'process':30} {'peak RSS MB':>12} {'peak PSS MB':>12} {'peak private MB':>16}")
    for pid, peak in peaks.items():
        print(f"{roles[pid]:30} {peak['Rss'] / 1024:12.1f} {peak['Pss'] / 1024:12.1f} {peak['Private'] / 1024:16.1f}")
    print(f"{'all processes (summed PSS)':30} {'':12} {total_pss / 1024:12.1f}")


if __name__ == "__main__":
    main()
