"""``pysmt tune``, whose options are :class:`~tuning.options.TuningOptions`'s fields (:mod:`pysmt.cli_options`).

The loop's modules (the decoder, the optimizer) take longer to import than most commands take to run,
so they load when the command runs, not when ``pysmt`` builds its command line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from typing import Any, TypeVar

import click
from click.core import ParameterSource

from pysmt.cli_options import from_command, options_of
from pysmt.shared_options import only_one_place, search_setting_options, system_options, system_values
from tuning.optimizers import OPTIMIZERS, command_flag
from tuning.options import EVERY_JOB, TuningOptions

F = TypeVar("F", bound=Callable[..., Any])


def optimizers_options(function: F) -> F:
    """Every registered optimizer's options (:mod:`tuning.optimizers`), in the registry's order."""
    for optimizer in reversed(OPTIMIZERS.values()):
        function = options_of(optimizer.options)(function)
    return function


def refuse_other_optimizers_options(chosen: str) -> None:
    """An option of an optimizer other than ``chosen``, given on the command line, is a usage error: it would
    change nothing (but :data:`~tuning.options.EVERY_JOB`'s, which every job records)."""
    context = click.get_current_context()
    for name, optimizer in OPTIMIZERS.items():
        given = [
            command_flag(f.name, f.metadata)
            for f in fields(optimizer.options)
            if name != chosen
            and (name, f.name) != EVERY_JOB
            and context.get_parameter_source(f.name) not in (None, ParameterSource.DEFAULT)
        ]
        if given:
            own = ", ".join(OPTIMIZERS[chosen].flags())
            raise click.UsageError(
                f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} {name}'s: --optimizer {chosen} would ignore "
                f"{'it' if len(given) == 1 else 'them'} ({f'its own: {own}' if own else 'it has no option of its own'})"
            )


@click.command()
@system_options
@options_of(TuningOptions, stop="optimizer_settings")
@optimizers_options
@options_of(TuningOptions, start="optimizer_settings")
@search_setting_options
def tune(config_path: str, features: str | None, params: tuple[str, ...], **given: Any) -> None:
    """Learn the log-linear weights on a dev set by k-best batch MIRA, MERT or PRO (--optimizer), on sacrebleu's BLEU.

    Rerunning the same command resumes an interrupted job (--max-iterations and --threads may
    change); another system, dev set or setting is refused unless --force. Features a config has
    no weights for (e.g. added with --features) start at the default weights their feature declares
    (default_weights(): the RNN's, the CSLM's and WP's too), else at 0; the unknown-word penalty stays fixed.
    Search settings (--stack ...) apply to every decode and are kept in the tuned config; --weight-overwrite
    gives the starting weights. --rerank learns a sentence model's rescoring weights with the decoder's on one
    decode's n-best lists (e.g. -c TUNED/pysmt.toml --features sentence --rerank).
    """
    options = from_command(
        TuningOptions,
        given,
        system=system_values(config_path, features, params, given),
        optimizer_settings={name: from_command(optimizer.options, given) for name, optimizer in OPTIMIZERS.items()},
    )
    refuse_other_optimizers_options(options.optimizer)
    only_one_place(options.threads, options.cluster)
    from tuning.loop import NothingToRerank
    from tuning.loop import tune as run_tuning

    try:
        path = run_tuning(options)
    except NothingToRerank as err:  # a usage error (exit 2), found once the system's features are known
        raise click.UsageError(str(err)) from None
    click.echo(f"pysmt tune: tuned config {path} (per iteration: {options.out / 'summary.tsv'})")
