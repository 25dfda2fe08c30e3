"""Moses' XML-RPC protocol: requests read as mosesserver reads them, answers written as it writes them."""

import xmlrpc.client

import numpy as np
import pytest

from pysmt.decoder import Candidate
from pysmt.serving.moses_xmlrpc import (
    INVALID_PARAMETERS,
    PARSE_ERROR,
    SERVER_ERROR,
    ProtocolError,
    Request,
    hypothesis_text,
    parse_call,
    translate_request,
    translate_response,
)

# "a b c" -> "x y" + "z w" from the phrases [0, 2) -> [0, 2) and [2, 3) -> [2, 4)
CANDIDATE = Candidate(
    ["x", "y", "z", "w"], np.array([1.0, -2.0]), -0.5, [(0, 0), (1, 1), (2, 3), (2, 2)], [(0, 2, 0, 2), (2, 3, 2, 4)]
)


def call(struct: dict) -> bytes:
    return xmlrpc.client.dumps((struct,), "translate").encode()


def test_flags_as_moses_clients_send_them():
    method, params = parse_call(
        call(
            {
                "text": "a b c",
                "align": "true",
                "word-align": True,
                "nbest": 3,
                "nbest-distinct": "1",
                "add-score-breakdown": "YES",
            }
        )
    )
    assert method == "translate"
    assert translate_request(params, 10) == Request(
        "a b c", align=True, word_align=True, segmentation=True, nbest=3, distinct=True, breakdown=True
    )
    assert translate_request(({"text": "a", "align": "no"},), 10).align is False
    assert translate_request(({"text": "a", "align": "1", "no-ReportSegmentation": "true"},), 10).segmentation is False


@pytest.mark.parametrize(
    "struct, code, words",
    [
        ({"align": "true"}, PARSE_ERROR, "Missing source text"),
        ({"text": 5}, INVALID_PARAMETERS, "text must be a string"),
        ({"text": "a", "nbest": 11}, INVALID_PARAMETERS, "from 0 to 10"),
        ({"text": "a", "nbest": True}, INVALID_PARAMETERS, "nbest must be an int"),
        ({"text": "a", "word-align": "sometimes"}, INVALID_PARAMETERS, "word-align must be a boolean"),
        ({"text": "a", "session-id": "7"}, INVALID_PARAMETERS, "session-id must be an int"),
    ],
)
def test_requests_refused_with_the_fault_that_says_why(struct, code, words):
    with pytest.raises(ProtocolError) as caught:
        translate_request((struct,), 10)
    assert caught.value.code == code and words in str(caught.value)


def test_indices_count_the_words_returned_unless_the_marks_put_the_text_in_tokens():
    counts = [
        translate_request(({"text": "a", **flags},), 10).counts_words
        for flags in (
            {},
            {"align": "true"},
            {"word-align": "true"},
            {"align": "1", "no-ReportSegmentation": "true"},
            {"align": "true", "word-align": "true"},
        )
    ]
    assert counts == [False, False, True, True, False]


def test_text_as_mosesserver_writes_it():
    assert hypothesis_text(CANDIDATE, "x y z w", tokens=True, segmentation=False) == "x y z w "
    assert hypothesis_text(CANDIDATE, "x y z w", tokens=True, segmentation=True) == "x y |0-1| z w |2-2| "
    # a system that restores raw text: its text as it is, unless the marks are asked for (they count tokens)
    assert hypothesis_text(CANDIDATE, "X y, z w!", tokens=False, segmentation=False) == "X y, z w!"
    assert hypothesis_text(CANDIDATE, "X y, z w!", tokens=False, segmentation=True) == "x y |0-1| z w |2-2| "
    # a phrase that translates to nothing has no mark, as in Moses' text (Manager::OutputSurface)
    dropped = Candidate(["x", "y"], np.zeros(1), 0.0, [(0, 0), (1, 1)], [(0, 2, 0, 2), (2, 3, 2, 2)])
    assert hypothesis_text(dropped, "x y", tokens=True, segmentation=True) == "x y |0-1| "
    nothing = Candidate([], np.zeros(1), 0.0, [], [(0, 1, 0, 0)])
    assert hypothesis_text(nothing, "", tokens=True, segmentation=True) == ""


def test_the_answer_struct():
    request = Request("a b c", align=True, word_align=True, segmentation=False, nbest=2, breakdown=True, session=9)
    answer = translate_response(
        request, [CANDIDATE, CANDIDATE], ["x y z w", "x y z w"], True, [("LM0", 0, 1), ("TM0", 1, 2)]
    )
    assert answer["text"] == "x y z w " and answer["session-id"] == 9
    assert answer["align"] == [
        {"tgt-start": 0, "tgt-end": 1, "src-start": 0, "src-end": 1},
        {"tgt-start": 2, "tgt-end": 3, "src-start": 2, "src-end": 2},
    ]
    assert answer["word-align"] == [
        {"source-word": 0, "target-word": 0},
        {"source-word": 1, "target-word": 1},
        {"source-word": 2, "target-word": 2},
        {"source-word": 2, "target-word": 3},
    ]
    assert [entry["fvals"] for entry in answer["nbest"]] == [" LM0= 1 TM0= -2"] * 2
    assert answer["nbest"][0]["totalScore"] == -0.5 and answer["nbest"][0]["hyp"] == "x y z w "
    assert "nbest" not in translate_response(Request("a"), [CANDIDATE], ["x y z w"], True, [])


def test_calls_nested_deeper_than_a_translate_call_are_refused_as_they_are_parsed():
    assert parse_call(call({"text": "a", "nbest": [[[[1]]]]})) == ("translate", ({"text": "a", "nbest": [[[[1]]]]},))
    nested: list = []
    for _ in range(10):  # 10 arrays more: 8 + 3 * 10 elements deep
        nested = [nested]
    with pytest.raises(ProtocolError) as caught:
        parse_call(call({"text": "a", "nbest": nested}))
    assert caught.value.code == SERVER_ERROR and "more than 32 deep" in str(caught.value)
