"""Moses' XML input markup (``--xml-input``): translations given for spans of a line, reordering walls and zones.

``A <np translation="chat||chien" prob="0.8||0.2">dog</np> runs <wall/> fast`` gives the span of ``dog``
two translations with their probabilities, and forbids reordering across the wall; ``<zone>...</zone>``
keeps a span's words together (once entered, translated before anything outside). The markup is read as
Moses' ``ProcessAndStripXMLTags`` reads it (``XmlOption.cpp``): tags nest, a tag's span is the words
between its opening and its closing (or its ``span="i-j"`` attribute), ``translation`` (or Moses' older
``english``) and ``prob`` hold alternatives separated by ``||``, a missing ``prob`` is 1, and a
translation's score is log(prob), floored at -100 as Moses floors log 0. Unlike Moses, which prints an
error and translates whatever it made of a line, a malformed tag is a :class:`MarkupError`: the caller
names the input line.

This module knows nothing of models: what the options score and how the walls constrain the search are
:mod:`pysmt.search.markup_options` and :mod:`pysmt.search.reordering_constraint`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal, get_args

from pysmt.errors import PysmtError

#: What ``--xml-input`` takes (Moses' ``-xml-input``): how markup options meet the phrase tables' options.
XmlInput = Literal["pass-through", "ignore", "exclusive", "inclusive", "constraint"]
XML_INPUTS: tuple[str, ...] = get_args(XmlInput)

#: Moses' floor of a log probability (log 0).
LOWEST_LOG = -100.0

#: A tag: ``<`` then a letter or ``/`` (Moses' isXmlTag), up to the next ``>``. Any other ``<`` is text.
TAG_START = re.compile(r"<(?=[A-Za-z/])")
#: A tag's attributes: ``name="value"`` pairs separated by blanks (a ``\\"`` inside a value is kept).
ATTRIBUTES = re.compile(r'\s*(?:[A-Za-z_][\w.-]*="(?:[^"\\]|\\.)*"\s*)*')
ATTRIBUTE = re.compile(r'([A-Za-z_][\w.-]*)="((?:[^"\\]|\\.)*)"')
#: A ``span`` attribute: ``i-j`` or ``i``, word positions in ASCII digits (at most 9, so no count overflows).
SPAN = re.compile(r"[0-9]{1,9}(?:-[0-9]{1,9})?")
#: Moses' tags that pysmt does not offer (placeholders, online updates, per-line weights).
UNSUPPORTED = ("ne", "update", "weight-overwrite")


class MarkupError(PysmtError):
    """A malformed tag: the caller names the input line."""


@dataclass(frozen=True, slots=True)
class MarkupOption:
    """A translation the markup gives for the source words ``[start, end)``, with its log probability."""

    start: int
    end: int
    target: tuple[str, ...]
    log_prob: float


@dataclass(frozen=True, slots=True)
class Markup:
    """A line's words without their tags, and what the tags said about them."""

    words: tuple[str, ...]
    options: tuple[MarkupOption, ...] = ()
    #: Moses' walls: position p forbids leaving a gap at or before word p and covering a word after it.
    walls: tuple[int, ...] = ()
    #: Zones, first and last word (inclusive, as Moses keeps them).
    zones: tuple[tuple[int, int], ...] = ()


def split_tags(line: str) -> list[tuple[bool, str]]:
    """The line as (is a tag, text) pieces, in order (Moses' TokenizeXml); an unclosed tag is an error."""
    pieces: list[tuple[bool, str]] = []
    position = 0
    for found in TAG_START.finditer(line):
        if found.start() < position:
            continue  # a '<' inside a tag already taken
        close = line.find(">", found.start())
        if close < 0:
            raise MarkupError(f"unclosed tag {line[found.start() :][:30]!r}")
        if found.start() > position:
            pieces.append((False, line[position : found.start()]))
        pieces.append((True, line[found.start() : close + 1]))
        position = close + 1
    if position < len(line):
        pieces.append((False, line[position:]))
    return pieces


def attributes(tag: str, content: str) -> dict[str, str]:
    """A tag's ``name="value"`` attributes; anything else in it is an error."""
    if not ATTRIBUTES.fullmatch(content):
        raise MarkupError(f'malformed attributes in <{tag}>: {content!r} (expected name="value" pairs)')
    return {name: value for name, value in ATTRIBUTE.findall(content)}


