"""The HTTP server of ``pysmt serve`` (aiohttp): Moses' XML-RPC at ``/RPC2``, the JSON interface beside it, and a
page at ``/`` that shows how a sentence is translated (:mod:`~pysmt.serving.page`).

Why aiohttp: one event loop serves many clients while the decoding happens in worker processes
(:mod:`pysmt.serving.workers`), so the server itself needs no threads; aiohttp parses HTTP (no
hand-written parsing here), caps request bodies (``client_max_size``), cancels a request's handler
when its client disconnects (so its sentences leave the queue), shuts down gracefully, and is a
well-kept, single dependency (uvicorn with starlette needs two and leaves the body cap to us). The
XML-RPC payload is parsed by the standard library's unmarshaller behind defusedxml's parser.
``bench/serve.py`` measures it, ``bench/serve_fairness.py`` its turns between requests (of one client).

Limits (each a setting, see :class:`~pysmt.serving.options.ServeOptions`): the request's size
(413), the number of sentences in it and the length of each (413), its time (504; the sentences
still queued are dropped), the sentences waiting (503: come back later), the time a client takes to
send a request (``--read-timeout``: a head that has not arrived by then drops the connection, a body
gets 408 and the connection closed), the time a client leaves its answer unread (``--write-timeout``: its
connection is cut), and the connections held (``--max-connections``, see
:mod:`~pysmt.serving.listening`). Invalid JSON, XML or UTF-8, input nested deeper than either
protocol's requests ever are, an empty request, a compressed body (415): a 4xx with the reason, or
an XML-RPC fault at ``/RPC2``; the server goes on serving. Every request is logged on stderr (one
line: address, request, status, seconds). SIGTERM or Ctrl-C: stop accepting, answer what is in
flight and stop the workers within ``--timeout`` (connections still open then are cut), exit 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import struct
import sys
from collections.abc import Awaitable, Callable

from aiohttp import web

from pysmt.decoder import SystemRecipe
from pysmt.decoding.options import system_recipe
from pysmt.errors import PysmtError
from pysmt.features.registry import system_inputs
from pysmt.files.markup import MarkupError, parse_markup
from pysmt.files.outputs import check_outputs
from pysmt.files.textio import require_file
from pysmt.serving import json_api, moses_xmlrpc, page
from pysmt.serving.json_api import BadRequest, Scoring
from pysmt.serving.listening import Listener
from pysmt.serving.moses_xmlrpc import ProtocolError
from pysmt.serving.options import ServeOptions
from pysmt.serving.workers import Busy, Translated, WorkerPool, log

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
#: One line per request on stderr: client address, request line, status, response bytes, seconds.
ACCESS_LOG_FORMAT = '%a "%r" %s %b %Tfs'
#: The request's key saying that its body did not arrive in time: its answer ends the connection.
STALLED = "pysmt.stalled"


class Service:
    """What the handlers share: the options, the workers, and the translation of a request's sentences."""

    def __init__(self, options: ServeOptions, pool: WorkerPool) -> None:
        self.options, self.pool = options, pool
        self.draining = False

    def check_sentences(self, lines: list[str]) -> None:
        """A request's sentences within the limits (413 otherwise)."""
        if len(lines) > self.options.max_sentences:
            raise BadRequest(
                413,
                f"{len(lines):,} sentences in one request; this server takes up to "
                f"{self.options.max_sentences:,} (--max-sentences)",
            )
        for number, line in enumerate(lines, start=1):
            words = len(line.split()) if self.options.xml_input == "pass-through" else self.markup_words(number, line)
            if words > self.options.max_words:
                raise BadRequest(
                    413,
                    f"sentence {number} has {words:,} words; this server takes up to "
                    f"{self.options.max_words:,} (--max-words)",
                )

    @staticmethod
    def markup_words(number: int, line: str) -> int:
        """The words of a sentence with markup (``--xml-input``), its tags not counted; malformed markup (a tag, a
        span that is no number or lies beyond the line's words) is the client's error (400), found here before any
        worker is asked."""
        try:
            return len(parse_markup(line).words)
        except MarkupError as err:
            raise BadRequest(400, f"sentence {number}: malformed markup: {err}") from None

    def source_words(self, line: str) -> list[str]:
        """The words of a sentence that the positions of its translations count (its tags left out where the server
        reads markup)."""
        return line.split() if self.options.xml_input == "pass-through" else list(parse_markup(line).words)

    async def translate(
        self, lines: list[str], nbest: int, distinct: bool, words: bool = False, client: str | None = None
    ) -> list[Translated]:
        """The translations of a request's sentences, in their order, within the request's time, taking
        ``client``'s turns (:mod:`~pysmt.serving.workers`); with ``words`` their links and phrases count the words
        sent and returned (a system that prepares its text)."""
        if self.draining:
            raise BadRequest(503, "the server is shutting down")
        self.check_sentences(lines)
        try:
            jobs = self.pool.submit(lines, nbest, distinct, words and not self.pool.tokens, client)
        except Busy as err:
            raise BadRequest(503, f"busy: {err}; try again later") from None
        try:
            return await asyncio.wait_for(asyncio.gather(*(job.future for job in jobs)), self.options.timeout)
        except TimeoutError:
            raise BadRequest(504, f"the request took more than {self.options.timeout:g} s (--timeout)") from None
        except PysmtError as err:
            raise BadRequest(500, str(err)) from None
        finally:  # answered, timed out, failed or its client gone: none of its sentences is wanted any more
            self.pool.cancel(jobs)


