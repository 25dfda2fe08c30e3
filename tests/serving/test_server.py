"""``pysmt serve`` on 127.0.0.1, with real clients: Python's ``xmlrpc.client`` as Moses' clients use it, and
HTTP for the JSON interface. Every server is bounded in time and stopped by the test that started it."""

from __future__ import annotations

import gzip
import json
import os
import signal
import xmlrpc.client
from concurrent.futures import ThreadPoolExecutor

import pytest

from pysmt.testing import TargetWordsFeature, one_line_error, registered_for_commands, run_pysmt, write_toy_system
from tests.helpers import alive, raw_text_system, wait_until
from tests.serving.servers import serving, stopped

pytest.importorskip("aiohttp")
pytestmark = pytest.mark.slow  # every test starts `pysmt serve`

SENTENCES = ["a b c", "c b a", "b c", "a", "c a b c"]


@pytest.fixture
def decoded(tiny_system, tmp_path):
    """What ``pysmt decode`` gives for SENTENCES: 1-best lines, 5-best lists (by sentence) and alignments."""
    source = tmp_path / "in.txt"
    source.write_text("\n".join(SENTENCES) + "\n")
    nbest, alignment = tmp_path / "nbest.txt", tmp_path / "align.txt"
    run = run_pysmt(
        "decode", "-c", tiny_system, "-i", source, "--nbest", nbest, "--nbest-size", "5", "--alignment", alignment
    )
    assert run.returncode == 0, run.stderr
    lists: list[list[tuple[str, str, float]]] = [[] for _ in SENTENCES]
    for line in nbest.read_text().splitlines():
        index, words, scores, total = line.split(" ||| ")
        lists[int(index)].append((words, scores, float(total)))
    return run.stdout.splitlines(), lists, alignment.read_text().splitlines()


def test_moses_clients_get_what_decode_gives(tiny_system, decoded):
    best, lists, alignments = decoded
    with serving(tiny_system, workers=2) as server:
        for k, text in enumerate(SENTENCES):
            plain = server.rpc.translate({"text": text})
            assert plain == {"text": "".join(f"{word} " for word in best[k].split())}  # Moses: a space after each
            full = server.rpc.translate(
                {
                    "text": text,
                    "nbest": 5,
                    "add-score-breakdown": "true",
                    "word-align": True,
                    "nbest-distinct": "false",
                    "session-id": 7,
                }
            )
            assert full["session-id"] == 7
            assert [(e["hyp"].strip(), e["fvals"].strip(), e["totalScore"]) for e in full["nbest"]] == [
                (words, scores, pytest.approx(total, abs=1e-6)) for words, scores, total in lists[k]
            ]
            links = " ".join(f"{link['source-word']}-{link['target-word']}" for link in full["word-align"])
            assert sorted(links.split()) == sorted(alignments[k].split())


def test_phrase_alignment_and_segmentation_as_mosesserver_writes_them(tiny_system):
    with serving(tiny_system) as server:
        answer = server.rpc.translate({"text": "a b c", "align": "true"})
        # the toy system's best: "a b" -> "x y" (one phrase), "c" -> "z"; ends included, as Moses' ranges
        assert answer["text"] == "x y |0-1| z |2-2| "
        assert answer["align"] == [
            {"tgt-start": 0, "tgt-end": 1, "src-start": 0, "src-end": 1},
            {"tgt-start": 2, "tgt-end": 2, "src-start": 2, "src-end": 2},
        ]
        quiet = server.rpc.translate({"text": "a b c", "align": True, "no-ReportSegmentation": "1"})
        assert quiet["text"] == "x y z " and quiet["align"] == answer["align"]
        assert server.rpc.translate({"text": ""}) == {"text": ""}


