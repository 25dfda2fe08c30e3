"""What ``pysmt tune`` is told: :class:`TuningOptions`, whose fields are also its command-line options.

Apart from the loop (:mod:`tuning.loop`), so that the command line can be built without importing the
decoder and the optimizer.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from pysmt.cli_options import POSITIVE, flat_keywords, nested, option
from pysmt.decoding.options import SystemOptions
from pysmt.shared_options import CLUSTER, DECODING_THREADS, XML_INPUT
from tuning import optimizers
from tuning.optimizers import default_options, optimizers_help, registered

#: The share of the optimizer's weights in the next iteration's, the rest being the weights just
#: decoded with (mert-moses.pl's ``--historic-interpolation``): see :func:`tuning.loop.interpolated`.
INTERPOLATION = 0.5
#: N-best entries per dev sentence and decode, without ``--rerank`` (with it: the system's ``rescore-size``).
NBEST_SIZE = 100
#: The optimizers ``--optimizer`` names (registered in :mod:`tuning.optimizers`, each with its own options), and
#: the default: batch MIRA, the best and steadiest on test in docs/results.md ("Three optimizers"), as Moses users
#: tuning many features choose it.
OPTIMIZERS = tuple(optimizers.OPTIMIZERS)
OPTIMIZER = "kbmira"
#: The option of an optimizer (its name, the field) that every job records, whichever optimizer runs: MERT's
#: restarts, as the records of before ``--optimizer`` (all MERT's) held them and those of the other optimizers'
#: jobs since do, as given (``pysmt experiment`` gives ``--restarts`` to every tuning). So a job resumes only with
#: the restarts it started with, and ``pysmt tune`` takes ``--restarts`` with every ``--optimizer``.
EVERY_JOB = ("mert", "restarts")
#: The constants that moved to :mod:`tuning.optimizers` with the optimizers' options (:func:`__getattr__`).
MOVED = ("TRUST_REGION", "MAX_RESTARTS", "MIRA_C", "MIRA_PASSES", "MIRA_DECAY")


@flat_keywords("system")
@dataclass(kw_only=True)
class TuningOptions:
    """Everything ``pysmt tune`` is told: the fields with an option in their metadata are its command-line
    options (:mod:`pysmt.cli_options`), in its ``--help``'s order, after the system's (``-c``, ``--features``,
    ``--param``)."""

    source: Path = field(
        metadata=option(
            "--src",
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            help="Dev set source, as `decode` takes it (raw text for systems trained by pysmt).",
        )
    )
    references: list[Path] = field(
        metadata=option(
            "--ref",
            multiple=True,
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            help="Dev set reference, raw text (repeatable for several references).",
        )
    )
    out: Path = field(
        metadata=option(
            type=click.Path(file_okay=False, path_type=Path),
            help="Tuning folder: per-iteration n-best lists and weights, summary.tsv, curve.png, the tuned pysmt.toml.",
        )
    )
    #: Re-rank instead of decoding again: see :meth:`nbest_entries` and ``tuning.loop``'s module text.
    rerank: bool = field(
        default=False,
        metadata=option(
            is_flag=True,
            help="Learn the rescoring weights of every feature (a sentence model's with the decoder's) on the n-best "
            "lists of one decode: the dev set is decoded once with the config's weights, the optimizer re-ranks that "
            "pool until the weights settle, and the tuned config keeps the search weights as they were and gets the "
            "learned ones as rescoring-weights (docs/tutorials/tuning.md). Needs a feature of complete translations.",
        ),
    )
    #: None: :data:`NBEST_SIZE`, or with ``rerank`` the system's ``rescore-size`` (:meth:`nbest_entries`).
    nbest_size: int | None = field(
        default=None,
        metadata=option(
            type=POSITIVE,
            show_default=f"{NBEST_SIZE}; with --rerank, the system's rescore-size",
            help="N-best entries per sentence and iteration. With --rerank, give at least the system's rescore-size "
            "(the translations its rescoring pass re-ranks), so that the lists hold every candidate the decoder "
            "chooses from.",
        ),
    )
    max_iterations: int = field(default=25, metadata=option(type=POSITIVE))
    threads: int = field(default=1, metadata=DECODING_THREADS)
    seed: int = field(
        default=0,
        metadata=option(
            type=click.IntRange(min=0),  # numpy's seeds: a negative one failed only after the first decoding
            help="Seed of the optimizer: MERT's random restarts and directions, kbmira's sentence order, PRO's pairs.",
        ),
    )
    #: The optimizer's share of the next weights (1: its alone); see :func:`tuning.loop.interpolated`. None:
    #: :data:`INTERPOLATION`, or 1 with ``rerank`` (:meth:`interpolation_share`).
    interpolation: float | None = field(
        default=None,
        metadata=option(
            "--historic-interpolation",
            type=click.FloatRange(0.0, 1.0, min_open=True),
            show_default=f"{INTERPOLATION}; with --rerank, 1",
            help="Share of the optimizer's weights in the next iteration's, the rest being the weights just decoded "
            "with (1: the optimizer's alone), whichever --optimizer, as mert-moses.pl applies it. Keeps MERT's "
            "iteration 2 from collapsing (docs/tutorials/tuning.md); --rerank decodes no more, so there it defaults "
            "to 1.",
        ),
    )
    #: What learns the weights from the pool: k-best batch MIRA (:mod:`tuning.kbmira`), MERT
    #: (:mod:`tuning.optimizer`) or PRO (:mod:`tuning.pro`); the registry says (:mod:`tuning.optimizers`).
    optimizer: str = field(default=OPTIMIZER, metadata=option(type=click.Choice(OPTIMIZERS), help=optimizers_help()))
    #: Every registered optimizer's own options by name (``MertOptions`` ...: their fields are the command line's
    #: ``--restarts``, ``--mira-c`` ...), as the command line gives them all; the loop runs ``optimizer`` with its
    #: own (:meth:`optimizer_options`). One left out gets its defaults.
    optimizer_settings: dict[str, Any] = field(default_factory=default_options)
    quiet: bool = field(
        default=False,
        metadata=option(
            is_flag=True,
            help="Only warnings and the result on stderr: no progress bars, no line per step. (Without it, progress "
            "bars appear only on a terminal; a redirected log gets a line per iteration.)",
        ),
    )
    #: Decode, and climb the optimizer's restarts, on this Ray cluster (:mod:`pysmt.decoding.cluster`) instead of
    #: ``threads`` local processes.
    cluster: str | None = field(default=None, metadata=CLUSTER)
    #: The system tuned and how the dev set is searched, in every decode of it: the search settings (given on the
    #: command line after ``--force``; their options are :data:`pysmt.shared_options.SEARCH_SETTINGS`) are every
    #: decode's, ``--weight-overwrite`` gives the starting weights, and the tuned pysmt.toml keeps the search settings.
    system: SystemOptions = field(metadata=nested(SystemOptions))
    #: How markup in the dev source is read (``--xml-input``), in every decode of it (None: as the config's
    #: ``[xml-input]`` says, else pass-through).
    xml_input: str | None = field(default=None, metadata=XML_INPUT)
    #: Start afresh in an ``out`` that holds an earlier job.
    force: bool = field(
        default=False,
        metadata=option(is_flag=True, help="Start afresh: discard the iterations of an earlier job in --out."),
    )

    def __post_init__(self) -> None:
        registered(self.optimizer)  # an unknown name fails here, not after the first decoding
        for name, given in self.optimizer_settings.items():
            if not isinstance(given, registered(name).options):
                raise TypeError(f"optimizer_settings[{name!r}]: {given!r} is no {registered(name).options.__name__}")
        self.optimizer_settings = {**default_options(), **self.optimizer_settings}

    def optimizer_options(self) -> Any:
        """The options ``optimizer`` runs with (an instance of its registered dataclass)."""
        return self.optimizer_settings[self.optimizer]

    @property
    def restarts(self) -> int:
        """MERT's restarts, which every job records whichever optimizer runs (:data:`EVERY_JOB`)."""
        return int(getattr(self.optimizer_settings[EVERY_JOB[0]], EVERY_JOB[1]))

    def nbest_entries(self, rescore_size: int) -> int:
        """N-best entries per dev sentence: ``nbest_size``, else :data:`NBEST_SIZE`, or with ``rerank`` the
        system's ``rescore_size`` (the one decode's lists are then exactly what its rescoring pass re-ranks)."""
        if self.nbest_size is not None:
            return self.nbest_size
        return rescore_size if self.rerank else NBEST_SIZE

    def interpolation_share(self) -> float:
        """The optimizer's share of the next weights: ``interpolation``, else :data:`INTERPOLATION`, or 1 with
        ``rerank``: the interpolation keeps the next decode near what the pool describes, and a rerank job's
        next weights are scored on the pool itself, exactly."""
        if self.interpolation is not None:
            return self.interpolation
        return 1.0 if self.rerank else INTERPOLATION


def __getattr__(name: str) -> Any:
    """The constants that moved to :mod:`tuning.optimizers` with the optimizers' options, still importable from
    here (deprecated)."""
    if name in MOVED:
        warnings.warn(
            f"tuning.options.{name} is now tuning.optimizers.{name}; import it from there", DeprecationWarning, 2
        )
        return getattr(optimizers, name)
    raise AttributeError(f"module 'tuning.options' has no attribute {name!r}")
