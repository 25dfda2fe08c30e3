"""Moses' reordering constraints from markup: walls and zones (``ReorderingConstraint.cpp``), beside the
distortion limit in both searches (the compiled search's ``Search::reordering_allowed`` is the same code).

A *wall* at position p (``<wall/>`` before word p + 1) forbids covering a word after it while a word at or
before it is left uncovered, unless the phrase starts at the first gap. A *zone* (``<zone>...</zone>``),
once entered, is finished before any word outside it is covered; a wall inside a zone (a *local wall*)
binds only within it. Moses checks these in normal search always, in cube pruning only under a distortion
limit; pysmt checks them in both searches always.
"""

from __future__ import annotations

from dataclasses import dataclass

from pysmt.search.distortion_limit import first_gap

#: A position that is no zone's local wall.
NOT_A_ZONE = -1


@dataclass(frozen=True, slots=True)
class ReorderingConstraint:
    """A sentence's walls and zones (zones' last words inclusive, as Moses keeps them)."""

    walls: tuple[bool, ...]
    #: For each position, the (innermost) zone whose local wall it is, or :data:`NOT_A_ZONE`.
    local_walls: tuple[int, ...]
    zones: tuple[tuple[int, int], ...]

    @classmethod
    def of(cls, length: int, walls: tuple[int, ...], zones: tuple[tuple[int, int], ...]) -> ReorderingConstraint | None:
        """The constraint of a sentence of ``length`` words (None without walls and zones); Moses'
        ``FinalizeWalls`` makes the walls inside zones local."""
        if not walls and not zones:
            return None
        wall = [False] * length
        for position in walls:
            wall[position] = True
        local = [NOT_A_ZONE] * length
        for z, (first, last) in enumerate(zones):
            for position in range(first, last):
                if wall[position]:
                    local[position], wall[position] = z, False
                elif local[position] != NOT_A_ZONE:  # only the innermost zone's
                    assigned = zones[local[position]]
                    if assigned[0] < first or assigned[1] > last:
                        local[position] = z
        return cls(tuple(wall), tuple(local), zones)

    def allows(self, coverage: int, start: int, end: int, limit: int) -> bool:
        """Whether covering ``[start, end)`` after ``coverage`` keeps the walls and zones (Moses' ``Check``;
        ``limit``: the distortion limit, which a zone must not leave unreachable)."""
        last = end - 1  # Moses' inclusive end
        gap = first_gap(coverage)
        if gap != start and any(self.walls[p] for p in range(gap, last)):
            return False
        last_covered = coverage.bit_length() - 1  # -1: nothing covered
        if gap > last_covered and gap == start:
            return True  # monotone
        for z, (first, final) in enumerate(self.zones):
            outside = last < first or start > final
            if (last_covered < first and outside) or gap > final:
                continue
            done = sum((coverage >> p) & 1 for p in range(first, final + 1))
            if done == final - first + 1:
                continue
            if outside:
                if done:
                    return False  # the zone is open: nothing outside it
                continue
            if limit >= 0 and start != gap and final - gap >= limit:
                return False  # a dead end: the zone's gap would be out of reach
            if start <= first:
                continue
            if last > final:
                if final - start + 1 < final - first + 1 - done:
                    return False  # leaves the zone without finishing it
                continue
            seen_gap = False
            for p in range(first, min(final, last)):
                seen_gap = seen_gap or (not (coverage >> p) & 1 and p < start)
                if seen_gap and self.local_walls[p] == z:
                    return False
        return True
