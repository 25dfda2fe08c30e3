"""The JSON interface's requests and answers, per input and in OpenNMT-py's shape."""

import numpy as np
import pytest

from pysmt.decoder import Candidate
from pysmt.serving.json_api import BadRequest, Item, Scoring, by_rank, entries, parse_items, too_deep


def test_items_take_the_servers_model_and_n_best_unless_they_say():
    items = parse_items(b'[{"src": "a b", "id": 3}, {"src": "c", "n_best": 4}]', model_id=3, nbest_size=2, max_nbest=5)
    assert items == [Item("a b", 2), Item("c", 4)]


@pytest.mark.parametrize(
    "body, status, words",
    [
        (b"{", 400, "not valid JSON"),
        (b'"\xc3"', 400, "not valid UTF-8"),
        (b"{}", 400, "non-empty list"),
        (b'[{"src": 1}]', 400, "input 1"),
        (b'[{"src": "a"}, {"src": "b", "id": 2}]', 404, "input 2: no model 2"),
        (b'[{"src": "a", "n_best": 0}]', 400, "from 1 to 5"),
    ],
)
def test_bad_items_are_refused_naming_the_input(body, status, words):
    with pytest.raises(BadRequest) as caught:
        parse_items(body, 0, 1, 5)
    assert caught.value.status == status and words in str(caught.value)


@pytest.mark.parametrize(
    "body, message",
    [
        (
            b'[{"src": "a", "n_best": 1' + b"0" * 5000 + b"}]",
            "the request holds a number of 5,001 characters; this server reads up to 100",
        ),
        (
            b'[{"src": "a", "id": -' + b"9" * 100 + b"}]",
            "the request holds a number of 101 characters; this server reads up to 100",
        ),
        (b'[{"src": "a", "n_best": 1e999}]', "the request holds the number 1e999, beyond a double's range"),
        (b'[{"src": "a", "n_best": NaN}]', "the request holds NaN, which is not JSON (RFC 8259 has no such number)"),
        (
            b'[{"src": "a", "x": -Infinity}]',
            "the request holds -Infinity, which is not JSON (RFC 8259 has no such number)",
        ),
        (b'[{"src": "a \\ud800 b"}]', "input 1: src is not Unicode text (it holds a lone surrogate, \\ud800-\\udfff)"),
    ],
)
def test_every_value_is_bounded(body, message):
    """Python reads no integer of more than 4,300 digits (a ValueError: a 500 and a traceback), reads 1e999 as
    infinity and NaN as a number (neither is JSON), and a lone surrogate is no Unicode text (refused as invalid
    UTF-8 is)."""
    with pytest.raises(BadRequest) as caught:
        parse_items(body, 0, 1, 5)
    assert (caught.value.status, str(caught.value)) == (400, message)


def test_numbers_within_the_bounds_are_read():
    body = b'[{"src": "a", "id": ' + b"7" * 100 + b', "n_best": 2, "score": 0.5e3}]'
    assert parse_items(body, int("7" * 100), 1, 5) == [Item("a", 2)]


def test_entries_per_input_and_by_rank():
    one = Candidate(["x"], np.zeros(1), -1.0, [(0, 0)])
    two = Candidate(["y", "z"], np.zeros(1), -2.0, [(0, 1), (1, 0)])
    first = entries(Item("a", 2), [one, two], ["x", "y z"])
    second = entries(Item("b", 2), [two], ["y z"])  # a sentence with one translation only
    assert first == [
        {"src": "a", "tgt": "x", "n_best": 2, "pred_score": -1.0, "align": ["0-0"]},
        {"src": "a", "tgt": "y z", "n_best": 2, "pred_score": -2.0, "align": ["0-1 1-0"]},
    ]
    ranks = by_rank([first, second], 2)
    assert [[e["tgt"] for e in rank] for rank in ranks] == [["x", "y z"], ["y z", "y z"]]  # every input in each rank


def test_input_nested_deeper_than_a_request_is_refused_before_it_is_parsed():
    with pytest.raises(BadRequest) as caught:
        parse_items(b"[" * 33 + b"]" * 33, 0, 1, 5)
    assert caught.value.status == 400 and "more than 32 deep" in str(caught.value)
    with pytest.raises(BadRequest) as caught:  # 32 levels are parsed (and found not to be a request)
        parse_items(b"[" * 32 + b"]" * 32, 0, 1, 5)
    assert "expected" in str(caught.value)
    # brackets within strings, escaped quotes included, are text
    assert parse_items(b'[{"src": "\\"[[' + b"[" * 40 + b'"}]', 0, 1, 5) == [Item('"[[' + "[" * 40, 1)]
    assert too_deep(b'["\\\\"' + b"[" * 40) and not too_deep(b'["\\\\\\"' + b"[" * 40 + b'"]')


def test_details_say_the_phrases_and_each_features_weighted_score_when_asked():
    items = parse_items(b'[{"src": "a b", "details": true}, {"src": "a b"}]', 0, 1, 5)
    assert [item.details for item in items] == [True, False]
    with pytest.raises(BadRequest) as caught:
        parse_items(b'[{"src": "a", "details": 1}]', 0, 1, 5)
    assert (caught.value.status, str(caught.value)) == (400, "input 1: details must be true or false, not 1")
    candidate = Candidate(["x", "y"], np.array([-2.0, 0.5, 1.0]), -1.0, [(0, 1), (1, 0)], [(0, 1, 1, 2), (1, 2, 0, 1)])
    scoring = Scoring([("LM0", 0, 1), ("TM0", 1, 3)], [0.5, 2.0, -1.0])
    (entry,) = entries(items[0], [candidate], ["x y"], scoring, ["a", "b"])
    assert entry == {
        "src": "a b",
        "tgt": "x y",
        "n_best": 1,
        "pred_score": -1.0,
        "align": ["0-1 1-0"],
        "src_words": ["a", "b"],
        "phrases": [
            {"src_start": 0, "src_end": 1, "tgt_start": 1, "tgt_end": 2},
            {"src_start": 1, "src_end": 2, "tgt_start": 0, "tgt_end": 1},
        ],
        "features": [
            {"name": "LM0", "scores": [-2.0], "weights": [0.5], "weighted": -1.0},
            {"name": "TM0", "scores": [0.5, 1.0], "weights": [2.0, -1.0], "weighted": 0.0},
        ],
    }
    assert entries(items[1], [candidate], ["x y"], scoring, ["a", "b"])[0].keys() == {
        "src",
        "tgt",
        "n_best",
        "pred_score",
        "align",
    }  # (an item without details is answered as before)