def test_json_clients_get_what_decode_gives_per_input_and_in_opennmts_shape(tiny_system, decoded):
    best, lists, alignments = decoded
    with serving(tiny_system, "--nbest-size", "2", workers=2) as server:
        status, answer = server.post_json("/translate", [{"src": s, "id": 0, "n_best": 5} for s in SENTENCES])
        assert status == 200
        for k, entries in enumerate(answer):
            assert [(e["src"], e["tgt"], e["n_best"], e["pred_score"]) for e in entries] == [
                (SENTENCES[k], words, 5, pytest.approx(total, abs=1e-6)) for words, _, total in lists[k]
            ]
            assert entries[0]["tgt"] == best[k] and entries[0]["align"] == [alignments[k]]
        status, by_rank = server.post_json("/translator/translate", [{"src": s} for s in SENTENCES])
        assert status == 200 and len(by_rank) == 2 and all(len(rank) == len(SENTENCES) for rank in by_rank)
        assert [e["tgt"] for e in by_rank[0]] == best
        assert server.request("GET", "/health")[1]["status"] == "ok"
        status, models = server.request("GET", "/translator/models")
        assert status == 200 and models[0]["model_id"] == 0 and "KENLM0" in models[0]["features"]


def test_raw_text_in_and_out_and_alignments_that_count_the_words_returned(tmp_path):
    """A mosesserver client (Python's xmlrpc.client, as Moses' sample client) and a JSON client on a system that
    tokenizes "a, b." into "a , b ." and detokenizes "x , y ." into "x, y.": the indices count the words of the
    text returned, split on spaces, and with the marks that text is the model's tokens."""
    system = raw_text_system(tmp_path / "raw")
    expected = run_pysmt("decode", "-c", system, input="a, b.\n").stdout.strip()
    marked = run_pysmt("decode", "-c", system, "--report-segmentation", input="a, b.\n").stdout.strip()
    assert (expected, marked) == ("x, y.", "x , |0-1| y |2-2| . |3-3|")

    def within(answer: dict, text: str, source: str) -> None:  # every index names a word of the texts
        for link in answer.get("word-align", []):
            assert link["source-word"] < len(source.split()) and link["target-word"] < len(text.split())
        for phrase in answer.get("align", []):
            assert phrase["src-end"] < len(source.split()) and phrase["tgt-end"] < len(text.split())

    with serving(system) as server:
        status, answer = server.post_json("/translate", [{"src": "a, b.", "n_best": 3}])
        assert status == 200 and answer[0][0]["tgt"] == expected and answer[0][0]["align"] == ["0-0 1-1"]
        for entry in answer[0]:
            assert all(
                int(s) < 2 and int(t) < len(entry["tgt"].split())
                for s, t in (link.split("-") for link in entry["align"][0].split())
            )
        assert server.rpc.translate({"text": "a, b."}) == {"text": expected}
        # the marks: Moses' text, in the model's tokens, and every index counting tokens (as decode's marks)
        segmented = server.rpc.translate({"text": "a, b.", "align": "true", "word-align": "true"})
        assert segmented["text"] == marked + " "
        assert segmented["align"] == [
            {"tgt-start": 0, "tgt-end": 1, "src-start": 0, "src-end": 1},
            {"tgt-start": 2, "tgt-end": 2, "src-start": 2, "src-end": 2},
            {"tgt-start": 3, "tgt-end": 3, "src-start": 3, "src-end": 3},
        ]
        assert [(w["source-word"], w["target-word"]) for w in segmented["word-align"]] == [(k, k) for k in range(4)]
        within(
            segmented, segmented["text"].replace("|0-1| ", "").replace("|2-2| ", "").replace("|3-3| ", ""), "a , b ."
        )
        # no marks: the raw text, its words counted ("x," of "x" and ","; "y" and "." share "y.")
        aligned = server.rpc.translate(
            {"text": "a, b.", "word-align": True, "align": True, "no-ReportSegmentation": "1"}
        )
        assert aligned["text"] == expected
        assert aligned["word-align"] == [{"source-word": 0, "target-word": 0}, {"source-word": 1, "target-word": 1}]
        assert aligned["align"] == [
            {"tgt-start": 0, "tgt-end": 0, "src-start": 0, "src-end": 0},
            {"tgt-start": 1, "tgt-end": 1, "src-start": 1, "src-end": 1},
            {"tgt-start": 1, "tgt-end": 1, "src-start": 1, "src-end": 1},
        ]
        listed = server.rpc.translate({"text": "a, b.", "word-align": "true", "nbest": 3})
        assert listed["text"] == expected and listed["nbest"][0]["hyp"] == expected
        for entry in listed["nbest"]:
            within(entry, entry["hyp"], "a, b.")


