"""The page at ``/`` of ``pysmt serve``: its files as the server answers them, and the page itself in a real browser.

The browser tests (slow: they start ``pysmt serve``) drive Debian's headless Chromium (``setup.sh`` installs it
where it is missing and the set-up runs as root with apt-get; a machine without it fails them, saying so): it loads
``/?q=SENTENCE``, which translates on load, and dumps the DOM its script built, which is read here and compared with
what the JSON interface answers for the same sentence. The page as the browser drew it is kept as a screenshot,
``serve-page.png``, in ``$PYSMT_TEST_ARTIFACTS`` or else ``test-artifacts/`` at the repository's root.
"""

from __future__ import annotations

import asyncio
import math
import os
import shutil
import signal
import subprocess
import urllib.parse
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("aiohttp")

from aiohttp.test_utils import TestClient, TestServer  # noqa: E402

from pysmt.serving.server import application  # noqa: E402
from tests.helpers import raw_text_system  # noqa: E402
from tests.serving.servers import Server, serving  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
#: How long one Chromium run may take (it takes about two seconds).
BROWSER_TIMEOUT = 60


async def fetched(*paths: str) -> list[tuple[int, dict[str, str], bytes]]:
    """The status, headers and body with which the server's application answers ``GET`` of each path."""
    options = SimpleNamespace(max_request_bytes=1 << 20, write_timeout=10.0)  # (all the page's answers use)
    app = application(options, SimpleNamespace())
    async with TestClient(TestServer(app)) as client:
        answers = []
        for path in paths:
            response = await client.get(path)
            answers.append((response.status, dict(response.headers), await response.read()))
        return answers


def test_the_page_and_its_files_are_served_with_a_content_security_policy():
    page, script, style, unknown, outside = asyncio.run(
        fetched("/", "/page/page.js", "/page/page.css", "/page/nothing.js", "/page/../server.py")
    )
    status, headers, body = page
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    assert headers["Content-Security-Policy"].startswith("default-src 'self';")
    assert b'<script src="/page/page.js" defer></script>' in body and b"http" not in body  # nothing from elsewhere
    assert script[0] == 200 and script[1]["Content-Type"] == "text/javascript; charset=utf-8"
    assert b"innerHTML" not in script[2]  # the page builds its elements, never parses text as HTML
    assert style[0] == 200 and style[1]["Content-Type"] == "text/css; charset=utf-8"
    assert unknown[0] == 404 and outside[0] == 404


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    text: list[str] = field(default_factory=list)

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())


class Elements(HTMLParser):
    """Every element of a document, in document order, each with the text inside it."""

    def __init__(self, document: str) -> None:
        super().__init__()
        self.nodes: list[Node] = []
        self.open: list[Node] = []
        self.feed(document)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {name: value or "" for name, value in attrs})
        self.nodes.append(node)
        if tag not in {"meta", "link", "input", "br", "img"}:  # (void elements have no end tag)
            self.open.append(node)

    def handle_endtag(self, tag: str) -> None:
        while self.open:
            if self.open.pop().tag == tag:
                break

    def handle_data(self, data: str) -> None:
        for node in self.open:
            node.text.append(data)

    def having(self, css_class: str) -> list[Node]:
        return [node for node in self.nodes if css_class in node.classes]

    def text(self, node: Node) -> str:
        return "".join(node.text)


