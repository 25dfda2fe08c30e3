"""Moses' distortion-limit rules, shared by normal search and cube pruning.

Two checks (``limit < 0`` disables both): the *jump* from the end of the previous phrase to the
start of the new one is at most ``limit`` words; and a phrase that does not start at the leftmost
gap must end close enough to that gap that the jump back to it stays within the limit.
"""

from __future__ import annotations


def first_gap(coverage: int) -> int:
    """The leftmost uncovered position of a coverage bitmask."""
    return (~coverage & (coverage + 1)).bit_length() - 1


def jump_allowed(previous_end: int, has_previous: bool, start: int, limit: int) -> bool:
    """Whether a phrase may start at ``start`` after a phrase ending (exclusively) at ``previous_end``."""
    if limit < 0:
        return True
    return (abs(previous_end - start) if has_previous else start) <= limit


def gap_reachable(gap: int, start: int, end: int, limit: int) -> bool:
    """Whether the leftmost gap stays reachable after covering ``[start, end)``."""
    return limit < 0 or start == gap or end - gap <= limit


def span_mask(start: int, end: int) -> int:
    """The coverage bits of ``[start, end)``."""
    return (1 << end) - (1 << start)
