"""Alignments that count the words a client sends and gets, on a system that prepares its text (``[processing]``).

The models see tokens: ``"l'homme, dit-il."`` is translated as ``l' homme , dit @-@ il .`` and its translation
restored to raw text. A translation's word alignment and phrases count those tokens on both sides; the client
sees the words of the text it sent and of the text it got back (split on spaces). Here each model token is given
the place of the word it lies in, on each side, and a candidate's links and phrases are renumbered so: a word made
of several tokens (``"x,"`` of ``x`` and ``,``) takes all their links (once each), a phrase spans the words its
tokens lie in (two phrases may then share a word).

A token is found in its word by its characters (case aside: truecasing changes the first letter; ``&#124;`` is
``|``): tokenizing and detokenizing move spaces, not characters. Where the preparation changed characters too
(the normalizer's quotes and dashes), the words are counted on the prepared prefixes instead: token ``k`` lies in
the word at which the text up to it has ``k + 1`` tokens (source), or the last word of the restored tokens up to
``k`` (target).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from pysmt.decoder import Candidate
from pysmt.text_processing import unescape_pipes


def by_characters(tokens: list[str], words: list[str]) -> list[int] | None:
    """The word each token lies in, when the tokens' characters are the words' (case aside), in order; else None."""
    lowered = [word.lower() for word in words]
    text = "".join(lowered)
    word_of = [k for k, word in enumerate(lowered) for _ in word]  # the word of each character of ``text``
    places: list[int] = []
    at = 0
    for token in tokens:
        chars = unescape_pipes(token).lower()
        if not chars or text[at : at + len(chars)] != chars:
            return None
        places.append(word_of[at])
        at += len(chars)
    return places if at == len(text) else None


def monotone(places: list[int], words: int) -> list[int]:
    """``places`` never decreasing and within ``words`` (what the counts on prefixes give, made safe)."""
    safe: list[int] = []
    for place in places:
        safe.append(min(max(place, safe[-1] if safe else 0), max(words - 1, 0)))
    return safe


def source_places(tokens: list[str], sent: str, prepare: Callable[[str], str]) -> list[int]:
    """The word of ``sent`` (split on spaces) that each model token of it lies in (``prepare``: the system's)."""
    words = sent.split()
    found = by_characters(tokens, words)
    if found is not None:
        return found
    counts = [len(prepare(" ".join(words[: k + 1])).split()) for k in range(len(words))]
    places = [next((k for k, count in enumerate(counts) if count > t), len(words) - 1) for t in range(len(tokens))]
    return monotone(places, len(words))


def target_places(tokens: list[str], text: str, restore: Callable[[str], str]) -> list[int]:
    """The word of ``text`` (the restored translation, split on spaces) that each model token lies in."""
    words = text.split()
    found = by_characters(tokens, words)
    if found is not None:
        return found
    return monotone([len(restore(" ".join(tokens[: t + 1])).split()) - 1 for t in range(len(tokens))], len(words))


def place(places: list[int], token: int) -> int:
    """The word token ``token`` lies in (the last word for a token past the end: never an error)."""
    return places[min(token, len(places) - 1)] if places else 0


def span(places: list[int], start: int, end: int, words: int) -> tuple[int, int]:
    """The words (first, last + 1) that tokens ``[start, end)`` lie in; an empty span stays empty, where the next
    token's word begins."""
    if end > start:
        return place(places, start), place(places, end - 1) + 1
    at = places[start] if start < len(places) else words
    return at, at


def in_words(
    candidate: Candidate, source: list[int], target: list[int], source_words: int, target_words: int
) -> Candidate:
    """``candidate`` with its links and phrases counting words (``source``/``target``: each token's word)."""
    return replace(
        candidate,
        alignment=sorted({(place(source, s), place(target, t)) for s, t in candidate.alignment}),
        phrases=[
            (*span(source, s0, s1, source_words), *span(target, t0, t1, target_words))
            for s0, s1, t0, t1 in candidate.phrases
        ],
        unknown=sorted({place(target, t) for t in candidate.unknown}),
    )
