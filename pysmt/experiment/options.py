"""What ``pysmt experiment`` is told: :class:`ExperimentOptions`, whose fields are also its command-line options.

Apart from the chain (:mod:`pysmt.experiment.chain`), so that the command line is built without
importing the stages' commands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from pysmt.cli_options import POSITIVE, option
from pysmt.config import SearchOverrides
from pysmt.experiment.data import Bitext
from pysmt.experiment.settings import CONFIGURATIONS, SCALES, Configuration, Scale, chosen, per_scale, scales_help
from pysmt.shared_options import CLUSTER
from pysmt.training.options import PRESET_DATA
from tuning.options import OPTIMIZER, OPTIMIZERS


class ConfigurationKeys(click.ParamType):
    """Rows of Table 1 by key, comma-separated (``baseline,baseline-sentence``), or ``all``: the rows an experiment
    runs for them (:func:`~pysmt.experiment.settings.chosen`). An unknown key is a usage error naming the keys."""

    name = "KEY[,KEY...]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        if value.strip() == "all":
            return CONFIGURATIONS
        keys = [key.strip() for key in value.split(",") if key.strip()]
        unknown = [key for key in keys if key not in {c.key for c in CONFIGURATIONS}]
        if unknown or not keys:
            choices = ", ".join(c.key for c in CONFIGURATIONS)
            self.fail(f"{', '.join(map(repr, unknown)) or 'no row'}: give all or keys among {choices}", param, ctx)
        return chosen(keys)


@dataclass(kw_only=True)
class ExperimentOptions:
    """Everything ``pysmt experiment`` is told (``dev_size``, ``seeds`` and ``budget`` already filled from
    the scale): the fields are its command-line options (:mod:`pysmt.cli_options`), in its ``--help``'s order."""

    data: Path = field(
        metadata=option(
            type=click.Path(exists=True, file_okay=False, path_type=Path),
            default=PRESET_DATA,
            convert=Path.resolve,
            help="The shared data folder: the news preset's corpora, newstest2012 and 2013.",
        )
    )
    out: Path = field(
        metadata=option(
            type=click.Path(file_okay=False, path_type=Path),
            help="Run folder (rerun the same command to resume): stages, models, report.md, results.json.",
        )
    )
    tests: list[Bitext] = field(
        default_factory=list,
        metadata=option(
            "--test",
            nargs=2,
            multiple=True,
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            metavar="SRC REF",
            convert=Bitext.resolved,
            help="A test set, raw text (repeatable; default: newstest2013 under --data).",
        ),
    )
    #: The rows of Table 1 the run builds, in :data:`CONFIGURATIONS`' order.
    configurations: tuple[Configuration, ...] = field(
        default=CONFIGURATIONS,
        metadata=option(
            type=ConfigurationKeys(),
            default="all",
            help="The rows of Table 1 to build, comma-separated (or all): "
            + ", ".join(c.key for c in CONFIGURATIONS)
            + ". The baseline, and the row a sentence row re-ranks, are built too; the sentence model is trained "
            "only for a sentence row.",
        ),
    )
    scale: Scale = field(
        metadata=option(type=click.Choice(list(SCALES)), default="full", convert=SCALES.__getitem__, help=scales_help())
    )
    seeds: int = field(
        metadata=option(
            type=POSITIVE,
            default=None,
            help=f"Tuning seeds per configuration (default: the scale's: {per_scale('seeds')}).",
        )
    )
    #: What tunes every configuration and seed (``pysmt tune --optimizer``).
    optimizer: str = field(
        default=OPTIMIZER,
        metadata=option(
            type=click.Choice(OPTIMIZERS),
            help="The optimizer that tunes every row (pysmt tune --optimizer; docs/tutorials/tuning.md).",
        ),
    )
    dev_size: int | None = field(
        metadata=option(
            type=POSITIVE, default=None, help="Tune on the first N lines of newstest2012 (default: the scale's)."
        )
    )
    budget: float = field(
        metadata=option(
            type=click.FloatRange(min=0, min_open=True),
            default=None,
            help=f"Minutes of training per neural model (default: the scale's: {per_scale('budget')}).",
        )
    )
    system: Path | None = field(
        default=None,
        metadata=option(
            type=click.Path(exists=True, file_okay=False, path_type=Path),
            help="Reuse this system (a `pysmt train` folder) instead of training one.",
        ),
    )
    threads: int = field(
        default=2,
        metadata=option(
            type=POSITIVE, help="Decoding and training processes (on a cluster: of each stage, on its node)."
        ),
    )
    #: Run the stages on this Ray cluster, those that do not need each other at the same time.
    cluster: str | None = field(default=None, metadata=CLUSTER)
    force: bool = field(default=False, metadata=option(is_flag=True, help="Start afresh: redo every stage in --out."))
    #: The search settings given on the command line (``--stack`` ... ``--weight-overwrite``): every tuning's
    #: (``--weight-overwrite``: its starting weights) and, but the weights, every test decode's.
    search_settings: SearchOverrides = field(default_factory=SearchOverrides)
