"""pysmt.plugin.ContextTable: the numbered n-gram contexts an n-gram feature written as a plugin keeps as states."""

import numpy as np
import pytest

from pysmt.plugin import ContextTable


def test_context_table_numbers_contexts_and_builds_a_batchs_ngrams():
    """Hand-checked: contexts of two words; requests extend states by options and may end the sentence."""
    table = ContextTable(2)
    start = table.intern(np.array([[0, 0]], dtype=np.int32))
    assert start.tolist() == [0] and len(table) == 1
    words = np.array([[5, 6, 7], [8, 0, 0]], dtype=np.int32)  # option 0: "5 6 7", option 1: "8"
    rows, targets, owners, states, fresh = table.extend(
        np.array([0, 0]), words, np.array([3, 1]), np.array([False, True]), 1
    )
    # request 0: 5 | (0 0), 6 | (0 5), 7 | (5 6), new state (6 7); request 1: 8 | (0 0), state (0 8), </s> | (0 8)
    assert table.contexts(np.arange(len(table))).tolist() == [[0, 0], [0, 5], [5, 6], [6, 7], [0, 8]]
    assert rows.tolist() == [0, 1, 2, 0, 4]
    assert targets.tolist() == [5, 6, 7, 8, 1]
    assert owners.tolist() == [0, 0, 0, 1, 1]
    assert states.tolist() == [3, 4]
    assert fresh.tolist() == [0, 1, 2, 4]  # contexts an n-gram used for the first time, each once
    again = table.extend(np.array([3]), words[1:], np.array([1]), np.array([True]), 1)
    assert again[0].tolist() == [3, 5] and again[4].tolist() == [3, 5]  # 8 | (6 7), </s> | (7 8)
    assert table.intern(np.array([[5, 6], [9, 9]], dtype=np.int32)).tolist() == [2, 6]  # known, then new
    with pytest.raises(IndexError):
        table.contexts(np.array([99]))
    with pytest.raises(ValueError):  # one state, two options' words
        table.extend(np.array([0]), words, np.array([3, 1]), np.array([False]), 1)
    table.clear()
    assert len(table) == 0
