"""``pysmt serve`` started for a test: on a free port of 127.0.0.1, its log read as it comes, stopped (SIGTERM, then
SIGKILL) when the test's block ends, with HTTP and XML-RPC clients for it."""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import threading
import xmlrpc.client
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pysmt.testing import start_pysmt
from tests.helpers import alive, children_of, wait_until


@dataclass
class Server:
    proc: subprocess.Popen
    port: int
    log: list[str] = field(default_factory=list)

    @property
    def rpc(self) -> xmlrpc.client.ServerProxy:
        return xmlrpc.client.ServerProxy(f"http://127.0.0.1:{self.port}/RPC2")

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = 30.0,
        source: str = "127.0.0.1",
    ) -> tuple[int, object]:
        """The status and JSON answer of a request sent from ``source`` (another loopback address is another
        client: 127.0.0.2)."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout, source_address=(source, 0))
        try:
            connection.request(method, path, body, headers or {})
            response = connection.getresponse()
            data = response.read()
            return response.status, json.loads(data) if data else None
        finally:
            connection.close()

    def post_json(self, path: str, value: object, **kwargs) -> tuple[int, object]:
        return self.request("POST", path, json.dumps(value).encode(), {"Content-Type": "application/json"}, **kwargs)

    def fault(self, body: bytes) -> tuple[int, str]:
        """The fault code and message with which /RPC2 answers ``body``, sent as it is."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.request("POST", "/RPC2", body, {"Content-Type": "text/xml"})
            xmlrpc.client.loads(connection.getresponse().read())
        except xmlrpc.client.Fault as fault:
            return fault.faultCode, fault.faultString
        finally:
            connection.close()
        raise AssertionError(f"/RPC2 answered {body[:80]!r} without a fault")

    def connect(self, timeout: float = 10.0, receive_buffer: int | None = None) -> socket.socket:
        """A raw connection to the server (for clients that misbehave), with a kernel receive buffer of
        ``receive_buffer`` bytes (for one that reads little)."""
        client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if receive_buffer is not None:  # (before connecting: it sets the window the server may fill)
            client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        client.settimeout(timeout)
        client.connect(("127.0.0.1", self.port))
        return client

    def workers(self) -> list[int]:
        """The decoding workers' PIDs (not multiprocessing's resource tracker)."""
        found = []
        for pid in children_of(self.proc.pid):
            try:
                command = (Path("/proc") / str(pid) / "cmdline").read_bytes()
            except OSError:
                continue
            if b"spawn_main" in command:
                found.append(pid)
        return found


@contextmanager
def serving(system: Path, *extra: str, workers: int = 1, env: dict[str, str] | None = None) -> Iterator[Server]:
    """``pysmt serve`` on a free port of 127.0.0.1 until the block ends (then SIGTERM, then SIGKILL); ``env``: its
    environment (:func:`pysmt.testing.registered_for_commands`'s), else this one."""
    proc = start_pysmt(
        "serve",
        "-c",
        system,
        "--port",
        "0",
        "--workers",
        str(workers),
        *extra,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env=env,
    )
    log: list[str] = []
    port: list[int] = []

    def read() -> None:  # keep reading stderr (the request log) so that the server never blocks on it
        for raw in proc.stderr:
            line = raw.decode(errors="replace")
            log.append(line)
            if "listening on http://127.0.0.1:" in line and not port:
                port.append(int(line.split("127.0.0.1:")[1].split(":")[0].split(",")[0]))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert wait_until(lambda: port or proc.poll() is not None, 120), "".join(log)
        assert port, "".join(log)
        yield Server(proc, port[0], log)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
        reader.join(10)


@contextmanager
def stopped(pid: int) -> Iterator[None]:
    """A worker frozen (SIGSTOP) inside the block: its sentences wait."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGCONT)
