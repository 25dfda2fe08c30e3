"""The command-line options that several commands give alike, each declared once (:mod:`pysmt.cli_options`):
on the fields of the options dataclasses that carry them (``TuningOptions``, ``ExperimentOptions``) and on
the commands that have none (``decode``, ``rescore``).
"""

from __future__ import annotations

from typing import get_args, get_type_hints

import click

from pysmt.cli_options import POSITIVE, option
from pysmt.config import SearchConfig

#: The search algorithms: what ``[search] algorithm`` takes, read from its type.
ALGORITHMS: tuple[str, ...] = get_args(get_type_hints(SearchConfig)["algorithm"])

#: ``--search``: a config's algorithm replaced for one run.
SEARCH = option(type=click.Choice(ALGORITHMS), help="Search algorithm (default: the config's).")

#: ``--cluster ADDRESS``: where the work runs (Ray), never what it gives.
CLUSTER = option(metavar="ADDRESS",
                 help="Run on a Ray cluster: its head's HOST[:PORT], `auto`, or `local` (a throw-away one on this "
                      "machine). Needs pysmt-mt[cluster]; every node must see the files.")

#: ``--threads N`` of the commands that decode on this machine.
DECODING_THREADS = option(type=POSITIVE, help="Decoding processes.")
