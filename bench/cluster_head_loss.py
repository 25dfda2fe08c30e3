"""How long ``decode --cluster`` takes to notice that its head is gone, and how long its actors outlive it.

    python -m bench.cluster_head_loss               # 3 runs of each case
    python -m bench.cluster_head_loss --runs 5 --lines 3000

Each run starts a cluster of its own on 127.0.0.1 as the README does (a head and a worker node, one
CPU each, ``ray start --block``), decodes the toy system's long input with ``pysmt decode
--cluster``, and kills every process of the head's node: once the client has written its first
translation ("mid-decode"), or as soon as it says it loads the system ("loading"). It prints, in
seconds from the kill: when the client's error (or a traceback) appeared, when the client exited, and
when the last decoder actor process (``ray::DecoderActor``) of either node was gone, with the client's
last line.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pysmt.testing import write_toy_system
from tests.helpers import long_input
from tests.test_cluster import actors_in, end_session, ray_cluster


def one_run(system: Path, source: Path, folder: Path, when: str) -> tuple[float | None, float, float, str]:
    err_path = folder / "err.txt"
    with ray_cluster() as nodes, open(err_path, "w") as err:
        run = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pysmt.cli",
                "decode",
                "-c",
                str(system),
                "-i",
                str(source),
                "--cluster",
                nodes.address,
            ],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
        )
        try:
            if when == "mid-decode":
                assert run.stdout is not None and run.stdout.readline()
            else:
                while "loading the system" not in err_path.read_text():
                    time.sleep(0.02)
            end_session(nodes.head.pid)
            killed = time.monotonic()
            said: float | None = None
            exited: float | None = None
            actors_gone: float | None = None
            while exited is None or actors_gone is None:
                now = time.monotonic() - killed
                if said is None and any(word in err_path.read_text() for word in ("Error:", "Traceback")):
                    said = now
                if exited is None and run.poll() is not None:
                    exited = now
                if actors_gone is None and not actors_in(nodes.head.pid, nodes.worker.pid):
                    actors_gone = now
                if now > 120:
                    raise SystemExit(f"still waiting 120 s after the kill:\n{err_path.read_text()[-2000:]}")
                time.sleep(0.05)
        finally:
            run.kill()
            run.wait()
        end_session(nodes.worker.pid)
    assert exited is not None and actors_gone is not None
    return said, exited, actors_gone, err_path.read_text().strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--lines", type=int, default=1500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        (folder / "home").mkdir()
        system = write_toy_system(folder / "system")
        source = long_input(folder / "in.txt", lines=args.lines)
        os.environ.update(HOME=str(folder / "home"), RAY_USAGE_STATS_ENABLED="0")  # (no token of the user's)
        for name in [name for name in os.environ if name.startswith("RAY_AUTH")]:
            del os.environ[name]
        print("case        run  error  client exit  last actor gone   (seconds after the head's kill)  last line")
        for when in ("mid-decode", "loading"):
            for number in range(1, args.runs + 1):
                said, exited, gone, line = one_run(system, source, folder, when)
                shown = "-" if said is None else f"{said:.1f}"
                print(f"{when:<11} {number:>3}  {shown:>5}  {exited:>11.1f}  {gone:>15.1f}   {line}", flush=True)


if __name__ == "__main__":
    main()