def test_bad_requests_get_a_clear_4xx_or_fault_and_the_server_goes_on(tiny_system):
    limits = ["--max-request-size", "2K", "--max-sentences", "3", "--max-words", "5", "--max-nbest", "10"]
    with serving(tiny_system, *limits) as server:

        def refused(status: int, words: str, body: bytes, path: str = "/translate", **headers: str) -> None:
            got, answer = server.request("POST", path, body, headers)
            assert got == status and answer["status"] == "error" and words in answer["error"], answer

        refused(400, "not valid JSON", b'[{"src": ')
        refused(400, "not valid UTF-8", b'[{"src": "\xff"}]')
        refused(400, "empty", b"")
        refused(400, "non-empty list", b"[]")
        refused(400, "expected", b'[{"text": "a"}]')
        refused(404, "no model 3", b'[{"src": "a", "id": 3}]')
        refused(400, "n_best", b'[{"src": "a", "n_best": 11}]')
        refused(413, "--max-request-size", json.dumps([{"src": "a " * 1500}]).encode())
        refused(413, "--max-sentences", json.dumps([{"src": "a"}] * 4).encode())
        refused(413, "sentence 2 has 6 words", json.dumps([{"src": "a"}, {"src": "a b c a b c"}]).encode())
        refused(415, "Content-Encoding", gzip.compress(b'[{"src": "a"}]'), **{"Content-Encoding": "gzip"})
        refused(400, "/translate", json.dumps([{"src": "a", "n_best": 3}]).encode(), "/translator/translate")

        def fault(code: int, words: str, call) -> None:
            with pytest.raises(xmlrpc.client.Fault) as caught:
                call()
            assert caught.value.faultCode == code and words in caught.value.faultString, caught.value

        rpc = server.rpc
        fault(-503, "Missing source text", lambda: rpc.translate({"txt": "a"}))
        fault(-506, "not defined", lambda: rpc.close_session({"session-id": 2}))
        fault(-32602, "nbest must be an int", lambda: rpc.translate({"text": "a", "nbest": "5"}))
        fault(-32602, "align must be a boolean", lambda: rpc.translate({"text": "a", "align": "maybe"}))
        fault(-32000, "does not support sg", lambda: rpc.translate({"text": "a", "sg": "true"}))
        fault(-32000, "has 6 words", lambda: rpc.translate({"text": "a b c a b c"}))

        raw_fault = server.fault
        assert raw_fault(b"<methodCall><methodName>translate")[0] == -503
        bomb = (
            b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]>'
            b"<methodCall><methodName>translate</methodName><params><param><value><struct><member><name>text"
            b"</name><value><string>&b;</string></value></member></struct></value></param></params></methodCall>"
        )
        assert raw_fault(bomb)[0] == -503 and "EntitiesForbidden" in raw_fault(bomb)[1]
        code, message = raw_fault(b"<x>" + b"a" * 4000 + b"</x>")
        assert code == -32000 and "--max-request-size" in message
        # after all that, the server still translates
        assert rpc.translate({"text": "a b c"})["text"] == "x y z "
        assert server.post_json("/translate", [{"src": "a b c"}])[0] == 200


