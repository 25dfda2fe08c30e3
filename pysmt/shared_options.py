"""The command-line options that several commands give alike, each declared once: as metadata
(:mod:`pysmt.cli_options`) on the fields of the options dataclasses that carry them (``TuningOptions``,
``TrainingOptions``, ``ExperimentOptions``, ``DecodeOptions``, and ``SystemOptions``, the system ``decode``, ``tune``
and ``serve`` decode with) and, for the commands that have none (``rescore``,
``binarize``), through :func:`~pysmt.cli_options.command_option`; and the options that say
which system to use, with how they are read.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args, get_type_hints

import click
from click.core import ParameterSource

from pysmt.cli_options import CORE_INT, POSITIVE, Option, command_option, option
from pysmt.config import SEARCH_OPTIONS, SearchConfig, SearchOverrides, parse_weight_overwrite
from pysmt.errors import PysmtError
from pysmt.files.markup import XML_INPUTS
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

#: ``--xml-input MODE`` (Moses' ``-xml-input``): how markup in the input is read, by decode, tune and serve.
XML_INPUT = option(
    type=click.Choice(XML_INPUTS),
    help="Markup in the input (Moses' -xml-input): pass-through reads it as words; ignore drops the tags; "
    'exclusive, inclusive and constraint read <tag translation="t1||t2" prob="p1||p2">words</tag> as the only, an '
    "added, or a constraining translation of its words; <wall/> and <zone>...</zone> constrain reordering in every "
    "mode but pass-through. A tag's translation is target tokens.",
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


#: The search settings a command line overrides (:class:`~pysmt.config.SearchOverrides`), by field: each option
#: as pysmt spells Moses' (docs/tutorials/moses-users.md). Types only here: the values are checked by the config's
#: checks when the overrides are made (:func:`search_overrides`), so a bad one is one line naming its option.
SEARCH_SETTINGS: dict[str, Mapping[str, Option]] = {
    "stack_size": option(
        SEARCH_OPTIONS["stack_size"],
        type=CORE_INT,
        help="Stack size: hypotheses kept per stack, 0: no limit (Moses' -stack; [search] stack-size).",
    ),
    "pop_limit": option(
        SEARCH_OPTIONS["pop_limit"],
        type=CORE_INT,
        help="Cube pruning's pops per stack (Moses' -cube-pruning-pop-limit; [search] pop-limit).",
    ),
    "beam_threshold": option(
        SEARCH_OPTIONS["beam_threshold"],
        type=float,
        help="Drop hypotheses this many times worse than a stack's best, in [0, 1) (Moses' -beam-threshold; "
        "[search] beam-threshold).",
    ),
    "distortion_limit": option(
        SEARCH_OPTIONS["distortion_limit"],
        type=CORE_INT,
        help="Longest reordering jump, 0: monotone, -1: unlimited (Moses' -distortion-limit; [search] "
        "distortion-limit).",
    ),
    "max_phrase_length": option(
        SEARCH_OPTIONS["max_phrase_length"],
        type=CORE_INT,
        help="Longest source phrase looked up (Moses' -max-phrase-length; [search] max-phrase-length).",
    ),
    "table_limit": option(
        SEARCH_OPTIONS["table_limit"],
        type=CORE_INT,
        help="Translations kept per source phrase in every phrase table, 0: all (Moses' -ttable-limit; each table's "
        "table-limit).",
    ),
    "max_sentence_length": option(
        SEARCH_OPTIONS["max_sentence_length"],
        type=CORE_INT,
        help="The longest input line translated, in words (after tokenization; and 100 characters a word before "
        "it); a longer one is written empty, with a warning naming it, and the lines after it are translated "
        "([search] max-sentence-length).  "
        "[default: 1000]",
    ),
    "rescore_size": option(
        SEARCH_OPTIONS["rescore_size"],
        type=CORE_INT,
        help="With features of complete translations (a sentence-level model): the distinct translations of each "
        "line the search gives them to score, before the rescoring pass re-ranks them by all the features' weighted "
        "scores; unused without one ([search] rescore-size).  [default: 100]",
    ),
    "weights": option(
        "--weight-overwrite",
        metavar="'NAME= W1 W2 NAME2= W3'",
        help="Weights of the named features, overriding every other (Moses' -weight-overwrite).",
    ),
}


def search_setting_options(function: Any) -> Any:
    """The search settings' options (:data:`SEARCH_SETTINGS`): shared by decode, tune, serve and experiment."""
    for name, metadata in reversed(SEARCH_SETTINGS.items()):
        function = command_option(f"search_{name}", metadata)(function)
    return function


def search_overrides(given: dict[str, Any]) -> SearchOverrides:
    """The search settings a command was given (its keyword arguments from :func:`search_setting_options`,
    taken out of ``given``), checked."""
    values = {name: given.pop(f"search_{name}", None) for name in SEARCH_SETTINGS}
    weights = values.pop("weights")
    try:
        return SearchOverrides(**values, weights=parse_weight_overwrite(weights) if weights is not None else ())
    except PysmtError as err:  # a bad option's value: a usage error (exit 2), as click's own checks give
        raise click.UsageError(str(err)) from None


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


def system_values(
    config_path: str, features: str | None, params: tuple[str, ...], given: dict[str, Any]
) -> dict[str, Any]:
    """The values of a command's :class:`~pysmt.decoding.options.SystemOptions` that its options do not give by
    name, for :func:`~pysmt.cli_options.from_command`: the system's (:func:`system_options`) and the search
    settings (:func:`search_setting_options`, taken out of ``given``, checked)."""
    return {
        "config": Path(config_path),
        "features": split_names(features),
        "params": list(params),
        "search_settings": search_overrides(given),
    }


def split_names(value: str | None) -> list[str]:
    """``--features``' comma-separated names."""
    return [name.strip() for name in value.split(",") if name.strip()] if value else []


def one_of(*given: tuple[str, object], why: str) -> None:
    """Refuse options that answer one question differently (``given``: each option's name and whether it was
    given), as a usage error: whichever won, the other would be silently ignored."""
    named = [name for name, value in given if value]
    if len(named) > 1:
        raise click.UsageError(f"{' and '.join(named)}: give one ({why})")


def given_on_command_line(name: str) -> bool:
    """Whether the running command's parameter ``name`` was given, not left at its default: an option that
    applies only beside another one is refused alone rather than silently ignored."""
    source = click.get_current_context().get_parameter_source(name)
    return source not in (None, ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP)


def only_with(required: str, present: bool, *names: str) -> None:
    """Refuse the options ``names`` (parameter names) given without ``required``, the option they apply to, as a
    usage error: alone they would be silently ignored."""
    if not present:
        for name in names:
            if given_on_command_line(name):
                raise click.UsageError(f"--{name.replace('_', '-')} applies to {required}: give that too")


def only_one_place(threads: int, cluster: str | None) -> None:
    """``--threads`` (local processes) and ``--cluster`` are two answers to one question: refuse both."""
    one_of(("--threads", threads > 1), ("--cluster", cluster), why="on a cluster, every CPU runs a decoder")
