"""Where ``pysmt serve`` listens, and how many connections it holds at once (``--max-connections``).

Why an accept loop of its own in front of aiohttp's connection handling: aiohttp's sites accept every
connection that arrives, and connections cost file descriptors and memory (and are what a slowloris
client hoards). Here the sockets (one per address the host has, as asyncio's ``create_server``
binds them) are bound when the server starts (a port in use is said before the workers load, and
``--port 0`` is known at once), listen once the workers are ready, and take one connection at a
time: while ``--max-connections`` are open, a new one is answered 503 at once,
without its request being read, and closed (refused promptly rather than kept waiting: a client, a
load balancer or a health check learns at once that this server is full). Connections within the
bound are aiohttp's (its ``web.Server``), which drops one whose request head does not arrive in time
(``--read-timeout``, its keep-alive timer). Only public interfaces are used: the event loop's
``sock_accept`` and ``connect_accepted_socket``, and the aiohttp server's ``connections``.
"""

from __future__ import annotations

import asyncio
import json
import resource
import socket
from collections.abc import Coroutine
from typing import Any

from aiohttp import web

from pysmt.errors import PysmtError
from pysmt.serving.json_api import error
from pysmt.serving.workers import log

#: Connections the kernel queues while the server is between two accepts.
BACKLOG = 128
#: Seconds a refused connection is kept open after its answer, reading (and dropping) what its client still
#: sends: closing a socket with unread data resets the connection, and the client could lose the answer.
LINGER = 1.0
#: Open files the server needs besides its connections (its workers' pipes, the Python runtime's own).
SPARE_FILES = 64


def refusal(limit: int) -> bytes:
    """The whole answer a connection beyond ``limit`` gets."""
    body = json.dumps(
        error(f"this server holds {limit:,} connections at once (--max-connections); try again later")
    ).encode()
    return (
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: %d\r\n"
        b"Retry-After: 1\r\nConnection: close\r\n\r\n%b" % (len(body), body)
    )


def allow_open_files(connections: int) -> None:
    """Raise this process' limit on open files (``ulimit -n``'s soft limit) to what ``connections`` need, up
    to the hard limit (an error if that is too low)."""
    needed = connections + SPARE_FILES
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            raise PysmtError(
                f"--max-connections {connections:,} needs {needed:,} open files, and this process may "
                f"open {hard:,} (ulimit -Hn): give a smaller --max-connections"
            )
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


class Listener:
    """Sockets bound to ``host``'s addresses and ``port`` that, once started, hand aiohttp up to ``limit``
    connections at once and refuse the others."""

    def __init__(self, host: str, port: int, limit: int) -> None:
        allow_open_files(limit)
        self.limit = limit
        self.where = f"{host} port {port} (--host, --port)"
        self.tasks: set[asyncio.Task[None]] = set()
        self.sockets: list[socket.socket] = []
        try:
            addresses = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
            for family, kind, proto, _, address in dict.fromkeys(addresses):
                listening = socket.socket(family, kind, proto)
                self.sockets.append(listening)
                listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6:  # (IPv6 only, as asyncio binds it: IPv4 has its own socket)
                    listening.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                listening.bind(address)
                listening.setblocking(False)
        except OSError as err:
            for listening in self.sockets:
                listening.close()
            raise self.cannot(err) from None

    def cannot(self, err: OSError) -> PysmtError:
        return PysmtError(f"cannot listen on {self.where}: {err.strerror or err}")

    @property
    def addresses(self) -> str:
        """Where it listens, as URLs."""
        urls = []
        for listening in self.sockets:
            host, port, *_ = listening.getsockname()
            urls.append(f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}")
        return ", ".join(urls)

    def start(self, server: web.Server) -> None:
        """Listen, handing connections to ``server`` (a runner's aiohttp server)."""
        for listening in self.sockets:
            try:
                listening.listen(BACKLOG)
            except OSError as err:  # another server bound the port too, and listened first
                raise self.cannot(err) from None
            self._spawn(self._accept(listening, server))

    async def close(self) -> None:
        """Stop listening (the connections aiohttp holds are the runner's to close)."""
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        for listening in self.sockets:
            listening.close()

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _accept(self, listening: socket.socket, server: web.Server) -> None:
        loop = asyncio.get_running_loop()
        while True:
            try:
                connection, address = await loop.sock_accept(listening)
            except OSError as err:  # out of open files or memory: the kernel keeps the connection waiting
                log(f"could not accept a connection ({err.strerror or err}); trying again in a second")
                await asyncio.sleep(1)
                continue
            if len(server.connections) >= self.limit:
                log(f"refused a connection from {address[0]}: {self.limit:,} connections open (--max-connections)")
                self._spawn(refuse(connection, self.limit))
                continue
            try:  # (returns once aiohttp has the connection, so that the next one counts it)
                await loop.connect_accepted_socket(server, connection)
            except OSError:  # the client has gone already
                connection.close()


async def refuse(connection: socket.socket, limit: int) -> None:
    """Answer 503 at once; close when the client has closed its side (it has read the answer), or after
    :data:`LINGER` seconds."""
    loop = asyncio.get_running_loop()
    with connection:
        try:
            async with asyncio.timeout(LINGER):
                await loop.sock_sendall(connection, refusal(limit))
                connection.shutdown(socket.SHUT_WR)
                while await loop.sock_recv(connection, 1 << 16):
                    pass
        except (OSError, TimeoutError):
            pass