async def body(request: web.Request) -> bytes:
    """The request's body, within the size and time limits; compressed bodies are refused (no decompression
    bombs)."""
    options: ServeOptions = request.app["service"].options
    if request.headers.get("Content-Encoding", "identity").lower() != "identity":
        raise BadRequest(
            415, f"Content-Encoding {request.headers['Content-Encoding']} is not accepted: send the body uncompressed"
        )
    try:
        async with asyncio.timeout(options.read_timeout):
            data = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise BadRequest(
            413,
            f"the request is larger than this server takes ({options.max_request_bytes:,} bytes, --max-request-size)",
        ) from None
    except TimeoutError:
        request[STALLED] = True
        request.content.feed_eof()  # the rest is not waited for (no lingering close): the answer ends it all
        raise BadRequest(
            408, f"the request's body did not arrive within {options.read_timeout:g} s (--read-timeout)"
        ) from None
    if not data.strip():
        raise BadRequest(400, "the request is empty")
    return data


async def moses_rpc(request: web.Request) -> web.Response:
    """``POST /RPC2``: Moses' XML-RPC ``translate``; every mistake is a fault."""
    service: Service = request.app["service"]
    try:
        try:
            method, params = moses_xmlrpc.parse_call(await body(request))
            if method != "translate":
                raise ProtocolError(moses_xmlrpc.NO_SUCH_METHOD, f"Method '{method}' not defined")
            call = moses_xmlrpc.translate_request(params, service.options.max_nbest)
            (translated,) = await service.translate(
                [call.text], max(call.nbest, 1), call.distinct, call.counts_words, request.remote
            )
        except BadRequest as err:
            raise ProtocolError(moses_xmlrpc.SERVER_ERROR, str(err)) from None
        answer = moses_xmlrpc.translate_response(
            call, translated.candidates, translated.texts, service.pool.tokens, service.pool.labels
        )
        return web.Response(body=moses_xmlrpc.response(answer), content_type="text/xml")
    except ProtocolError as err:
        return web.Response(body=moses_xmlrpc.fault(err.code, str(err)), content_type="text/xml")


async def translate_per_input(request: web.Request) -> web.Response:
    """``POST /translate``: per input, the list of its n-best entries."""
    return await translate_json(request, by_rank=False)


async def translate_by_rank(request: web.Request) -> web.Response:
    """``POST /translator/translate``: OpenNMT-py's own shape, a list per n-best rank."""
    return await translate_json(request, by_rank=True)


