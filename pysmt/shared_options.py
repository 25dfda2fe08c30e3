"""The command-line options that several commands give alike, each declared once: as metadata
(:mod:`pysmt.cli_options`) on the fields of the options dataclasses that carry them (``TuningOptions``,
``TrainingOptions``, ``ExperimentOptions``) and, for the commands that have none (``decode``,
``rescore``, ``binarize``), through :func:`~pysmt.cli_options.command_option`; and the options that say
which system to use, with how they are read.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args, get_type_hints

import click

from pysmt.cli_options import POSITIVE, Option, option
from pysmt.config import SearchConfig
from pysmt.running.memory_budget import DEFAULT as MEMORY_DEFAULT
from pysmt.running.memory_budget import MemorySize

#: The search algorithms: what ``[search] algorithm`` takes, read from its type.
ALGORITHMS: tuple[str, ...] = get_args(get_type_hints(SearchConfig)["algorithm"])

#: ``--search``: a config's algorithm replaced for one run.
SEARCH = option(type=click.Choice(ALGORITHMS), help="Search algorithm (default: the config's).")

#: ``--cluster ADDRESS``: where the work runs (Ray), never what it gives.
CLUSTER = option(
    metavar="ADDRESS",
    help="Run on a Ray cluster: its head's HOST[:PORT], `auto`, or `local` (a throw-away one on this "
    "machine). Needs Ray (pysmt-mt's extra `cluster`); every node must see the files.",
)

#: ``--threads N`` of the commands that decode on this machine.
DECODING_THREADS = option(type=POSITIVE, help="Decoding processes.")


def memory_option(spilling: str) -> Mapping[str, Option]:
    """``--memory SIZE`` (:mod:`pysmt.running.memory_budget`), the budget of the steps that ``spilling`` names."""
    return option(
        type=MemorySize(),
        default=MEMORY_DEFAULT,
        help=f"Memory for {spilling} (e.g. 1G, 800M): sorted pieces are spilled to disk (see --temp-dir) to "
        "keep within it. It never changes the result.",
    )


#: ``--temp-dir``: where the steps that keep within ``--memory`` spill.
TEMP_DIR = option(
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for temporary files (sorted runs); default: beside the files being made. Made if "
    "missing; what is left there is removed at the end, also on failure.",
)


def system_options(function: Any) -> Any:
    """The options that say which system to use: shared by decode, filter, binarize, rescore and tune."""
    options = [
        click.option(
            "-c",
            "--config",
            "config_path",
            required=True,
            type=click.Path(exists=True, dir_okay=False),
            help="System config: pysmt.toml or moses.ini.",
        ),
        click.option("--features", help="Comma-separated registered features to add, e.g. rnn,cslm,wp."),
        click.option(
            "--param",
            "params",
            multiple=True,
            metavar="FEATURE.KEY=VALUE",
            help="Set a feature's config parameter (FEATURE: its name or type), e.g. "
            "--param rnn.model=systems/news/rnn; paths are relative to the working folder. Repeatable.",
        ),
    ]
    for decorator in reversed(options):
        function = decorator(function)
    return function


def split_names(value: str | None) -> list[str]:
    """``--features``' comma-separated names."""
    return [name.strip() for name in value.split(",") if name.strip()] if value else []


def only_one_place(threads: int, cluster: str | None) -> None:
    """``--threads`` (local processes) and ``--cluster`` are two answers to one question: refuse both."""
    if cluster and threads > 1:
        raise click.UsageError("--threads and --cluster: give one (on a cluster, every CPU runs a decoder)")
