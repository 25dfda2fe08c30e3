"""Alignments counting the words a client sends and gets, on a system that prepares its text: each model token
given the word it lies in, on each side, and a translation's links and phrases renumbered so."""

from __future__ import annotations

import numpy as np

from pysmt.decoder import Candidate, Decoder
from pysmt.serving.words import by_characters, in_words, source_places, target_places
from pysmt.serving.workers import translated
from tests.helpers import raw_text_system


def test_tokens_lie_in_the_words_that_hold_their_characters() -> None:
    assert by_characters(["l'", "homme", ",", "dit", "@-@", "il"], ["L'homme,", "dit-il"]) is None  # @-@ is not -
    assert by_characters(["l'", "homme", ",", "dit"], ["L'homme,", "dit"]) == [0, 0, 0, 1]
    assert by_characters(["a", "&#124;", "b"], ["a|b"]) == [0, 0, 0]  # Moses' escaped pipe is the pipe
    assert by_characters(["a", "b"], ["ab", "c"]) is None  # characters left over


def test_where_the_characters_differ_the_words_are_counted_on_prefixes() -> None:
    def restore(line: str) -> str:  # joins "@-@" to its neighbours, as the Moses detokenizer does
        return line.replace(" @-@ ", "-").replace(" @-@", "-")

    assert target_places(["dit", "@-@", "il", "."], "dit-il .", restore) == [0, 0, 0, 1]

    def prepare(line: str) -> str:  # splits « x » style quotes off and normalizes them, as the normalizer may
        return line.replace("«", '" ').replace("»", ' "')

    assert source_places(['"', "oui", '"', "non"], "«oui» non", prepare) == [0, 0, 0, 1]


def test_a_candidate_renumbered_to_words() -> None:
    # "a , b ." -> "x , z ." from [0, 2) -> [0, 2) and [2, 4) -> [2, 4); sent "a, b.", returned "x, z."
    candidate = Candidate(
        ["x", ",", "z", "."], np.zeros(1), 0.0, [(0, 0), (1, 1), (2, 2), (3, 3)], [(0, 2, 0, 2), (2, 4, 2, 4)]
    )
    words = in_words(candidate, [0, 0, 1, 1], [0, 0, 1, 1], 2, 2)
    assert words.alignment == [(0, 0), (1, 1)] and words.phrases == [(0, 1, 0, 1), (1, 2, 1, 2)]


def test_a_raw_text_systems_translations_count_the_words_sent_and_returned(tmp_path) -> None:
    decoder = Decoder.from_paths(raw_text_system(tmp_path / "raw"))
    # "a, b." is prepared as "a , b ." and translated "x ," + "y" + "." (phrases [0, 2), [2, 3), [3, 4)): "x, y."
    tokens = translated(decoder, "a, b.", 0, 1, False, process=True)
    assert tokens.texts == ["x, y."] and tokens.candidates[0].words == ["x", ",", "y", "."]
    assert tokens.candidates[0].alignment == [(0, 0), (1, 1), (2, 2), (3, 3)]  # the model's tokens
    words = translated(decoder, "a, b.", 0, 1, False, process=True, words=True)
    assert words.texts == tokens.texts and words.candidates[0].words == tokens.candidates[0].words
    assert words.candidates[0].alignment == [(0, 0), (1, 1)]  # "a," - "x,", "b." - "y."
    assert words.candidates[0].phrases == [(0, 1, 0, 1), (1, 2, 1, 2), (1, 2, 1, 2)]  # "y" and "." share "y."
    prepared = translated(decoder, "a , b .", 0, 1, False, process=False, words=True)  # --prepared: tokens are words
    assert prepared.candidates[0].alignment == [(0, 0), (1, 1), (2, 2), (3, 3)]
