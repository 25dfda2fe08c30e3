"""``pysmt serve`` against clients that stall, hoard connections, nest their input or send large requests, and
with a system it cannot load: real servers on 127.0.0.1, each bounded in time and stopped by its test."""

from __future__ import annotations

import gzip
import json
import os
import signal
import socket
import time
import xmlrpc.client
from concurrent.futures import ThreadPoolExecutor

import pytest

from pysmt.testing import one_line_error, run_pysmt, write_toy_system
from tests.helpers import wait_until
from tests.serving.servers import Server, serving, stopped

pytest.importorskip("aiohttp")
pytestmark = pytest.mark.slow  # every test starts `pysmt serve`


def until_closed(client: socket.socket) -> bytes:
    """What the server sends until it closes the connection (socket.timeout if it keeps it open longer than the
    client's timeout)."""
    data = b""
    while chunk := client.recv(1 << 16):
        data += chunk
    return data


def served(server: Server) -> bool:
    """Whether the server translates (and its log holds no traceback)."""
    status, answer = server.post_json("/translate", [{"src": "a b c"}])
    return status == 200 and answer[0][0]["tgt"] == "x y z" and "Traceback" not in "".join(server.log)


def test_a_request_sent_by_half_is_dropped_after_the_read_timeout(tiny_system):
    with serving(tiny_system, "--read-timeout", "1") as server:
        with server.connect() as silent, server.connect() as half_head, server.connect() as half_body:
            half_head.sendall(b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n")
            half_body.sendall(b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n[{")
            assert until_closed(silent) == b""  # no request at all: closed
            assert until_closed(half_head) == b""  # its head never ended: closed
            answer = until_closed(half_body)  # its body never ended: 408, then closed
            assert answer.startswith(b"HTTP/1.1 408 ") and b"Connection: close" in answer
            assert json.loads(answer.split(b"\r\n\r\n", 1)[1]) == {
                "error": "the request's body did not arrive within 1 s (--read-timeout)",
                "status": "error",
            }
        with server.connect() as slowloris:  # a head sent a byte at a time must still end within the time
            with pytest.raises(OSError):  # (the server has closed the connection: a write fails)
                for byte in b"POST /translate HTTP/1.1\r\nHost: x\r\n" + b"X-Pad: " + b"a" * 200:
                    slowloris.sendall(bytes([byte]))
                    time.sleep(0.05)
        assert served(server)


def test_connections_beyond_the_bound_are_refused_at_once_and_a_port_in_use_is_one_line(tiny_system):
    with serving(tiny_system, "--max-connections", "2", "--read-timeout", "60") as server:
        with server.connect() as first, server.connect() as second:
            first.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")  # the bound counts connections, not requests
            assert first.recv(1 << 16).startswith(b"HTTP/1.1 200 ")
            status, answer = server.post_json("/translate", [{"src": "a b c"}])
            assert status == 503 and answer == {
                "error": "this server holds 2 connections at once (--max-connections); try again later",
                "status": "error",
            }
            with pytest.raises(xmlrpc.client.ProtocolError) as caught:
                server.rpc.translate({"text": "a b c"})
            assert caught.value.errcode == 503
            second.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n")  # those held are served meanwhile
            assert second.recv(1 << 16).startswith(b"HTTP/1.1 200 ")
        assert wait_until(lambda: served(server), 10)  # the two closed: room again
        assert wait_until(lambda: "refused a connection from 127.0.0.1: 2 connections open" in "".join(server.log), 10)
        taken = run_pysmt("serve", "-c", tiny_system, "--port", str(server.port), timeout=60)
        one_line_error(taken, f"cannot listen on 127.0.0.1 port {server.port} (--host, --port): Address already in use")


def test_input_nested_deeper_than_requests_are_is_refused_and_the_server_goes_on(tiny_system):
    with serving(tiny_system) as server:
        for body in (b"[" * 3000, b'[{"src": "a", "n_best": ' + b"[" * 3000 + b"]" * 3000 + b"}]"):
            status, answer = server.request("POST", "/translate", body)
            assert status == 400 and "nests lists and objects more than 32 deep" in answer["error"]
        # brackets within strings are text
        assert server.post_json("/translate", [{"src": "a [[[[ b" + "[" * 100}])[0] == 200
        arrays = b"<value><array><data>" * 3000 + b"</data></array></value>" * 3000
        for params in (
            b"<param>" + arrays + b"</param>",
            b"<param><value><struct><member><name>text</name><value>a</value></member><member><name>"
            b"nbest</name>" + arrays + b"</member></struct></value></param>",
        ):
            code, message = server.fault(
                b"<?xml version='1.0'?><methodCall><methodName>translate</methodName>"
                b"<params>" + params + b"</params></methodCall>"
            )
            assert code == -32000 and "nests XML elements more than 32 deep" in message
        assert server.rpc.translate({"text": "a b c"}) == {"text": "x y z "}
        assert served(server) and "Error handling request" not in "".join(server.log)


def test_a_one_sentence_request_is_answered_while_two_large_ones_are_in_progress(tiny_system):
    sentence = " ".join(["a b c"] * 6)
    with serving(tiny_system, "--max-words", "20") as server, ThreadPoolExecutor(3) as clients:
        (worker,) = server.workers()
        finished: list[str] = []

        def send(name: str, count: int) -> tuple[int, object]:
            answer = server.post_json("/translate", [{"src": sentence}] * count, timeout=120)
            finished.append(name)
            return answer

        with stopped(worker):  # all three requests wait, queued, until the worker goes on
            large = [clients.submit(send, name, 100) for name in ("first", "second")]
            assert wait_until(lambda: server.request("GET", "/health")[1]["pending"] == 200, 10)
            small = clients.submit(send, "small", 1)
            assert wait_until(lambda: server.request("GET", "/health")[1]["pending"] == 201, 10)
        assert small.result(60)[0] == 200
        answers = [future.result(120) for future in large]
        assert finished[0] == "small" and sorted(finished[1:]) == ["first", "second"]
        assert all(status == 200 and len(entries) == 100 for status, entries in answers)


def test_a_system_that_cannot_be_loaded_is_one_line_naming_its_file(tmp_path):
    system = write_toy_system(tmp_path / "system")
    table = system.parent / "phrases.txt"
    truncated = table.with_name("phrases.txt.gz")
    truncated.write_bytes(gzip.compress(table.read_bytes())[:-10])  # cut short: no end-of-stream marker
    system.write_text(system.read_text().replace("path=phrases.txt ", "path=phrases.txt.gz "))
    run = run_pysmt("serve", "-c", system, "--port", "0", "--workers", "2", timeout=120)
    one_line_error(run, str(truncated))


def unread_answer(server: Server) -> socket.socket:
    """A client that asks for a large answer (a 1000-best list of ~10 MB: each entry repeats the ``src``, padded
    with spaces) and reads only its first bytes, with a receive buffer of 4 KiB: the server is left with most of
    it to send."""
    client = server.connect(receive_buffer=4096)
    body = json.dumps([{"src": " ".join(["a b c"] * 10) + " " * 10_000, "n_best": 1000}]).encode()
    client.sendall(
        b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%b"
        % (len(body), body)
    )
    assert client.recv(12) == b"HTTP/1.1 200"
    return client


def test_an_answer_left_unread_is_dropped_after_the_write_timeout(tiny_system):
    with serving(tiny_system, "--write-timeout", "1") as server:
        with unread_answer(server) as client:
            assert wait_until(
                lambda: (
                    "closed the connection of 127.0.0.1: its answer was left unread for 1 s (--write-timeout)"
                    in "".join(server.log)
                ),
                20,
            ), "".join(server.log)
            with pytest.raises(ConnectionResetError):  # (aborted: what was not sent is dropped)
                until_closed(client)
        assert served(server) and "Error handling request" not in "".join(server.log)


def test_sigterm_is_done_within_the_timeout_whatever_clients_do(tiny_system):
    with serving(tiny_system, "--timeout", "3", "--write-timeout", "60") as server:
        with unread_answer(server), server.connect() as idle:  # (the idle one asks nothing)
            time.sleep(1)  # (the answer waits for its reader)
            started = time.monotonic()
            os.killpg(server.proc.pid, signal.SIGTERM)
            assert server.proc.wait(30) == 0
            took = time.monotonic() - started
            log = "".join(server.log)
            assert took < 3 + 1.5, (took, log)  # its workers get half a second to exit, however late
            assert "closed 1 connection(s) still open after --timeout" in log and "Traceback" not in log, log
            assert idle.recv(1) == b""


def test_a_client_gets_turns_however_many_requests_another_sends(tiny_system):
    with serving(tiny_system) as server, ThreadPoolExecutor(21) as clients:
        (worker,) = server.workers()
        finished: list[str] = []

        def send(name: str, source: str) -> int:
            status, _ = server.post_json("/translate", [{"src": "a b c"}], timeout=60, source=source)
            finished.append(name)
            return status

        with stopped(worker):  # every request waits, queued, until the worker goes on
            many = [clients.submit(send, f"first {k}", "127.0.0.1") for k in range(20)]
            assert wait_until(lambda: server.request("GET", "/health")[1]["pending"] == 20, 10)
            other = clients.submit(send, "second", "127.0.0.2")
            assert wait_until(lambda: server.request("GET", "/health")[1]["pending"] == 21, 10)
        assert other.result(60) == 200 and all(future.result(60) == 200 for future in many)
        # per request it would come last (twentieth after the one at the worker); per client, third
        assert finished.index("second") < 5, finished


@pytest.mark.parametrize("xml_input", ["inclusive", "constraint"])
def test_markup_a_worker_cannot_read_is_a_400_and_no_worker_dies(tiny_system, xml_input):
    """A zone beyond the line's words used to kill a worker twice (IndexError) and ``span="²"`` gave a 500 and a
    traceback (int() refuses a digit that str.isdigit() accepts). (Their wording is the markup reader's where it
    finds them first: the server says which sentence.)"""
    zone, digit = 'a b c <zone span="0-50"/>', 'a <wall span="\u00b2"/> b'
    with serving(tiny_system, "--xml-input", xml_input) as server:
        for text in (zone, digit):
            status, answer = server.post_json("/translate", [{"src": text}])
            assert status == 400 and answer["error"].startswith("sentence 1: malformed markup: "), answer
            escaped = text.replace("<", "&lt;").replace(">", "&gt;").encode()
            assert server.fault(
                b"<?xml version='1.0'?><methodCall><methodName>translate</methodName><params><param><value><struct>"
                b"<member><name>text</name><value>" + escaped + b"</value></member></struct></value></param></params>"
                b"</methodCall>"
            ) == (-32000, answer["error"])
        assert "3 words" in server.post_json("/translate", [{"src": zone}])[1]["error"]
        assert "\u00b2" in server.post_json("/translate", [{"src": digit}])[1]["error"]
        started = time.monotonic()  # another client is served at once, by the same worker
        status, answer = server.post_json("/translate", [{"src": "a b c"}], source="127.0.0.2")
        assert status == 200 and answer[0][0]["tgt"] == "x y z" and time.monotonic() - started < 2
        assert server.request("GET", "/health")[1]["workers_replaced"] == 0
        assert "Traceback" not in "".join(server.log)
