"""How much of a phrase table each analysis wants (:func:`rnn_feature.table_sample.sample_table` draws it).

Its own module, free of torch, because ``pysmt rnn``'s analyses make their options from its fields
(:mod:`pysmt.plugin.commands`) when the command is loaded, also for ``pysmt --help``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import click

from pysmt.plugin.commands import POSITIVE, option

#: How many frequent and rare source phrases the analyses that pick them draw unless told.
PICKED = 5


@dataclass(kw_only=True)
class SampleSizes:
    """How much of the table each analysis wants (0: none), and what counts as long, frequent and rare.

    The fields with an option in their metadata are the options of the analyses that pick source
    phrases (``top-phrases``, ``samples``), which draw :data:`PICKED` frequent and rare ones unless told.
    """

    frequent: int = field(
        default=0, metadata=option(type=click.IntRange(min=0), default=PICKED, help="Random frequent source phrases.")
    )
    rare: int = field(
        default=0, metadata=option(type=click.IntRange(min=0), default=PICKED, help="Random rare source phrases.")
    )
    min_words: int = field(default=4, metadata=option(type=POSITIVE, help="Shortest source phrase considered."))
    #: count(f) >= this: a frequent source phrase
    frequent_min: float = field(default=20.0, metadata=option(help="count(f) from which a source phrase is frequent."))
    #: count(f) <= this: a rare one
    rare_max: float = field(default=1.0, metadata=option(help="count(f) up to which a source phrase is rare."))
    pairs: int = 0
    long_phrases: int = 0
