"""Walls and zones (:mod:`pysmt.search.reordering_constraint`, Moses' ``ReorderingConstraint``): a system whose
language model wants ``p q r`` reordered, and the markup that stops it, in both engines and both searches; and
Moses' rules one by one on coverages."""

from __future__ import annotations

import pytest

from pysmt.search.reordering_constraint import NOT_A_ZONE, ReorderingConstraint
from pysmt.testing import write_toy_system
from tests.search.test_markup_options import one_answer

#: The language model likes A C B (each bigram -0.1) and nothing else (-3 a word): p q r is best translated
#: p, r, q, whatever the distortion costs.
ARPA = """\\data\\
ngram 1=6
ngram 2=4

\\1-grams:
-99\t<s>\t0
-1\t</s>\t0
-3\t<unk>\t0
-3\tA\t0
-3\tB\t0
-3\tC\t0

\\2-grams:
-0.1\t<s> A
-0.1\tA C
-0.1\tC B
-0.1\tB </s>

\\end\\
"""
PHRASES = "p ||| A ||| 0.5 ||| 0-0\nq ||| B ||| 0.5 ||| 0-0\nr ||| C ||| 0.5 ||| 0-0\n"


@pytest.fixture
def swapping(tmp_path):
    return write_toy_system(tmp_path / "swap", phrases=PHRASES, reordering=None, arpa=ARPA)


@pytest.mark.parametrize(
    ("line", "best"),
    [
        ("p q r", "A C B"),  # free: q after r
        ("p q <wall/> r", "A B C"),  # r may not be covered while q, before the wall, waits
        ("p <wall/> q r", "A C B"),  # the wall is behind: nothing crosses it
        ("<zone> p q </zone> r", "A B C"),  # the zone, entered by p, is finished before r
        ("p <zone> q r </zone>", "A C B"),  # reordering inside a zone is free
        ("<zone> p q <wall/> r </zone>", "A B C"),  # a wall inside a zone binds inside it
    ],
)
def test_walls_and_zones_change_the_reordering_as_in_moses(swapping, line, best):
    for mode in ("exclusive", "ignore", "inclusive", "constraint"):
        assert one_answer(swapping, mode, line, 10)[0][0] == best
    assert one_answer(swapping, "pass-through", "p q r", 1)[0][0] == "A C B"


def covered(*positions: int) -> int:
    return sum(1 << p for p in positions)


def test_a_wall_forbids_leaving_a_gap_before_it_and_covering_past_it():
    walls = ReorderingConstraint.of(4, (1,), ())  # between words 1 and 2
    assert walls is not None
    assert not walls.allows(covered(0), 2, 3, -1)  # word 1 waits behind the wall
    assert walls.allows(covered(0), 1, 3, -1)  # from the first gap, across it: allowed (Moses)
    assert walls.allows(covered(0, 1), 3, 4, -1)  # the wall is behind
    assert walls.allows(0, 1, 2, -1)  # before the wall: free


def test_a_wall_inside_a_zone_binds_only_inside_it():
    local = ReorderingConstraint.of(4, (0,), ((0, 1),))
    assert local is not None and local.walls == (False,) * 4 and local.local_walls == (0, NOT_A_ZONE, -1, -1)
    assert local.allows(0, 2, 3, -1)  # outside the zone, which is not entered: free
    everywhere = ReorderingConstraint.of(4, (0,), ())
    assert everywhere is not None and not everywhere.allows(0, 2, 3, -1)


def test_an_open_zone_is_finished_first_and_kept_within_reach():
    zone = ReorderingConstraint.of(5, (), ((1, 3),))
    assert zone is not None
    assert not zone.allows(covered(0, 1), 4, 5, -1)  # the zone is open: nothing outside
    assert zone.allows(covered(0, 1, 2, 3), 4, 5, -1)  # finished
    assert zone.allows(covered(0), 2, 3, -1)  # entering it anywhere
    assert not zone.allows(covered(0), 3, 5, -1)  # leaving it unfinished in one phrase
    assert not zone.allows(0, 2, 3, 2)  # its last word 3 too far from the gap for a limit of 2: a dead end
    assert ReorderingConstraint.of(5, (), ()) is None
