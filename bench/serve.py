"""A load test of ``pysmt serve`` on loopback, beside ``pysmt decode --threads N`` on the same sentences.

    python bench/serve.py                        # moses-news (binarized once into ../runs/serve), 2 workers
    python bench/serve.py --clients 1 8 32 --seconds 60 --lines 500 --workers 2
    python -m bench.serve --pythonpath ../base-serve     # the server of another checkout

The system's tables are binarized once (``pysmt binarize``) into ``--work``, so that the workers
share their pages. A server with ``--workers`` processes then takes clients that each send one
sentence per request, one request after the other, for each count of concurrent clients and each
protocol (JSON ``/translate`` from aiohttp clients; Moses' XML-RPC from ``xmlrpc.client`` in
threads, as Moses' clients call it), until every sentence has been translated once or ``--seconds``
have passed. Printed per run: requests, failures (any non-200 answer or fault), throughput in
source words per second of wall time, and latency percentiles. ``pysmt decode --threads N`` on the
same sentences gives the batch throughput on the same machine (its load time, measured on an empty
input, subtracted). Every answer is checked against decode's 1-best.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import subprocess
import sys
import threading
import time
import xmlrpc.client
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
SYSTEM = ROOT.parent / "shared" / "data" / "moses-news"
PYSMT = [sys.executable, "-m", "pysmt.cli"]


def binarized(work: Path) -> Path:
    """The news system with binarized tables (made once)."""
    config = work / "news-bin" / "pysmt.toml"
    if not config.is_file():
        subprocess.run(
            [*PYSMT, "binarize", "-c", str(SYSTEM / "model" / "moses.ini"), "-o", str(config.parent)], check=True
        )
    return config


def decode_throughput(config: Path, lines: list[str], threads: int, work: Path) -> tuple[float, list[str]]:
    """Source words per second of ``pysmt decode --threads N`` (its load time subtracted), and its 1-bests."""
    empty, source = work / "empty.txt", work / "source.txt"
    empty.write_text("")
    source.write_text("\n".join(lines) + "\n")
    start = time.perf_counter()
    subprocess.run([*PYSMT, "decode", "-c", str(config), "-i", str(empty)], check=True, capture_output=True)
    load = time.perf_counter() - start
    start = time.perf_counter()
    run = subprocess.run(
        [*PYSMT, "decode", "-c", str(config), "-i", str(source), "--threads", str(threads)],
        check=True,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - start - load
    return sum(len(line.split()) for line in lines) / seconds, run.stdout.splitlines()


class Server:
    """``pysmt serve`` on a free port of 127.0.0.1, its stderr read (and dropped) as it comes; ``options`` added to
    its command line, ``pythonpath`` (a pysmt checkout) the pysmt it runs instead of this one."""

    def __init__(self, config: Path, workers: int, *options: str, pythonpath: Path | None = None) -> None:
        # (PYTHONSAFEPATH: the working folder, maybe this checkout, is not put before PYTHONPATH)
        env = {**os.environ, "PYTHONPATH": str(pythonpath), "PYTHONSAFEPATH": "1"} if pythonpath else None
        self.proc = subprocess.Popen(
            [
                *PYSMT,
                "serve",
                "-c",
                str(config),
                "--port",
                "0",
                "--workers",
                str(workers),
                "--max-pending",
                "100000",
                *options,
            ],
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for line in self.proc.stderr:  # type: ignore[union-attr]
            found = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
            if found:
                self.port = int(found.group(1))
                break
        else:
            raise SystemExit("the server did not start")
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()  # type: ignore

    def stop(self) -> int:
        self.proc.terminate()
        return self.proc.wait(60)


def report(label: str, clients: int, latencies: list[float], failures: int, words: int, seconds: float) -> None:
    cuts = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else latencies * 99
    print(
        f"{label:8} {clients:7d} {len(latencies):8d} {failures:8d} {words / seconds:10.1f} "
        f"{1000 * cuts[49]:8.1f} {1000 * cuts[98]:8.1f}",
        flush=True,
    )


async def json_load(port: int, lines: list[str], expected: list[str], clients: int, seconds: float) -> None:
    """``clients`` aiohttp clients, each sending one sentence per request until all are done or time is up."""
    todo = iter(range(len(lines)))
    latencies: list[float] = []
    failures = words = 0
    deadline = time.perf_counter() + seconds

    async def client(session: aiohttp.ClientSession) -> None:
        nonlocal failures, words
        for k in todo:
            if time.perf_counter() > deadline:
                return
            start = time.perf_counter()
            async with session.post(f"http://127.0.0.1:{port}/translate", json=[{"src": lines[k]}]) as response:
                answer = await response.json()
            latencies.append(time.perf_counter() - start)
            if response.status != 200 or answer[0][0]["tgt"] != expected[k]:
                failures += 1
            words += len(lines[k].split())

    start = time.perf_counter()
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None)) as session:
        await asyncio.gather(*(client(session) for _ in range(clients)))
    report("json", clients, latencies, failures, words, time.perf_counter() - start)


def xmlrpc_load(port: int, lines: list[str], expected: list[str], clients: int, seconds: float) -> None:
    """``clients`` threads calling ``translate`` as Moses' clients do, one sentence per call."""
    lock = threading.Lock()
    todo = iter(range(len(lines)))
    latencies: list[float] = []
    counts = {"failures": 0, "words": 0}
    deadline = time.perf_counter() + seconds

    def client() -> None:
        proxy = xmlrpc.client.ServerProxy(f"http://127.0.0.1:{port}/RPC2")
        while time.perf_counter() < deadline:
            with lock:
                k = next(todo, None)
            if k is None:
                return
            start = time.perf_counter()
            try:
                answer = proxy.translate({"text": lines[k]})
                ok = isinstance(answer, dict) and answer["text"].strip() == expected[k]
            except (xmlrpc.client.Error, OSError):
                ok = False
            with lock:
                latencies.append(time.perf_counter() - start)
                counts["failures"] += not ok
                counts["words"] += len(lines[k].split())

    start = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        for future in [pool.submit(client) for _ in range(clients)]:
            future.result()
    report("xml-rpc", clients, latencies, counts["failures"], counts["words"], time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--input", type=Path, default=SYSTEM / "inputs" / "newstest2013.first500.tok.true.en")
    parser.add_argument("--lines", type=int, default=500)
    parser.add_argument("--workers", type=int, default=2, help="server workers, and decode's --threads")
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--seconds", type=float, default=60.0, help="at most this long per run")
    parser.add_argument("--work", type=Path, default=ROOT.parent / "runs" / "serve")
    parser.add_argument("--pythonpath", type=Path, help="a pysmt checkout whose server to measure (default: this)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    config = binarized(args.work)
    lines = args.input.read_text(encoding="utf-8").splitlines()[: args.lines]
    words_per_s, expected = decode_throughput(config, lines, args.workers, args.work)
    print(f"system: {config} ({len(lines)} sentences, {sum(len(s.split()) for s in lines):,} source words)")
    print(f"pysmt decode --threads {args.workers}: {words_per_s:.1f} source words/s (load time excluded)")
    print(f"{'protocol':8} {'clients':>7} {'requests':>8} {'failed':>8} {'words/s':>10} {'p50 ms':>8} {'p99 ms':>8}")
    server = Server(config, args.workers, pythonpath=args.pythonpath)
    try:
        for clients in args.clients:
            asyncio.run(json_load(server.port, lines, expected, clients, args.seconds))
        for clients in args.clients:
            xmlrpc_load(server.port, lines, expected, clients, args.seconds)
    finally:
        status = server.stop()
    print(f"server stopped by SIGTERM: exit status {status}")


if __name__ == "__main__":
    main()
