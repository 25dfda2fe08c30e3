"""The JSON interface, in the shape of OpenNMT-py's REST server.

``POST /translate`` takes ``[{"src": "...", "id": N}, ...]``: each item a sentence (raw text for a
system that ``pysmt train`` made, as ``pysmt decode`` takes it), ``id`` the model (OpenNMT's model
id; this server has one, ``--model-id``, and an item may leave it out), and optionally ``n_best``
(pysmt's addition; default ``--nbest-size``). It answers, per input in order, the list of its n-best
entries ``{"src", "tgt", "n_best", "pred_score", "align"}``: ``tgt`` the translation as ``pysmt
decode`` writes it, ``pred_score`` its model score, ``align`` its source-target word alignment
(``["0-0 1-2 ..."]``, Pharaoh, a list as OpenNMT gives one per segment), counting the words of ``src`` and
``tgt`` split on spaces (on a system that prepares its text, a word of several model tokens takes all their
links: :mod:`pysmt.serving.words`).

An item with ``"details": true`` (pysmt's addition, for the page at ``/``: :mod:`pysmt.serving.page`) has each
entry say also how it was made: ``src_words``, the words of ``src`` that the positions count (its markup's tags
left out where the server reads markup, ``--xml-input``); ``phrases``, the phrase pairs in target order, each
``{"src_start", "src_end", "tgt_start", "tgt_end"}`` (word positions, ends excluded, the words of ``src_words``
and of ``tgt`` split on spaces); and ``features``, per feature of the n-best lists in their order, ``{"name",
"scores", "weights", "weighted"}``: its scores, the weights that total them (the rescoring pass's on a system
that has one) and its share of ``pred_score``, the scores times the weights.

OpenNMT-py's own server answers the other way round, a list per n-best rank of every input's entry:
``POST /translator/translate`` answers exactly so (every input with ``--nbest-size`` entries), so
that OpenNMT clients need only the address. ``GET /health`` and ``GET /models`` (also under
``/translator/``) say whether the server is up and which system it serves. Errors are a 4xx or 5xx
with ``{"error": "...", "status": "error"}``.

A request nests two levels (a list of objects of strings and numbers); one nested deeper than
:data:`MAX_DEPTH` is refused before it is parsed, as Python's parser recurses (``[`` × 3,000 would
reach the interpreter's recursion limit). Every value is bounded: a number of more than
:data:`MAX_NUMBER_CHARS` characters (Python reads no integer of more than 4,300 digits), one beyond a
double's range (``1e999``) and JSON's non-numbers (``NaN``, ``Infinity``) are refused (400), as is a
``src`` that is no Unicode text (a lone surrogate, ``"\\ud800"``); strings and lists are bounded by the
request's size (``--max-request-size``), sentences by ``--max-sentences`` and ``--max-words``.
"""

from __future__ import annotations

import json
import math
import operator
import re
from dataclasses import dataclass
from typing import Any

from pysmt.decoder import Candidate
from pysmt.files.formats import alignment_line

#: The deepest nesting of lists and objects a request may have (a legal one has two levels).
MAX_DEPTH = 32
#: A JSON string (its brackets are text, not nesting). Possessive, so that an unterminated one costs linear time.
STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.DOTALL)
#: Every byte but the brackets.
NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))
#: The longest number a request may write, in characters (its numbers, n_best and id, are small integers).
MAX_NUMBER_CHARS = 100


class BadRequest(Exception):
    """A request this server refuses: its HTTP status and why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Item:
    src: str
    n_best: int
    #: Whether its entries say how they were made (``"details": true``).
    details: bool = False


@dataclass(frozen=True)
class Scoring:
    """How the system served totals a translation's scores: its n-best lists' features (name, first score, end)
    and the weights, one per score."""

    labels: list[tuple[str, int, int]]
    weights: list[float]


def too_deep(body: bytes) -> bool:
    """Whether the JSON text nests lists and objects deeper than :data:`MAX_DEPTH` (brackets within strings do not
    count), found without parsing it."""
    depth = 0
    for bracket in STRING.sub(b"", body).translate(None, NOT_BRACKETS):
        depth += 1 if bracket in b"[{" else -1
        if depth > MAX_DEPTH:
            return True
    return False


def number_text(text: str) -> str:
    """A number's text, refused when longer than :data:`MAX_NUMBER_CHARS`."""
    if len(text) > MAX_NUMBER_CHARS:
        raise BadRequest(
            400, f"the request holds a number of {len(text):,} characters; this server reads up to {MAX_NUMBER_CHARS}"
        )
    return text


def finite(text: str) -> float:
    """A JSON number with a fraction or exponent, refused beyond a double's range (``1e999``)."""
    value = float(number_text(text))
    if not math.isfinite(value):
        raise BadRequest(400, f"the request holds the number {text}, beyond a double's range")
    return value


