"""Symmetrization of two directional word alignments, as Moses' ``symal`` does it.

Points are ``(s, t)``: source index, target index. ``forward`` is the alignment in which every
target word has at most one source word (the source-to-target model), ``reverse`` the other one.

* ``intersection`` / ``union``: the sets themselves.
* ``grow`` / ``grow-diag``: start from the intersection; repeatedly add union points that
  neighbour an alignment point (horizontally and vertically; ``diag`` adds the diagonals) and
  cover at least one word that is still unaligned. As in symal, points are visited in (target,
  source) order and a point added after the one being visited is visited in the same pass.
* ``-final``: then add the remaining union points whose source or target word is unaligned
  (``-final-and``: both), first those of the forward alignment, then those of the reverse one.
"""

from __future__ import annotations

from bisect import bisect_right, insort

HEURISTICS = (
    "intersection",
    "union",
    "grow",
    "grow-diag",
    "grow-final",
    "grow-final-and",
    "grow-diag-final",
    "grow-diag-final-and",
)

STRAIGHT = ((-1, 0), (0, -1), (1, 0), (0, 1))
DIAGONAL = ((-1, -1), (-1, 1), (1, -1), (1, 1))


def symmetrize(
    forward: set[tuple[int, int]], reverse: set[tuple[int, int]], heuristic: str, src_len: int, tgt_len: int
) -> list[tuple[int, int]]:
    """Combine two alignments by ``heuristic``; returns the points sorted by (source, target)."""
    if heuristic not in HEURISTICS:
        raise ValueError(f"unknown symmetrization {heuristic!r}; choose from {', '.join(HEURISTICS)}")
    union = forward | reverse
    if heuristic == "union":
        return sorted(union)
    points = forward & reverse
    if heuristic == "intersection":
        return sorted(points)
    # Work in symal's (target, source) order.
    current = sorted((t, s) for s, t in points)
    in_union = {(t, s) for s, t in union}
    tgt_aligned = {t for t, _ in current}
    src_aligned = {s for _, s in current}
    neighbours = STRAIGHT + (DIAGONAL if "diag" in heuristic else ())
    added = True
    while added:
        added = False
        index = 0
        while index < len(current):
            t, s = point = current[index]
            for dt, ds in neighbours:
                nt, ns = t + dt, s + ds
                if (
                    0 <= nt < tgt_len
                    and 0 <= ns < src_len
                    and (nt, ns) in in_union
                    and not (nt in tgt_aligned and ns in src_aligned)
                ):  # (a point already in has both)
                    insort(current, (nt, ns))
                    tgt_aligned.add(nt)
                    src_aligned.add(ns)
                    added = True
            index = bisect_right(current, point)
    if "final" in heuristic:
        both = heuristic.endswith("-and")
        for direction in (forward - reverse, reverse - forward):
            for t, s in sorted((t, s) for s, t in direction):
                if both:
                    ok = t not in tgt_aligned and s not in src_aligned
                else:
                    ok = t not in tgt_aligned or s not in src_aligned
                if ok:
                    insort(current, (t, s))
                    tgt_aligned.add(t)
                    src_aligned.add(s)
    return sorted((s, t) for t, s in current)


def parse_pharaoh(line: str) -> set[tuple[int, int]]:
    """``0-0 1-2`` -> {(0, 0), (1, 2)}."""
    points = set()
    for token in line.split():
        s, _, t = token.partition("-")
        points.add((int(s), int(t)))
    return points


def format_pharaoh(points: list[tuple[int, int]]) -> str:
    return " ".join(f"{s}-{t}" for s, t in points)
