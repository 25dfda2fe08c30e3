"""The page at ``/``: a sentence's translation as the system made it, for a person (teaching, debugging, comparing).

It shows the phrase segmentation (the source and target phrases as boxes numbered and coloured alike), the word
alignment, the n-best list with each feature's weighted score, and the system's settings (``/models``). It is
plain HTML, CSS and JavaScript shipped in the package (``static/``, no build step, nothing fetched from elsewhere:
it works offline) and asks this server's JSON interface, same origin, for all it shows (``/translate`` with
``"details": true``: :mod:`~pysmt.serving.json_api`). ``/?q=SENTENCE&n=N`` translates on load, so that a page can
be linked to and a browser without a person (the tests' headless Chromium) can load one.

Everything the page shows from the model or the client is put in the document as text nodes and attribute values
(``textContent``, ``createElement``), never parsed as HTML, and its Content-Security-Policy allows only this
origin's scripts, styles and requests: a sentence or phrase table holding ``<script>`` shows it as text.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from importlib import resources

from aiohttp import web

#: The page's files besides ``index.html``, served under ``/page/`` (only these: any other path is a 404), and their
#: content types.
ASSETS = {"page.js": "text/javascript", "page.css": "text/css"}
#: Sent with each of the page's files: nothing but this origin's, no inline script or style, no framing.
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def read(name: str) -> bytes:
    return (resources.files(__package__) / "static" / name).read_bytes()


def handler(name: str, content_type: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    """A handler answering one of the page's files (read once, when the server starts)."""
    body = read(name)

    async def answer(request: web.Request) -> web.Response:
        return web.Response(body=body, content_type=content_type, charset="utf-8", headers=HEADERS)

    return answer


def add_routes(router: web.UrlDispatcher) -> None:
    """``GET /``: the page; ``GET /page/NAME``: its script and style."""
    router.add_get("/", handler("index.html", "text/html"))
    for name, content_type in ASSETS.items():
        router.add_get(f"/page/{name}", handler(name, content_type))