def not_a_number(name: str) -> float:
    """``NaN``, ``Infinity``, ``-Infinity``: Python's json reads them, JSON (RFC 8259) has none."""
    raise BadRequest(400, f"the request holds {name}, which is not JSON (RFC 8259 has no such number)")


def load(body: bytes) -> Any:
    """The JSON value of a request's body, its numbers bounded."""
    try:
        return json.loads(
            body.decode("utf-8"),
            parse_int=lambda text: int(number_text(text)),
            parse_float=finite,
            parse_constant=not_a_number,
        )
    except UnicodeDecodeError as err:
        raise BadRequest(400, f"the request is not valid UTF-8 ({err.reason} at byte {err.start})") from None
    except json.JSONDecodeError as err:
        raise BadRequest(
            400, f"the request is not valid JSON ({err.msg} at line {err.lineno}, column {err.colno})"
        ) from None


def is_text(value: str) -> bool:
    """Whether ``value`` is Unicode text: JSON's ``\\ud800`` escapes make lone surrogates, which are none (no UTF-8
    encodes them: refused as invalid UTF-8 is, not left for a tokenizer or file to fail on)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def parse_items(body: bytes, model_id: int, nbest_size: int, max_nbest: int) -> list[Item]:
    """The checked items of a ``/translate`` request."""
    if too_deep(body):
        raise BadRequest(
            400,
            f"the request nests lists and objects more than {MAX_DEPTH} deep (a request is a list "
            'of objects: [{"src": "...", "id": N}, ...])',
        )
    data = load(body)
    if not isinstance(data, list) or not data:
        raise BadRequest(400, 'expected a non-empty list of inputs, [{"src": "...", "id": N}, ...]')
    items = []
    for number, entry in enumerate(data, start=1):
        if not isinstance(entry, dict) or not isinstance(entry.get("src"), str):
            raise BadRequest(400, f'input {number}: expected {{"src": "...", "id": N}}, not {json.dumps(entry)[:80]}')
        if not is_text(entry["src"]):
            raise BadRequest(
                400, f"input {number}: src is not Unicode text (it holds a lone surrogate, \\ud800-\\udfff)"
            )
        model = entry.get("id", model_id)
        if model != model_id:
            raise BadRequest(404, f"input {number}: no model {model!r} here (this server's model is {model_id})")
        n_best = entry.get("n_best", nbest_size)
        if isinstance(n_best, bool) or not isinstance(n_best, int) or not 1 <= n_best <= max_nbest:
            raise BadRequest(400, f"input {number}: n_best must be an integer from 1 to {max_nbest}, not {n_best!r}")
        details = entry.get("details", False)
        if not isinstance(details, bool):
            raise BadRequest(400, f"input {number}: details must be true or false, not {details!r}")
        items.append(Item(entry["src"], n_best, details))
    return items


def entries(
    item: Item,
    candidates: list[Candidate],
    texts: list[str],
    scoring: Scoring | None = None,
    source_words: list[str] | None = None,
) -> list[dict[str, Any]]:
    """An input's n-best entries, best first (fewer when the sentence has fewer translations); with the item's
    ``details`` (and the system's ``scoring``, the ``source_words`` its positions count) how each was made."""
    return [
        {
            "src": item.src,
            "tgt": text,
            "n_best": item.n_best,
            "pred_score": candidate.total,
            "align": [alignment_line(candidate)],
            **(details(candidate, scoring, source_words or []) if item.details and scoring is not None else {}),
        }
        for candidate, text in zip(candidates[: item.n_best], texts)
    ]


def details(candidate: Candidate, scoring: Scoring, source_words: list[str]) -> dict[str, Any]:
    """How a translation was made: its source's words, its phrase pairs and every feature's weighted score."""
    features = []
    for name, lo, hi in scoring.labels:
        scores = [float(candidate.scores[k]) for k in range(lo, hi)]
        weights = scoring.weights[lo:hi]
        weighted = math.fsum(map(operator.mul, scores, weights))
        features.append({"name": name, "scores": scores, "weights": weights, "weighted": weighted})
    return {
        "src_words": source_words,
        "phrases": [
            {"src_start": s0, "src_end": s1, "tgt_start": t0, "tgt_end": t1} for s0, s1, t0, t1 in candidate.phrases
        ],
        "features": features,
    }


def by_rank(per_input: list[list[dict[str, Any]]], n_best: int) -> list[list[dict[str, Any]]]:
    """OpenNMT-py's shape: one list per n-best rank, of every input's entry of that rank (an input with fewer
    translations than ranks repeats its last, so that every list has an entry per input, in input order)."""
    return [[answer[min(rank, len(answer) - 1)] for answer in per_input] for rank in range(n_best)]


def error(message: str) -> dict[str, str]:
    return {"error": message, "status": "error"}
