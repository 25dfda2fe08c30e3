"""What an HTTP library costs a translation server per request: the candidates for ``pysmt serve``, each
answering a small JSON POST with its echo, under the same load.

    python bench/http_servers.py                      # 8 clients, 3,000 requests per library
    pip install uvicorn starlette                     # (to include them; not pysmt's dependencies)

Each server runs in a process of its own on 127.0.0.1; an aiohttp client process sends ``--requests``
requests from ``--clients`` concurrent connections. Printed: requests per second, p50/p99 latency,
and the server's CPU time per request. A sentence takes the decoder some 10-50 ms, so what matters
is that this overhead is small beside it, and what the library does for a server (body limits,
disconnects, graceful shutdown), which the README weighs.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import socket
import statistics
import subprocess
import sys
import time

import aiohttp

SERVERS = {
    "aiohttp": """
from aiohttp import web
async def echo(request):
    return web.json_response(await request.json())
app = web.Application(client_max_size=1 << 20)
app.router.add_post("/translate", echo)
web.run_app(app, host="127.0.0.1", port=PORT, print=None, access_log=None)
""",
    "stdlib http.server": """
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class Echo(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        body = json.dumps(json.loads(self.rfile.read(int(self.headers["Content-Length"])))).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
ThreadingHTTPServer(("127.0.0.1", PORT), Echo).serve_forever()
""",
    "uvicorn+starlette": """
import uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route
async def echo(request):
    return JSONResponse(await request.json())
uvicorn.run(Starlette(routes=[Route("/translate", echo, methods=["POST"])]), host="127.0.0.1", port=PORT,
            log_level="warning", access_log=False)
""",
}
NEEDS = {"aiohttp": ["aiohttp"], "stdlib http.server": [], "uvicorn+starlette": ["uvicorn", "starlette"]}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


async def load(port: int, requests: int, clients: int) -> list[float]:
    body = [{"src": "the economic crisis has hit the european union hard .", "id": 0}]
    latencies: list[float] = []
    todo = iter(range(requests))

    async def client(session: aiohttp.ClientSession) -> None:
        for _ in todo:
            start = time.perf_counter()
            async with session.post(f"http://127.0.0.1:{port}/translate", json=body) as response:
                assert response.status == 200 and await response.json() == body
            latencies.append(time.perf_counter() - start)

    async with aiohttp.ClientSession() as session:
        await asyncio.gather(*(client(session) for _ in range(clients)))
    return latencies


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(name: str, requests: int, clients: int) -> None:
    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", SERVERS[name].replace("PORT", str(port))])
    try:
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        asyncio.run(load(port, 100, clients))  # warm up
        before = cpu_seconds(server.pid)
        start = time.perf_counter()
        latencies = asyncio.run(load(port, requests, clients))
        seconds = time.perf_counter() - start
        cpu = cpu_seconds(server.pid) - before
    finally:
        server.terminate()
        server.wait(30)
    cuts = statistics.quantiles(latencies, n=100)
    print(
        f"{name:20} {requests / seconds:10.0f} {1000 * cuts[49]:8.2f} {1000 * cuts[98]:8.2f} "
        f"{1e6 * cpu / requests:12.0f}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--clients", type=int, default=8)
    args = parser.parse_args()
    print(f"{args.requests:,} JSON POSTs from {args.clients} concurrent clients")
    print(f"{'server':20} {'req/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'CPU µs/req':>12}")
    for name, modules in NEEDS.items():
        if all(importlib.util.find_spec(module) for module in modules):
            measure(name, args.requests, args.clients)
        else:
            print(f"{name:20} (not installed: pip install {' '.join(modules)})")


if __name__ == "__main__":
    main()
