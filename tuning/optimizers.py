"""The optimizers ``pysmt tune --optimizer`` names, each registered with its own options dataclass and how it runs.

An :class:`Optimizer` holds all the loop and the command line need of one: ``options``, the dataclass of its
own settings (each field one of ``pysmt tune``'s options, :mod:`pysmt.cli_options`, as features declare their
parameters in a dataclass of their own), ``run``, which learns weights on the n-best pool with them, and
``recorded``, its part of the job record. :mod:`tuning.loop` and :mod:`tuning.cli` ask the registry
(:func:`registered`, :data:`OPTIMIZERS`) instead of naming optimizers: a new one is a module of its own that
imports nothing of pysmt (as :mod:`tuning.kbmira`) and an entry here.

The optimizers' modules load only when one runs (MERT's line searches compile with numba), so that
``pysmt tune``'s command line is built from this module without them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import click

from pysmt.cli_options import OPTION, POSITIVE, option

if TYPE_CHECKING:
    import numpy as np
    from _typeshed import DataclassInstance

    from tuning.optimizer import Mapper

#: How far one MERT iteration may move each weight, in units of the larger of its magnitude and the mean
#: magnitude: see :func:`tuning.optimizer.trust_region_bounds`.
TRUST_REGION = 1.0
#: The most random restarts MERT may make: each start is drawn (its point and generator kept) before the climbs, so
#: memory grows with their number (a billion ran out of it, after the first decoding); Moses' default is 20.
MAX_RESTARTS = 10_000
#: Moses' kbmira defaults (-C, -J, -D); :mod:`tuning.kbmira` holds the same (kept here too, so that the command
#: line is built without importing the optimizers: a test checks that they agree).
MIRA_C, MIRA_PASSES, MIRA_DECAY = 0.01, 60, 0.999

Settings = TypeVar("Settings", bound="DataclassInstance")


@dataclass(frozen=True, kw_only=True)
class MertOptions:
    """Och's MERT's own settings (:func:`tuning.optimizer.optimize`)."""

    restarts: int = field(
        default=20,
        metadata=option(type=click.IntRange(0, MAX_RESTARTS), help="Random restarts of MERT's line searches."),
    )
    trust_region: float = field(
        default=TRUST_REGION,
        metadata=option(
            "--trust-region",
            type=click.FloatRange(0.0, min_open=True),
            help="How far one MERT iteration may move each weight: this many times the larger of its magnitude and "
            "the mean weight's, so that no weight changes sign at once unless it is small ('inf': Moses' "
            "unbounded line searches). Keeps the decoder near what the n-best pool has seen "
            "(docs/tutorials/tuning.md).",
        ),
    )


@dataclass(frozen=True, kw_only=True)
class KbmiraOptions:
    """k-best batch MIRA's own settings (:func:`tuning.kbmira.kbmira`), Moses' kbmira's defaults."""

    c: float = field(
        default=MIRA_C,
        metadata=option(
            "--mira-c",
            type=click.FloatRange(0.0, min_open=True),
            help="kbmira's step-size cap C (Moses' -C): lower regularizes more.",
        ),
    )
    passes: int = field(
        default=MIRA_PASSES,
        metadata=option("--mira-passes", type=POSITIVE, help="kbmira's passes over the pool (Moses' -J)."),
    )
    decay: float = field(
        default=MIRA_DECAY,
        metadata=option(
            "--mira-decay",
            type=click.FloatRange(0.0, 1.0, min_open=True),
            help="Decay of kbmira's background BLEU corpus (Moses' -D).",
        ),
    )
    model_bg: bool = field(
        default=False,
        metadata=option(
            "--mira-model-bg",
            is_flag=True,
            help="kbmira's background corpus adds the model's best instead of the hope (Moses' --model-bg).",
        ),
    )


@dataclass(frozen=True)
class ProOptions:
    """PRO's own settings: none on the command line (:func:`tuning.pro.pro` runs with Moses' pro's)."""


@dataclass(frozen=True)
class Task:
    """What every optimizer is given besides its own options: the pool (one array of candidates' feature values
    and one of their BLEU statistics per dev sentence, as :func:`tuning.optimizer.optimize` takes them), the
    weights to start from, the seed, the weights that must not move, and where to spread work that can be spread
    (a :class:`~tuning.optimizer.Mapper`: the loop's processes or cluster)."""

    features: Sequence[np.ndarray]
    stats: Sequence[np.ndarray]
    init: list[float]
    seed: int
    fixed: list[bool]
    mapper: Mapper