def test_a_request_over_its_time_is_answered_504_and_its_sentences_dropped(tiny_system):
    with serving(tiny_system, "--timeout", "1") as server:
        (worker,) = server.workers()
        with stopped(worker):
            status, answer = server.post_json("/translate", [{"src": "a b c"}])
            assert status == 504 and "--timeout" in answer["error"]
        assert server.post_json("/translate", [{"src": "c b a"}])[0] == 200
        assert wait_until(lambda: server.request("GET", "/health")[1]["pending"] == 0, 10)


def test_a_full_queue_turns_new_requests_away_with_503(tiny_system):
    with serving(tiny_system, "--max-pending", "2") as server, ThreadPoolExecutor(1) as waiting:
        (worker,) = server.workers()
        with stopped(worker):
            first = waiting.submit(server.post_json, "/translate", [{"src": "a"}, {"src": "b"}])
            assert wait_until(lambda: server.request("GET", "/health")[1]["pending"] == 2, 10)
            status, answer = server.post_json("/translate", [{"src": "c"}])
            assert status == 503 and "busy" in answer["error"]
        assert first.result(30)[0] == 200


def test_a_client_that_disconnects_leaves_the_server_serving_and_its_sentences_dropped(tiny_system):
    with serving(tiny_system) as server:
        (worker,) = server.workers()
        with stopped(worker):
            with server.connect() as client:
                body = json.dumps([{"src": "a b c"}] * 50).encode()
                client.sendall(
                    b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
                )
                assert wait_until(lambda: server.request("GET", "/health")[1]["pending"] == 50, 10)
            # the queue emptied: what is left is the sentence the frozen worker is at
            assert wait_until(lambda: server.request("GET", "/health")[1]["pending"] == 1, 10)
        assert server.post_json("/translate", [{"src": "a b c"}])[0] == 200
        assert wait_until(lambda: server.request("GET", "/health")[1]["pending"] == 0, 10)


def test_a_worker_that_dies_is_replaced_and_its_requests_answered(tiny_system):
    with serving(tiny_system, workers=2) as server, ThreadPoolExecutor(1) as waiting:
        first, second = server.workers()
        with stopped(first), stopped(second):  # both frozen: the request's sentences wait on them
            answer = waiting.submit(server.post_json, "/translate", [{"src": s} for s in SENTENCES])
            assert wait_until(lambda: server.request("GET", "/health")[1]["pending"] == len(SENTENCES), 10)
            os.kill(first, signal.SIGKILL)
        status, entries = answer.result(60)
        assert status == 200 and [e[0]["src"] for e in entries] == SENTENCES
        health = server.request("GET", "/health")[1]
        assert health["workers"] == 2 and health["workers_replaced"] == 1
        assert first not in server.workers()
        # (the server's stderr is read by a thread of the test: under load its line may come a moment later)
        assert wait_until(lambda: "a worker died" in "".join(server.log), 10), server.log


def test_sigterm_finishes_what_is_in_flight_refuses_new_work_and_exits_0(tiny_system):
    with serving(tiny_system) as server, ThreadPoolExecutor(1) as waiting:
        (worker,) = server.workers()
        with stopped(worker):
            in_flight = waiting.submit(server.post_json, "/translate", [{"src": "a b c"}])
            assert wait_until(lambda: server.request("GET", "/health")[1]["pending"] == 1, 10)
            os.kill(server.proc.pid, signal.SIGTERM)
            assert wait_until(lambda: "stopping" in "".join(server.log), 10)
            with pytest.raises(OSError):  # no longer listening
                server.request("GET", "/health", timeout=5)
        status, answer = in_flight.result(30)
        assert status == 200 and answer[0][0]["tgt"] == "x y z"
        assert server.proc.wait(30) == 0 and not alive(worker)


def test_serve_refuses_a_system_it_cannot_load_in_one_line(tmp_path):
    missing = run_pysmt("serve", "-c", tmp_path / "nope.ini")
    assert missing.returncode == 2  # click: the config must exist
    broken = tmp_path / "broken.ini"
    broken.write_text("[feature]\nKENLM path=nowhere.arpa order=3\n")
    run = run_pysmt("serve", "-c", broken, "--port", "0", timeout=120)
    one_line_error(run, "nowhere.arpa")


