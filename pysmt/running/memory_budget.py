"""``--memory SIZE``: the memory a command may use, as ``sort -S`` and ``lmplz -S`` take it (``1G``, ``500M``);
and sizes in bytes given the same way (``serve --max-request-size 64K``).

The budget bounds the training steps that would otherwise grow with the corpus (phrase counting and
scoring, ``lmplz``): they split their work into pieces that fit it and spill the rest to disk.
"""

from __future__ import annotations

from typing import Any

import click

UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
DEFAULT = "1G"
#: The smallest budget accepted: below it, Python and numpy alone would not fit.
MINIMUM = 200 << 20


def parse_size(text: str, minimum: int = MINIMUM, what: str = "budget") -> int:
    """Bytes from ``1G``, ``512M``, ``2.5G`` or a plain number of bytes, at least ``minimum`` (the smallest
    ``what``); ValueError with the reason."""
    value = text.strip().upper().removesuffix("B")
    unit = UNITS.get(value[-1:], 1)
    number = value[:-1] if value[-1:] in UNITS else value
    try:
        size = int(float(number) * unit)
    except ValueError:
        raise ValueError(f"{text!r} is not a size (give e.g. 1G, 800M)") from None
    if size < minimum:
        smallest = f"{minimum >> 20}M" if minimum >= UNITS["M"] else f"{minimum >> 10}K"
        raise ValueError(f"{text!r} is below the smallest {what}, {smallest}")
    return size


class MemorySize(click.ParamType):
    """A click option type for ``--memory`` (or another size of at least ``minimum`` bytes): checked at the
    edge, given to the command in bytes."""

    name = "size"

    def __init__(self, minimum: int = MINIMUM, what: str = "budget") -> None:
        self.minimum = minimum
        self.what = what

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int):
            return value
        try:
            return parse_size(str(value), self.minimum, self.what)
        except ValueError as err:
            self.fail(str(err), param, ctx)


def megabytes(size: int) -> str:
    """A size as ``lmplz -S`` takes it."""
    return f"{size >> 20}M"
