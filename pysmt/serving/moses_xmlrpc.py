"""Moses' XML-RPC protocol, as ``mosesserver`` speaks it at ``/RPC2``, so that Moses' clients work unchanged.

The one method is ``translate``, called with one struct:

* ``text`` (string, required): the sentence, as ``pysmt decode`` takes it (tokenized for a Moses
  system; raw text for a system that ``pysmt train`` made, unless the server is ``--prepared``);
* ``align``, ``word-align``, ``nbest-distinct``, ``add-score-breakdown``, ``no-ReportSegmentation``
  (flags: an XML-RPC boolean, or a string such as ``"true"``/``"1"``/``"no"``, as Moses' own
  clients send them); ``nbest`` (int: the n-best list's size, 0 for none); ``session-id`` (int,
  echoed back: pysmt keeps no session state); ``report-all-factors`` and ``output-factors``
  (meaningless for single-factor systems, accepted).

It returns a struct, as mosesserver does: ``text``; with ``align``, ``align`` (the phrases in target
order: ``src-start``, ``src-end``, ``tgt-start``, ``tgt-end``, word positions, ends included) and,
unless ``no-ReportSegmentation``, the segmentation in ``text`` (``a b |0-1| c |2-2| ``); with
``word-align``, ``word-align`` (``source-word``, ``target-word``); with ``nbest``, ``nbest``: per
entry ``hyp`` (as ``text``), ``totalScore``, and with ``add-score-breakdown`` ``fvals`` (the n-best
list's feature string, ``" LM0= -12.3 ..."``), plus ``align``/``word-align`` when asked for. Token
output is written as Moses writes it, each token followed by a space, and the marks as Moses 4's
``-report-segmentation`` writes them (`` |i-j| `` after each phrase that has words).

On a system with ``[processing]`` (raw text in, raw text out) the indices speak the words of the text
returned, split on spaces, as a mosesserver client reads them: with the segmentation marks, ``text`` (and
each ``hyp``) is the model's tokens, as mosesserver's always is and as ``pysmt decode
--report-segmentation`` writes it (marks inside restored words would count nothing), so every index counts
tokens, the source's being what the system's preparation makes of ``text``; without them (``word-align``,
or ``align`` with ``no-ReportSegmentation``) ``text`` is raw text and the indices count its words and the
words of the ``text`` sent (:mod:`pysmt.serving.words`: a word of several tokens, ``"x,"``, takes all their
links).

Mistakes are faults, never a dropped connection: -503 for a call that is not XML-RPC or lacks
``text`` (Moses' code), -506 for another method, -32602 for a parameter of the wrong type, -32000
for what the server will not do (a setting pysmt does not honor per request, a request over its
limits) or could not do (a plugin's error, a timeout). Requests are parsed with defusedxml, which
refuses entity declarations (the "billion laughs"), and a call that nests its elements deeper than
:data:`MAX_DEPTH` is refused (-32000) as the parser meets the element: a ``translate`` call nests
eight (``methodCall``, ``params``, ``param``, ``value``, ``struct``, ``member``, ``value``,
``string``), and arrays nested thousands deep would make the error messages' ``repr`` recurse past
the interpreter's limit.
"""

from __future__ import annotations

import xmlrpc.client
from dataclasses import dataclass
from typing import Any

from defusedxml.xmlrpc import DefusedExpatParser

from pysmt.decoder import Candidate
from pysmt.decoding.line_streams import OutputOptions
from pysmt.files.formats import feature_scores

#: xmlrpc-c's fault codes, as mosesserver returns them.
PARSE_ERROR = -503
NO_SUCH_METHOD = -506
#: The XML-RPC error codes of the specification for interoperability (xmlrpc-epi).
INVALID_PARAMETERS = -32602
SERVER_ERROR = -32000

#: The deepest nesting of elements a call may have (a ``translate`` call has eight levels).
MAX_DEPTH = 32

#: ``translate`` keys that change a Moses translation but that pysmt does not honor per request.
NOT_SUPPORTED = (
    "sg",
    "topt",
    "lambda",
    "model_name",
    "weights",
    "context",
    "context-scope",
    "context-weights",
    "search-algorithm",
    "stack",
    "stack-diversity",
    "beam-threshold",
    "time-out",
    "max-phrase-length",
    "xml-input",
)
#: Moses' ``Scan<bool>`` spellings.
TRUE, FALSE = ("true", "yes", "y", "1"), ("false", "no", "n", "0")


class ProtocolError(Exception):
    """A call this server answers with a fault."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Request:
    """A ``translate`` call's struct, checked."""

    text: str
    align: bool = False
    word_align: bool = False
    segmentation: bool = False  # the phrases marked in the text (align, unless no-ReportSegmentation)
    nbest: int = 0
    distinct: bool = False
    breakdown: bool = False
    session: int | None = None

    @property
    def counts_words(self) -> bool:
        """Whether its indices count the words sent and returned (raw text, no marks) on a system that prepares
        its text: alignments asked for without the segmentation marks, which put ``text`` in model tokens."""
        return (self.align or self.word_align) and not self.segmentation


