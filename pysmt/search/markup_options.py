"""A sentence's markup options (``--xml-input``) as both option builders place them, with Moses' rules.

A markup translation becomes a phrase pair like a table's (Moses' ``XmlOption``): scored in isolation by
every context-free feature, with the first phrase table's columns each set to log(prob) / their count
(Moses' ``TargetPhrase::SetXMLScore``) and no word alignment; the language model, reordering and plugins
score it in the search as any option. How it meets the tables' options of the spans it overlaps is the
policy (Moses' ``TranslationOptionCollection::CreateTranslationOptionsForRange``):

* ``exclusive``: no table option of a span that overlaps a markup span; the markup's are the only ones.
* ``inclusive``: the markup's options join the tables' of their span.
* ``constraint``: a table option overlapping a markup span survives only if it covers the span and its
  target contains the markup's translation (Moses' ``ViolatesXmlOptionsConstraint``: the first markup
  option that decides does, in the line's order); the markup's options join.

A word left without any option of its own span (a word inside a longer markup span, under ``exclusive`` or
``constraint``) is passed through as an unknown word, as Moses' ``ProcessUnknownWord`` does. The compiled
builder (``_options.cpp``) applies the same rules; the tests check both agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from pysmt.files.markup import MarkupOption, XmlInput
from pysmt.phrases import PhrasePair

#: The policies under which markup options exist (``pass-through`` reads no markup, ``ignore`` drops it).
WITH_OPTIONS = ("exclusive", "inclusive", "constraint")


@dataclass(frozen=True)
class SentenceMarkup:
    """A sentence's markup options under a policy, and the pairs made of them (one each, in order)."""

    policy: XmlInput
    options: tuple[MarkupOption, ...]
    #: (name, score columns) of the first phrase table, whose columns a markup pair's log(prob) fills.
    table: tuple[str, int] | None
    words: tuple[str, ...]
    covered: frozenset[int] = field(init=False)

    def __post_init__(self) -> None:
        covered = {p for option in self.options for p in range(option.start, option.end)}
        object.__setattr__(self, "covered", frozenset(covered))

    def pair(self, k: int) -> PhrasePair:
        """Markup option ``k`` as an unscored phrase pair."""
        option = self.options[k]
        source = " ".join(self.words[option.start : option.end])
        if self.table is None:
            return PhrasePair(source, option.target, table=None, table_scores=None, alignment="")
        name, columns = self.table
        scores = np.full(columns, option.log_prob / columns)
        return PhrasePair(source, option.target, table=name, table_scores=scores, alignment="")

    def at(self, start: int, end: int) -> list[int]:
        """The markup options of exactly ``[start, end)``, in order."""
        return [k for k, option in enumerate(self.options) if (option.start, option.end) == (start, end)]

    def keeps(self, start: int, end: int, target: Sequence[str]) -> bool:
        """Whether a table option of ``[start, end)`` with ``target`` stays beside the markup."""
        if self.policy == "inclusive":
            return True
        if self.policy == "exclusive":
            return not any(p in self.covered for p in range(start, end))
        return not violates(self.options, start, end, tuple(target))

    def wants_unknown(self, position: int, translated: bool) -> bool:
        """Whether the word at ``position`` is passed through: no markup of its own span, and no table option
        of it left (``translated``: the tables have some)."""
        if self.at(position, position + 1):
            return False
        return not translated or (self.policy != "inclusive" and position in self.covered)


def violates(options: Sequence[MarkupOption], start: int, end: int, target: tuple[str, ...]) -> bool:
    """Moses' ``ViolatesXmlOptionsConstraint`` for a table option of ``[start, end)``: the first markup option that
    decides does (inside it, partly over it: violates; over it whole: its target must contain the markup's)."""
    for option in options:
        if option.start <= start and option.end >= end and (option.start < start or option.end > end):
            return True  # a piece of the markup's span
        if (option.start < start < option.end < end) or (start < option.start < end < option.end):
            return True  # partly over it
        if option.start >= start and option.end <= end:
            length = len(option.target)
            return not any(target[k : k + length] == option.target for k in range(len(target) - length + 1))
    return False