def alternatives(value: str | None) -> list[str]:
    """Moses' ``||``-separated alternatives of an attribute (none when it is missing or empty)."""
    return value.split("||") if value else []


def log_probability(text: str, tag: str) -> float:
    """log(prob) floored at Moses' -100; a prob that is not a number of at least 0 is an error."""
    try:
        prob = float(text)
    except ValueError:
        raise MarkupError(f"<{tag}>: prob {text!r} is not a number") from None
    if not prob >= 0 or math.isinf(prob):
        raise MarkupError(f"<{tag}>: prob {text!r} is not a probability (a number from 0)")
    return max(math.log(prob), LOWEST_LOG) if prob > 0 else LOWEST_LOG


def tag_span(values: dict[str, str], start: int, end: int, tag: str) -> tuple[int, int]:
    """The span ``[start, end)`` of a tag, or what its ``span="i-j"`` (or ``"i"``) attribute says."""
    span = values.get("span")
    if not span:
        return start, end
    if not SPAN.fullmatch(span):  # ASCII digits only: int() refuses "²", which str.isdigit() accepts
        raise MarkupError(f'<{tag}>: span must be "i-j" or "i" (word positions from 0), not {span!r}')
    bounds = span.split("-")
    first, last = int(bounds[0]), int(bounds[-1])
    if first > last:
        raise MarkupError(f'<{tag}>: span "{span}" ends before it starts')
    return first, last + 1


def parse_markup(line: str, keep_options: bool = True) -> Markup:
    """A line's words and markup (``keep_options=False``: ``--xml-input ignore``, the options dropped)."""
    words: list[str] = []
    options: list[MarkupOption] = []
    walls: list[int] = []
    zones: list[tuple[int, int]] = []
    opened: list[tuple[str, int, str]] = []  # (name, first word, attributes)
    for is_tag, text in split_tags(line):
        if not is_tag:
            words.extend(text.split())
            continue
        tag = text[1:-1].strip()
        unary, closing = tag.endswith("/"), tag.startswith("/")
        if closing and unary:
            raise MarkupError(f"tag {text!r} both closes and is unary")
        tag = tag.strip("/").strip()
        name, _, content = tag.partition(" ")
        if not name:
            raise MarkupError(f"empty tag {text!r}")
        if not closing:
            opened.append((name, len(words), content))
        if not (closing or unary):
            continue
        if not opened:
            raise MarkupError(f"</{name}> closes no tag")
        open_name, first, content = opened.pop()
        if open_name != name:
            raise MarkupError(f"<{open_name}> closed by </{name}>")
        values = attributes(name, content)
        start, end = tag_span(values, first, len(words), name)
        if name == "wall":
            walls.extend(range(max(start - 1, 0), end))
        elif name == "zone":
            if start >= end:
                raise MarkupError("a zone must span at least one word")
            zones.append((start, end - 1))
        elif name in UNSUPPORTED:
            raise MarkupError(f"<{name}> is a Moses tag pysmt does not offer")
        elif start < end:  # Moses skips a translation of no words, with a warning
            options.extend(markup_options(name, values, start, end) if keep_options else [])
    if opened:
        raise MarkupError(f"<{opened[-1][0]}> is never closed")
    for start, end in [(o.start, o.end) for o in options] + [(first, last + 1) for first, last in zones]:
        if end > len(words):
            raise MarkupError(f"a span ({start}-{end - 1}) ends after the line's {len(words)} words")
    return Markup(tuple(words), tuple(options), tuple(w for w in walls if w < len(words)), tuple(zones))


def markup_options(tag: str, values: dict[str, str], start: int, end: int) -> list[MarkupOption]:
    """The translations of one tag, with their log probabilities (Moses' ``translation``/``english``, ``prob``)."""
    texts = alternatives(values.get("translation")) + alternatives(values.get("english"))
    probs = alternatives(values.get("prob"))
    if probs and len(probs) != len(texts):
        raise MarkupError(f"<{tag}>: {len(texts)} translations but {len(probs)} probs")
    made = []
    for k, text in enumerate(texts):
        target = tuple(text.split())
        if not target:
            raise MarkupError(f"<{tag}>: an empty translation")
        made.append(MarkupOption(start, end, target, log_probability(probs[k], tag) if probs else 0.0))
    return made
