"""Fairness of ``pysmt serve``: the latency of a client sending one sentence per request while two clients each
send one large request (100 sentences of 200 words, the most a request may hold by default).

    python -m bench.serve_fairness                                 # moses-news (binarized into ../runs/serve)
    python -m bench.serve_fairness --pythonpath ../base-serve      # the server of another checkout

The system is the one ``bench/serve.py`` binarizes. A server with ``--workers`` processes (and a
``--timeout`` long enough for the large requests to finish rather than fail) is sent one warm-up
sentence; then the two large requests go at once, and one second later the small client starts
sending one-sentence requests, one after the other, until both large requests are answered.
Printed: each large request's status, seconds and source words per second; the small requests'
count, failures (any answer but 200), first, median and largest latency. The large requests'
sentences are the reference side of newstest2013, 200 words each (consecutive lines' words); the
small ones are the first sentences of 10 to 30 words of the first 500 lines.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import statistics
import time
from pathlib import Path

import aiohttp

from bench.serve import ROOT, SYSTEM, Server, binarized


def long_sentences(path: Path, count: int, words: int) -> list[str]:
    """``count`` sentences of ``words`` words each, cut from the file's words in order."""
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        stream = [word for line in lines for word in line.split()]
    if len(stream) < count * words:
        raise SystemExit(f"{path} has {len(stream):,} words, fewer than {count} x {words}")
    return [" ".join(stream[k * words : (k + 1) * words]) for k in range(count)]


async def post(session: aiohttp.ClientSession, port: int, lines: list[str]) -> tuple[int, float]:
    """A request of ``lines``: its status and seconds."""
    start = time.perf_counter()
    async with session.post(f"http://127.0.0.1:{port}/translate", json=[{"src": line} for line in lines]) as answer:
        await answer.read()
    return answer.status, time.perf_counter() - start


async def measure(port: int, large: list[list[str]], small: list[str]) -> None:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None)) as session:
        await post(session, port, small[:1])  # (warm-up)
        requests = [asyncio.create_task(post(session, port, lines)) for lines in large]
        await asyncio.sleep(1.0)
        latencies: list[float] = []
        failures = 0
        while not all(request.done() for request in requests):
            status, seconds = await post(session, port, [small[len(latencies) % len(small)]])
            latencies.append(seconds)
            failures += status != 200
        for number, (lines, request) in enumerate(zip(large, requests), start=1):
            status, seconds = request.result()
            words = sum(len(line.split()) for line in lines)
            print(
                f"large request {number}: {len(lines)} sentences, {words:,} words: status {status}, "
                f"{seconds:.1f} s, {words / seconds:.0f} words/s",
                flush=True,
            )
        print(
            f"one-sentence requests beside them: {len(latencies)}, {failures} failed; latency first "
            f"{latencies[0]:.2f} s, median {statistics.median(latencies):.2f} s, largest {max(latencies):.2f} s",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sentences", type=int, default=100, help="sentences per large request")
    parser.add_argument("--words", type=int, default=200, help="words per sentence of the large requests")
    parser.add_argument("--timeout", type=float, default=600.0, help="the server's --timeout")
    parser.add_argument("--work", type=Path, default=ROOT.parent / "runs" / "serve")
    parser.add_argument("--pythonpath", type=Path, help="a pysmt checkout whose server to measure (default: this)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    config = binarized(args.work)
    reference = long_sentences(SYSTEM / "inputs" / "newstest2013.tok.true.en.gz", 2 * args.sentences, args.words)
    large = [reference[: args.sentences], reference[args.sentences :]]
    first500 = (SYSTEM / "inputs" / "newstest2013.first500.tok.true.en").read_text(encoding="utf-8").splitlines()
    small = [line for line in first500 if 10 <= len(line.split()) <= 30][:50]
    print(f"system: {config}, {args.workers} workers; server: {args.pythonpath or ROOT}", flush=True)
    server = Server(
        config,
        args.workers,
        "--timeout",
        f"{args.timeout:g}",
        "--max-words",
        str(args.words),
        pythonpath=args.pythonpath,
    )
    try:
        asyncio.run(measure(server.port, large, small))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
