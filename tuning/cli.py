"""``pysmt tune``, whose options are :class:`~tuning.options.TuningOptions`'s fields (:mod:`pysmt.cli_options`).

The loop's modules (the decoder, the optimizer) take longer to import than most commands take to run,
so they load when the command runs, not when ``pysmt`` builds its command line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from pysmt.cli_options import from_command, options_of
from pysmt.shared_options import only_one_place, search_overrides, search_setting_options, split_names, system_options
from tuning.options import TuningOptions


@click.command()
@system_options
@options_of(TuningOptions)
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
        config=Path(config_path),
        features=split_names(features),
        params=list(params),
        search_settings=search_overrides(given),
    )
    only_one_place(options.threads, options.cluster)
    from tuning.loop import NothingToRerank
    from tuning.loop import tune as run_tuning

    try:
        path = run_tuning(options)
    except NothingToRerank as err:  # a usage error (exit 2), found once the system's features are known
        raise click.UsageError(str(err)) from None
    click.echo(f"pysmt tune: tuned config {path} (per iteration: {options.out / 'summary.tsv'})")