async def translate_json(request: web.Request, by_rank: bool) -> web.Response:
    service: Service = request.app["service"]
    options = service.options
    items = json_api.parse_items(await body(request), options.model_id, options.nbest_size, options.max_nbest)
    if by_rank and any(item.n_best != options.nbest_size for item in items):
        raise BadRequest(
            400,
            "/translator/translate answers every input with --nbest-size entries (OpenNMT's "
            "shape): ask /translate for other n-best sizes",
        )
    nbest = max(item.n_best for item in items)
    answers = await service.translate(
        [item.src for item in items], nbest, distinct=False, words=True, client=request.remote
    )
    scoring = Scoring(service.pool.labels, service.pool.weights)
    per_input = [
        json_api.entries(
            item, answer.candidates, answer.texts, scoring, service.source_words(item.src) if item.details else None
        )
        for item, answer in zip(items, answers)
    ]
    return web.json_response(json_api.by_rank(per_input, options.nbest_size) if by_rank else per_input)


async def health(request: web.Request) -> web.Response:
    service: Service = request.app["service"]
    if service.draining:
        return web.json_response({"status": "shutting down"}, status=503)
    return web.json_response(
        {
            "status": "ok",
            "workers": len(service.pool.workers),
            "pending": service.pool.pending(),
            "workers_replaced": service.pool.replaced,
        }
    )


async def models(request: web.Request) -> web.Response:
    service: Service = request.app["service"]
    options = service.options
    return web.json_response(
        [
            {
                "model_id": options.model_id,
                "loaded": True,
                "timeout": -1,
                "config": str(options.system.config),
                "features": [name for name, _, _ in service.pool.labels],
                "workers": len(service.pool.workers),
                "n_best": options.nbest_size,
                "opt": {
                    "prepared": options.prepared,
                    "search": options.system.search,
                    "xml-input": options.xml_input,
                    **options.system.search_settings.recorded(),
                },
            }
        ]
    )