def test_the_server_binds_to_loopback_unless_told(tiny_system):
    with serving(tiny_system) as server:
        line = next(line for line in server.log if "listening on" in line)
        assert "http://127.0.0.1:" in line and "0.0.0.0" not in line


def test_markup_in_requests_as_mosesserver_with_xml_input(tiny_system, tmp_path):
    """As mosesserver run with -xml-input: markup in an XML-RPC ``text`` and a JSON ``src`` is read; a malformed
    tag is a fault (an error) naming what is wrong, and the server goes on."""
    marked = 'a <n translation="chat">b</n> c'
    with serving(tiny_system, "--xml-input", "exclusive", "--max-words", "5") as server:
        assert server.rpc.translate({"text": marked}) == {"text": "x chat z "}
        zoned = server.rpc.translate({"text": "<zone>a b</zone> <wall/> c", "align": "true"})
        assert zoned["text"] == "x y |0-1| z |2-2| "
        status, answer = server.post_json("/translate", [{"src": marked, "n_best": 2}])
        assert status == 200 and answer[0][0]["tgt"] == "x chat z" and answer[0][0]["align"] == ["0-0 2-2"]
        with pytest.raises(xmlrpc.client.Fault) as caught:
            server.rpc.translate({"text": "a <n>b"})
        assert "sentence 1: malformed markup: <n> is never closed" in caught.value.faultString
        status, answer = server.post_json("/translate", [{"src": "a b"}, {"src": 'a <n translation="x>b</n>'}])
        assert status == 400 and "sentence 2: malformed markup: malformed attributes in <n>" in answer["error"]
        # --max-words counts the words, not the tags
        assert server.rpc.translate({"text": '<n translation="x y z w v u">a</n> b c <wall/> a b'})["text"]
        assert server.rpc.translate({"text": "a b c"}) == {"text": "x y z "}
        assert server.request("GET", "/translator/models")[1][0]["opt"]["xml-input"] == "exclusive"
    system = raw_text_system(tmp_path / "raw")  # markup read before the tokenizer; indices count the words sent
    with serving(system, "--xml-input", "exclusive") as server:
        answer = server.rpc.translate({"text": 'a, <n translation="chat">b</n>.', "word-align": True})
        assert answer["text"] == "x, chat."
        # the words sent "a," "b" "." (a tag separates words), returned "x," "chat.": the markup has no alignment
        links = [(link["source-word"], link["target-word"]) for link in answer["word-align"]]
        assert links == [(0, 0), (2, 1)]


def test_a_system_with_a_feature_of_complete_translations_serves_the_rescored_translations(tmp_path):
    """The toy feature of complete translations (a translation's count of y, weight 2) re-ranks "a b c"'s list:
    "y y z" (-1.288991 + 2 x 2) before "x y z" (0.588356 + 2), as decode writes it."""
    system = write_toy_system(tmp_path / "system", features=["target-words"], weights={"TargetWords0": "2"})
    env = registered_for_commands(tmp_path / "plugins", target_words=TargetWordsFeature)
    with serving(system, env=env) as server:
        status, answer = server.post_json("/translate", [{"src": "a b c", "n_best": 2}, {"src": "c b a"}])
        assert status == 200, answer
        assert [(e["tgt"], e["pred_score"]) for e in answer[0]] == [
            ("y y z", pytest.approx(2.711009, abs=1e-6)),
            ("x y z", pytest.approx(2.588356, abs=1e-6)),
        ]
        assert [e["tgt"] for e in answer[1]] == ["z y y"]
        assert server.rpc.translate({"text": "a b c"}) == {"text": "y y z "}  # (Moses' trailing space)
        status, models = server.request("GET", "/translator/models")
        assert status == 200 and models[0]["features"][-1] == "TargetWords0"
