"""Future cost: the best estimated score of translating each uncovered part of the sentence.

As Moses: the best option estimate of every span, completed by dynamic programming over split
points, ``cost[s,e] = max(cost[s,e], cost[s,m] + cost[m,e])``; a hypothesis' future cost is the
sum over its maximal uncovered gaps.
"""

from __future__ import annotations

import numpy as np

from pysmt.phrases import SentenceOptions


class FutureCost:
    """Future-cost estimates for one sentence, cached by coverage bitmask."""

    def __init__(self, options: SentenceOptions) -> None:
        n = len(options.sentence)
        self.n = n
        table = np.full((n + 1, n + 1), -np.inf)
        for (start, end), opts in options.by_span.items():
            table[start, end] = max(option.future for option in opts)
        with np.errstate(over="ignore", invalid="ignore"):  # estimates too large to add up: the decoder reports it
            for length in range(2, n + 1):
                for start in range(0, n - length + 1):
                    end = start + length
                    joined = table[start, start + 1 : end] + table[start + 1 : end, end]
                    table[start, end] = max(table[start, end], joined.max())
        self.table = table.tolist()
        self.cache: dict[int, float] = {}

    def span(self, start: int, end: int) -> float:
        return self.table[start][end]

    def __call__(self, coverage: int) -> float:
        """The estimated score of everything ``coverage`` (a bitmask of covered words) leaves open."""
        cost = self.cache.get(coverage)
        if cost is None:
            cost = 0.0
            start = None
            for position in range(self.n + 1):
                covered = position == self.n or (coverage >> position) & 1
                if covered and start is not None:
                    cost += self.table[start][position]
                    start = None
                elif not covered and start is None:
                    start = position
            self.cache[coverage] = cost
        return cost