@web.middleware
async def send_in_time(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Send the answer here, not after the handler as aiohttp would, so that a client that leaves it unread for
    ``--write-timeout`` seconds is cut off: its connection aborted, the bytes not sent dropped (a 1000-best list
    with alignments is tens of MB)."""
    response = await handler(request)
    if response.prepared:
        return response
    options: ServeOptions = request.app["service"].options
    try:
        await send(request, response, options.write_timeout)
    except TimeoutError:
        log(
            f"closed the connection of {request.remote}: its answer was left unread for "
            f"{options.write_timeout:g} s (--write-timeout)"
        )
        if request.transport is not None:
            cut(request.transport)
    except ConnectionError:  # the client has gone: aiohttp finds so too, as when it sends the answer itself
        pass
    return response  # (aiohttp finds it sent, or its connection gone)


async def send(request: web.Request, response: web.StreamResponse, timeout: float) -> None:
    """Write ``response``; TimeoutError when the client has taken nothing of it for ``timeout`` seconds."""
    async with asyncio.timeout(timeout) as limit:
        watching = asyncio.create_task(watch_progress(request, limit, timeout))
        try:
            await response.prepare(request)
            await response.write_eof()
        finally:
            watching.cancel()


async def watch_progress(request: web.Request, limit: asyncio.Timeout, timeout: float) -> None:
    """Move ``limit`` to ``timeout`` seconds after the last moment the client took some of the bytes not yet sent
    (a slow reader is no stalled one)."""
    loop = asyncio.get_running_loop()
    unsent = 0
    while (transport := request.transport) is not None:
        await asyncio.sleep(timeout / 10)
        left = transport.get_write_buffer_size()
        if left < unsent:
            limit.reschedule(loop.time() + timeout)
        unsent = left


def cut(transport: asyncio.Transport) -> None:
    """Close a connection at once with a reset (as nginx's ``reset_timedout_connection``): the bytes its client has
    not taken are dropped, the kernel's share with them (a plain close would go on sending them)."""
    connection = transport.get_extra_info("socket")
    if connection is not None:
        with contextlib.suppress(OSError):
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


def abort_connections(server: web.Server) -> None:
    """Close every connection at once, dropping what its client has not read (SIGTERM's time is over)."""
    aborted = [handler.transport for handler in server.connections if handler.transport is not None]
    for transport in aborted:
        cut(transport)
    if aborted:
        log(f"closed {len(aborted)} connection(s) still open after --timeout")


@web.middleware
async def close_stalled(request: web.Request, handler: Handler) -> web.StreamResponse:
    """The answer to a request whose body stalled closes its connection (the client holds none)."""
    response = await handler(request)
    if request.get(STALLED):
        response.force_close()
    return response


@web.middleware
async def json_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A refused request as JSON with its status (the XML-RPC endpoint answers faults itself)."""
    try:
        return await handler(request)
    except BadRequest as err:
        return web.json_response(json_api.error(str(err)), status=err.status)


def application(options: ServeOptions, pool: WorkerPool) -> web.Application:
    app = web.Application(
        client_max_size=options.max_request_bytes, middlewares=[send_in_time, close_stalled, json_errors]
    )
    app["service"] = Service(options, pool)
    app.router.add_post("/RPC2", moses_rpc)
    for root, translate in (("", translate_per_input), ("/translator", translate_by_rank)):
        app.router.add_post(f"{root}/translate", translate)
        app.router.add_get(f"{root}/health", health)
        app.router.add_get(f"{root}/models", models)
    page.add_routes(app.router)
    return app


def recipe_of(options: ServeOptions) -> SystemRecipe:
    return system_recipe(
        options.system.config,
        options.system.features,
        options.system.params,
        options.weights,
        search=options.system.search,
        overrides=options.system.search_settings,
        xml_input=options.xml_input,
    )


async def run(options: ServeOptions) -> None:
    """Start the workers, serve until SIGTERM or Ctrl-C, then stop gracefully."""
    listener = Listener(options.host, options.port, options.max_connections)
    pool = WorkerPool(recipe_of(options), options.workers, not options.prepared, options.max_pending)
    log(f"starting {options.workers} worker(s) for {options.system.config}")
    try:
        await pool.start()
    except BaseException:
        await listener.close()
        raise
    app = application(options, pool)
    access = logging.getLogger("aiohttp.access")
    access.addHandler(logging.StreamHandler(sys.stderr))
    access.setLevel(logging.INFO)
    # keepalive_timeout: aiohttp closes a connection whose request head has not arrived so long after it opened
    # or after its previous answer (a slowloris' or an idle one); lingering_time: how long it reads what the
    # client still sends of a body it was answered without (413, 415) before closing
    runner = web.AppRunner(
        app,
        handler_cancellation=True,
        access_log_format=ACCESS_LOG_FORMAT,
        shutdown_timeout=options.timeout,
        auto_decompress=False,
        keepalive_timeout=options.read_timeout,
        lingering_time=options.read_timeout,
    )
    await runner.setup()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    try:
        assert runner.server is not None  # (set up above)
        listener.start(runner.server)
        log(
            f"{len(pool.workers)} worker(s) ready; listening on {listener.addresses}: Moses XML-RPC at /RPC2, JSON at "
            "/translate, /health, /models (and under /translator/), a page at /"
        )
        await stop.wait()
        log("stopping: finishing the requests in flight")
        app["service"].draining = True
    finally:  # done within --timeout: the requests in flight answered, or their connections cut at its end
        deadline = loop.time() + options.timeout
        server = runner.server
        cutting = loop.call_at(deadline, abort_connections, server) if server is not None else None
        await listener.close()
        await runner.cleanup()
        if cutting is not None:
            cutting.cancel()
        await pool.close(deadline)
        log("stopped")


def serve(options: ServeOptions) -> None:
    """``pysmt serve``: serve until stopped (exit 0 after SIGTERM or Ctrl-C)."""
    require_file(options.system.config)
    check_outputs({}, system_inputs(recipe_of(options).configure()))  # its log (stderr) is no input
    asyncio.run(run(options))
