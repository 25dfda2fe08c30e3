"""Moses' single-dash spellings of ``decode``'s options (``-config``, ``-threads``, ``-n-best-list FILE N distinct``),
read as the pysmt options they are (README, *For Moses users*).

A Moses command line then works as it is: ``pysmt decode -f moses.ini -threads 4 -n-best-list nbest.txt 100``. Click
alone would read ``-config`` as ``-c onfig`` (``File 'onfig' does not exist``) and ``-threads`` as no option, so the
arguments are translated before click parses them (:class:`MosesCommand`). Only whole arguments that are options
are translated: a value (``--weight-overwrite '-stack'``) and whatever follows ``--`` stay as they are.
"""

from __future__ import annotations

from collections.abc import Sequence

import click

#: Moses' options that are pysmt's under another name; their values follow as they are.
RENAMED = {
    "-config": "--config",
    "-f": "--config",
    "-input-file": "--input",
    "-weight-file": "--weights",
    "-weight-overwrite": "--weight-overwrite",
    "-stack": "--stack",
    "-s": "--stack",
    "-cube-pruning-pop-limit": "--pop-limit",
    "-beam-threshold": "--beam-threshold",
    "-b": "--beam-threshold",
    "-distortion-limit": "--distortion-limit",
    "-max-phrase-length": "--max-phrase-length",
    "-ttable-limit": "--table-limit",
    "-threads": "--threads",
    "-alignment-output-file": "--alignment",
    "-report-segmentation": "--report-segmentation",
    "-t": "--report-segmentation",
    "-print-alignment-info": "--print-alignment-info",
    "-mark-unknown": "--mark-unknown",
    "-unknown-word-prefix": "--unknown-word-prefix",
    "-drop-unknown": "--drop-unknown",
    "-mbr": "--mbr",
    "-mbr-size": "--mbr-size",
    "-mbr-scale": "--mbr-scale",
    "-consensus-decoding": "--consensus-decoding",
    "-constraint": "--constraint",
    "-xml-input": "--xml-input",
}

#: ``-search-algorithm``'s values and ``--search``'s.
SEARCH_ALGORITHMS = {"0": "normal", "1": "cube"}

#: Moses' options that pysmt does not offer, and what to give instead.
NOT_OFFERED = {"-lmbr": "lattice MBR is not offered: give --mbr or --consensus-decoding"}


def moses_arguments(args: Sequence[str], value_options: set[str]) -> list[str]:
    """``args`` with Moses' spellings of options made pysmt's; ``value_options`` are the command's options that take
    a value (the argument after one is its value, never an option). A Moses option given wrong (``-n-best-list``
    without its size) is a usage error naming it."""
    out: list[str] = []
    k = 0
    while k < len(args):
        arg = args[k]
        if arg == "--":
            return [*out, *args[k:]]
        if arg in NOT_OFFERED:
            raise click.UsageError(f"Moses' {arg}: {NOT_OFFERED[arg]}")
        pysmt, used = moses_option(arg, args[k + 1 :], value_options)
        if pysmt is None:  # not Moses': as it is, with its value
            used = 1 if arg in value_options else 0
            pysmt = [arg, *args[k + 1 : k + 1 + used]]
        out += pysmt
        k += 1 + used
    return out


def moses_option(arg: str, following: Sequence[str], value_options: set[str]) -> tuple[list[str] | None, int]:
    """The pysmt arguments of the Moses option ``arg`` and how many of the ``following`` arguments it took as its
    values, or (None, 0) when ``arg`` is no Moses option."""
    if arg in RENAMED:  # a value follows as it is
        taken = 1 if RENAMED[arg] in value_options else 0
        return [RENAMED[arg], *following[:taken]], taken
    if arg == "-n-best-list":  # FILE N [distinct]
        if len(following) < 2 or not following[1].isdigit():
            raise click.UsageError("Moses' -n-best-list takes FILE N [distinct] (pysmt: --nbest FILE --nbest-size N)")
        distinct = len(following) > 2 and following[2] == "distinct"
        pysmt = ["--nbest", following[0], "--nbest-size", following[1]]
        return [*pysmt, "--distinct"] if distinct else pysmt, 2 + distinct
    if arg == "-search-algorithm":
        if not following or following[0] not in SEARCH_ALGORITHMS:
            raise click.UsageError(
                f"Moses' -search-algorithm {' '.join(following[:1])}: pysmt offers 0 (--search normal) and 1 "
                "(--search cube)"
            )
        return ["--search", SEARCH_ALGORITHMS[following[0]]], 1
    if arg == "-sort-word-alignment":  # 0: Moses' order (pysmt's default), 1: by target position
        if not following or following[0] not in ("0", "1"):
            raise click.UsageError("Moses' -sort-word-alignment takes 0 (Moses' order) or 1 (--sort-word-alignment)")
        return (["--sort-word-alignment"] if following[0] == "1" else []), 1
    if arg in ("-verbose", "-v"):  # 0: errors and warnings only; Moses' other levels are pysmt's default
        if not following or not following[0].isdigit():
            raise click.UsageError(f"Moses' {arg} takes a level (0: pysmt's --quiet)")
        return (["--quiet"] if following[0] == "0" else []), 1
    return None, 0


class MosesCommand(click.Command):
    """A click command that also reads Moses' spellings of its options (:func:`moses_arguments`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        value_options = {
            name
            for param in self.get_params(ctx)
            if isinstance(param, click.Option) and not param.is_flag and param.nargs > 0
            for name in param.opts
        }
        return super().parse_args(ctx, moses_arguments(args, value_options))