@dataclass(frozen=True)
class Optimizer(Generic[Settings]):
    """A registered optimizer: its name (``--optimizer``), its options dataclass, how it runs on a :class:`Task`
    (the weights, and the pool's BLEU under them), what ``--optimizer``'s help says of it, and its part of the
    job record (None: ``{"optimizer": {"name": name, **options}}``)."""

    name: str
    options: type[Settings]
    run: Callable[[Settings, Task], tuple[np.ndarray, float]]
    help: str
    recorded: Callable[[Settings], dict[str, Any]] | None = None

    def record(self, options: Settings) -> dict[str, Any]:
        """The settings a job run with ``options`` records (:mod:`pysmt.running.jobs`): a rerun with others is
        another job."""
        if self.recorded is not None:
            return self.recorded(options)
        return {"optimizer": {"name": self.name, **asdict(options)}}

    def flags(self) -> list[str]:
        """Its options' command-line names, as ``--help`` shows them."""
        return [command_flag(f.name, f.metadata) for f in fields(self.options)]


def command_flag(name: str, metadata: Any) -> str:
    """The long name of a field's option: the one it declares, else the field's name dashed (as
    :func:`pysmt.cli_options.command_option` names it)."""
    declared = [d for d in metadata[OPTION].declarations if d.startswith("--")]
    return declared[0] if declared else f"--{name.replace('_', '-')}"


def run_mert(options: MertOptions, task: Task) -> tuple[np.ndarray, float]:
    """MERT's restarts climb where the task's mapper runs them (the loop's processes or cluster)."""
    from tuning.optimizer import optimize

    return optimize(
        task.features,
        task.stats,
        task.init,
        restarts=options.restarts,
        seed=task.seed,
        fixed=task.fixed,
        trust_region=options.trust_region,
        mapper=task.mapper,
    )


def recorded_mert(options: MertOptions) -> dict[str, Any]:
    """No optimizer entry, as in the records of before ``--optimizer`` (all MERT's): a MERT job of before it is
    refused by its region. (The restarts are every job's: :attr:`tuning.options.TuningOptions.restarts`.)"""
    return {"trust_region": options.trust_region if math.isfinite(options.trust_region) else "inf"}


def run_kbmira(options: KbmiraOptions, task: Task) -> tuple[np.ndarray, float]:
    """One pass after the other: seconds, here, wherever the decoding runs."""
    from tuning.kbmira import kbmira

    return kbmira(
        task.features,
        task.stats,
        task.init,
        c=options.c,
        decay=options.decay,
        passes=options.passes,
        model_bg=options.model_bg,
        seed=task.seed,
        fixed=task.fixed,
    )


def run_pro(options: ProOptions, task: Task) -> tuple[np.ndarray, float]:
    """Seconds, here, wherever the decoding runs."""
    from tuning.pro import pro

    return pro(task.features, task.stats, task.init, seed=task.seed, fixed=task.fixed)


#: Every optimizer by name, in ``--optimizer``'s order (and their options' in ``--help``).
OPTIMIZERS: dict[str, Optimizer[Any]] = {}


def register(optimizer: Optimizer[Settings]) -> Optimizer[Settings]:
    """Add an optimizer to :data:`OPTIMIZERS`. Its options' fields become ``pysmt tune``'s command-line parameters
    by name, so no two optimizers may have a field of one name."""
    taken = {f.name: other.name for other in OPTIMIZERS.values() for f in fields(other.options)}
    clash = [f"{f.name} ({taken[f.name]}'s too)" for f in fields(optimizer.options) if f.name in taken]
    if optimizer.name in OPTIMIZERS:
        raise ValueError(f"optimizer {optimizer.name!r}: registered already")
    if clash:
        raise ValueError(f"optimizer {optimizer.name!r}: its options are named as another's: {', '.join(clash)}")
    OPTIMIZERS[optimizer.name] = optimizer
    return optimizer


register(
    Optimizer(
        "kbmira",
        KbmiraOptions,
        run_kbmira,
        help="Cherry and Foster's k-best batch MIRA, as Moses' kbmira (--mira-*)",
    )
)
register(
    Optimizer(
        "mert",
        MertOptions,
        run_mert,
        help="Och's line searches (--restarts, --trust-region)",
        recorded=recorded_mert,
    )
)
register(Optimizer("pro", ProOptions, run_pro, help="Hopkins and May's pairwise ranking, as Moses' pro"))


class UnknownOptimizer(ValueError):
    """A name no optimizer is registered under."""


def registered(name: str) -> Optimizer[Any]:
    """The optimizer registered as ``name``."""
    try:
        return OPTIMIZERS[name]
    except KeyError:
        raise UnknownOptimizer(
            f"unknown optimizer {name!r}: pysmt tune's optimizers are {', '.join(OPTIMIZERS)}"
        ) from None


def default_options() -> dict[str, Any]:
    """Every registered optimizer's options, at their defaults."""
    return {name: optimizer.options() for name, optimizer in OPTIMIZERS.items()}


def optimizers_help() -> str:
    """``--optimizer``'s help: each optimizer, what it is and its options."""
    return (
        "; ".join(f"{name}: {optimizer.help}" for name, optimizer in OPTIMIZERS.items())
        + ". See docs/tutorials/tuning.md."
    )