def artifacts() -> Path:
    folder = Path(os.environ.get("PYSMT_TEST_ARTIFACTS") or ROOT / "test-artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def chromium(profile: Path, url: str, *how: str) -> str:
    """Headless Chromium's stdout after loading ``url`` and running its scripts (``how``: what it does, e.g.
    ``--dump-dom``), within :data:`BROWSER_TIMEOUT` seconds; it and its children are killed after."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.fail("Chromium is not installed: bash setup.sh installs it (as root: apt-get install chromium)")
    proc = subprocess.Popen(
        [
            browser,
            "--headless=new",
            "--no-sandbox",  # (root in a container)
            "--disable-gpu",
            "--no-first-run",
            f"--user-data-dir={profile}",  # its own profile: runs side by side do not share one
            "--virtual-time-budget=5000",  # the page's requests answered before the DOM is dumped
            "--window-size=1200,1400",
            *how,
            url,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=BROWSER_TIMEOUT)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    assert proc.returncode == 0, err[-2000:]
    return out


def page_of(server: Server, profile: Path, sentence: str, nbest: int) -> Elements:
    query = urllib.parse.urlencode({"q": sentence, "n": nbest})
    page = Elements(chromium(profile, f"http://127.0.0.1:{server.port}/?{query}", "--dump-dom"))
    assert any(node.tag == "body" and node.attrs.get("data-ready") == "true" for node in page.nodes), page.nodes
    return page


def boxes(page: Elements, side: str) -> list[tuple[int, int, int, str]]:
    """The phrase boxes of one side, in their order on the page: phrase number, first word, end, the words."""
    return [
        (
            int(node.attrs["data-phrase"]),
            int(node.attrs["data-start"]),
            int(node.attrs["data-end"]),
            "".join(node.text[1:]),  # (after the box's number)
        )
        for node in page.having(f"{side}-phrase")
    ]


def expected_boxes(entry: dict) -> tuple[list[tuple[int, int, int, str]], list[tuple[int, int, int, str]]]:
    """The source boxes (in source order) and target boxes (in target order) of an entry of ``/translate``."""
    source, target = entry["src_words"], entry["tgt"].split()
    phrases = list(enumerate(entry["phrases"]))
    by_source = sorted(phrases, key=lambda p: (p[1]["src_start"], p[1]["src_end"]))
    return (
        [(k, p["src_start"], p["src_end"], " ".join(source[p["src_start"] : p["src_end"]])) for k, p in by_source],
        [(k, p["tgt_start"], p["tgt_end"], " ".join(target[p["tgt_start"] : p["tgt_end"]])) for k, p in phrases],
    )


@pytest.mark.slow
def test_chromium_shows_a_sentences_phrases_alignment_nbest_list_and_settings(tiny_system, tmp_path):
    """The page as Chromium builds it shows what the JSON interface answers for the sentence: the same phrase
    boxes, alignment links and n-best entries with each feature's weighted score; and the system's settings. Its
    screenshot is kept: serve-page.png in $PYSMT_TEST_ARTIFACTS, else test-artifacts/ at the repository's root."""
    sentence = "a b c"
    with serving(tiny_system) as server:
        status, answer = server.post_json("/translate", [{"src": sentence, "n_best": 3, "details": True}])
        assert status == 200
        (entries,) = answer
        page = page_of(server, tmp_path / "profile", sentence, 3)
        shot = artifacts() / "serve-page.png"
        shot.unlink(missing_ok=True)
        query = urllib.parse.urlencode({"q": sentence, "n": 3})
        chromium(tmp_path / "profile", f"http://127.0.0.1:{server.port}/?{query}", f"--screenshot={shot}")
    assert shot.stat().st_size > 0
    for entry in entries:  # (the features' shares make the total)
        assert math.fsum(feature["weighted"] for feature in entry["features"]) == pytest.approx(entry["pred_score"])
    best = entries[0]
    assert [page.text(node) for node in page.having("translation")] == [best["tgt"]]
    source, target = expected_boxes(best)
    assert len(source) >= 2 and boxes(page, "source") == source and boxes(page, "target") == target
    assert sorted(node.attrs["data-link"] for node in page.having("link")) == sorted(best["align"][0].split())
    rows = page.having("nbest-entry")
    assert [int(row.attrs["data-rank"]) for row in rows] == list(range(len(entries)))
    assert [page.text(node) for node in page.having("hypothesis")] == [entry["tgt"] for entry in entries]
    assert [page.text(node) for node in page.having("total")] == [f"{entry['pred_score']:.3f}" for entry in entries]
    weighted = [(node.attrs["data-feature"], page.text(node)) for node in page.having("weighted")]
    assert weighted == [
        (feature["name"], f"{feature['weighted']:.3f}") for entry in entries for feature in entry["features"]
    ]
    settings = {node.attrs["data-setting"]: page.text(node) for node in page.nodes if "data-setting" in node.attrs}
    assert settings["config"] == str(tiny_system) and settings["features"].startswith("KENLM0, Distortion0")
    assert "pass-through" in settings["opt"]


@pytest.mark.slow
def test_what_the_client_and_the_model_send_is_shown_as_text(tiny_system, tmp_path):
    """A sentence of markup and ampersands (passed through as unknown words) is shown as the text it is: no element
    of it enters the page (one script, the page's own; no <b>)."""
    sentence = "a <script>document.title='x'</script> & <b>b</b> &amp; c"
    with serving(tiny_system) as server:
        status, answer = server.post_json("/translate", [{"src": sentence, "n_best": 1, "details": True}])
        assert status == 200
        page = page_of(server, tmp_path / "profile", sentence, 1)
    (best,) = answer[0]
    assert "<script>" in best["tgt"] and "&amp;" in best["tgt"]  # (what the model returned holds them)
    assert [node.attrs for node in page.nodes if node.tag == "script"] == [{"src": "/page/page.js", "defer": ""}]
    assert not [node for node in page.nodes if node.tag == "b"]
    assert [page.text(node) for node in page.having("translation")] == [best["tgt"]]
    assert [page.text(node) for node in page.nodes if node.tag == "textarea"] == [sentence]
    assert [page.text(node) for node in page.nodes if node.tag == "title"] == ["pysmt: how a sentence is translated"]
    source, target = expected_boxes(best)
    assert boxes(page, "source") == source and boxes(page, "target") == target


@pytest.mark.slow
def test_markup_is_read_where_the_server_reads_it(tiny_system, tmp_path):
    """With ``--xml-input exclusive`` the page says so, and the source boxes hold the sentence's words, not its
    tags; the phrase the markup gives is the one the translation takes."""
    sentence = 'a <w translation="q">b</w> c'
    with serving(tiny_system, "--xml-input", "exclusive") as server:
        status, answer = server.post_json("/translate", [{"src": sentence, "n_best": 1, "details": True}])
        assert status == 200
        page = page_of(server, tmp_path / "profile", sentence, 1)
    (best,) = answer[0]
    assert best["src_words"] == ["a", "b", "c"] and "q" in best["tgt"].split()
    source, target = expected_boxes(best)
    assert boxes(page, "source") == source and boxes(page, "target") == target
    assert "reads XML markup in the sentence (--xml-input exclusive)" in "".join(
        page.text(node) for node in page.nodes if node.attrs.get("id") == "markup-note"
    )


@pytest.mark.slow
def test_a_system_that_restores_raw_text_is_shown_in_its_words(tmp_path):
    """On a system with ``[processing]`` the boxes hold the words sent and returned (raw text), as the JSON
    interface counts them, not the model's tokens."""
    sentence = "a, b."
    with serving(raw_text_system(tmp_path / "system")) as server:
        status, answer = server.post_json("/translate", [{"src": sentence, "n_best": 1, "details": True}])
        assert status == 200
        page = page_of(server, tmp_path / "profile", sentence, 1)
    (best,) = answer[0]
    assert best["src_words"] == ["a,", "b."]
    source, target = expected_boxes(best)
    assert boxes(page, "source") == source and boxes(page, "target") == target
    assert {words for *_, words in source} <= {"a,", "b.", "a, b."}