class ShallowUnmarshaller(xmlrpc.client.Unmarshaller):
    """The standard library's unmarshaller, refusing elements nested deeper than :data:`MAX_DEPTH`."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ProtocolError(
                SERVER_ERROR, f"the call nests XML elements more than {MAX_DEPTH} deep (a translate call nests eight)"
            )
        super().start(tag, attrs)

    def end(self, tag: str) -> None:
        self.depth -= 1
        super().end(tag)


def parse_call(body: bytes) -> tuple[str, tuple[Any, ...]]:
    """The method and parameters of an XML-RPC call (entity declarations and deep nesting refused)."""
    unmarshaller = ShallowUnmarshaller()
    parser = DefusedExpatParser(unmarshaller)
    try:
        parser.feed(body)
        parser.close()
        params = unmarshaller.close()
    except ProtocolError:
        raise
    except Exception as err:  # expat's, defusedxml's and the unmarshaller's own errors alike
        raise ProtocolError(PARSE_ERROR, f"Call XML not a proper XML-RPC call ({type(err).__name__}: {err})") from None
    return unmarshaller.getmethodname() or "", params


def flag(params: dict[str, Any], key: str) -> bool:
    """A flag as Moses reads it: a boolean, or a string it scans as one."""
    value = params.get(key, False)
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in TRUE + FALSE:
        return value.strip().lower() in TRUE
    raise ProtocolError(INVALID_PARAMETERS, f'{key} must be a boolean (or "true"/"false"), not {value!r}')


def translate_request(params: tuple[Any, ...], max_nbest: int) -> Request:
    """The checked struct of a ``translate`` call."""
    if len(params) != 1 or not isinstance(params[0], dict):
        raise ProtocolError(INVALID_PARAMETERS, 'translate takes one struct, e.g. {"text": "..."}')
    struct: dict[str, Any] = params[0]
    if "text" not in struct:
        raise ProtocolError(PARSE_ERROR, "Missing source text")
    if not isinstance(struct["text"], str):
        raise ProtocolError(INVALID_PARAMETERS, f"text must be a string, not {type(struct['text']).__name__}")
    unsupported = sorted(key for key in struct if key in NOT_SUPPORTED or key.startswith("cube-pruning-"))
    if unsupported:
        raise ProtocolError(
            SERVER_ERROR,
            f"pysmt serve does not support {', '.join(unsupported)} per request "
            "(the server's system and settings apply)",
        )
    nbest = struct.get("nbest", 0)
    if isinstance(nbest, bool) or not isinstance(nbest, int) or not 0 <= nbest <= max_nbest:
        raise ProtocolError(INVALID_PARAMETERS, f"nbest must be an int from 0 to {max_nbest}, not {nbest!r}")
    session = struct.get("session-id")
    if session is not None and (isinstance(session, bool) or not isinstance(session, int)):
        raise ProtocolError(INVALID_PARAMETERS, f"session-id must be an int, not {session!r}")
    align = flag(struct, "align")
    return Request(
        struct["text"],
        align=align,
        word_align=flag(struct, "word-align"),
        segmentation=align and not flag(struct, "no-ReportSegmentation"),
        nbest=nbest,
        distinct=flag(struct, "nbest-distinct"),
        breakdown=flag(struct, "add-score-breakdown"),
        session=session,
    )


def hypothesis_text(candidate: Candidate, text: str, tokens: bool, segmentation: bool) -> str:
    """A translation's text as mosesserver writes it: tokens each followed by a space, with each phrase's
    source span after it (``|0-1|``, phrases with words only) when asked, as ``decode --report-segmentation``
    writes them; raw ``text`` (a system with [processing]) as it is, unless the marks are asked for: they put
    the text in the model's tokens."""
    if not tokens and not segmentation:
        return text
    line = OutputOptions(report_segmentation=segmentation).line(candidate, None)
    return f"{line} " if line else ""


def alignments(candidate: Candidate, request: Request) -> dict[str, Any]:
    """The ``align`` and ``word-align`` entries a request asked for."""
    found: dict[str, Any] = {}
    if request.align:
        found["align"] = [
            {"tgt-start": t0, "tgt-end": t1 - 1, "src-start": s0, "src-end": s1 - 1}
            for s0, s1, t0, t1 in candidate.phrases
        ]
    if request.word_align:
        found["word-align"] = [
            {"source-word": s, "target-word": t}
            for s, t in sorted(candidate.alignment, key=lambda link: (link[1], link[0]))
        ]
    return found


def translate_response(
    request: Request, candidates: list[Candidate], texts: list[str], tokens: bool, labels: list[tuple[str, int, int]]
) -> dict[str, Any]:
    """The struct ``translate`` returns for a sentence's n-best ``candidates`` (best first) and their texts."""
    best = candidates[0]
    result: dict[str, Any] = {
        "text": hypothesis_text(best, texts[0], tokens, request.segmentation),
        **alignments(best, request),
    }
    if request.nbest:
        entries = []
        for candidate, text in zip(candidates[: request.nbest], texts):
            entry = {
                "hyp": hypothesis_text(candidate, text, tokens, request.segmentation),
                "totalScore": candidate.total,
                **alignments(candidate, request),
            }
            if request.breakdown:
                entry["fvals"] = " " + feature_scores(candidate, labels)
            entries.append(entry)
        result["nbest"] = entries
    if request.session is not None:
        result["session-id"] = request.session
    return result


def response(value: dict[str, Any]) -> bytes:
    return xmlrpc.client.dumps((value,), methodresponse=True, encoding="utf-8").encode("utf-8")


def fault(code: int, message: str) -> bytes:
    return xmlrpc.client.dumps(xmlrpc.client.Fault(code, message), methodresponse=True, encoding="utf-8").encode(
        "utf-8"
    )
