"""What ``pysmt tune`` is told: :class:`TuningOptions`, whose fields are also its command-line options.

Apart from the loop (:mod:`tuning.loop`), so that the command line can be built without importing the
decoder and the optimizer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import click

from pysmt.cli_options import POSITIVE, option
from pysmt.config import SearchOverrides
from pysmt.shared_options import CLUSTER, DECODING_THREADS, SEARCH, XML_INPUT

#: The share of the optimizer's weights in the next iteration's, the rest being the weights just
#: decoded with (mert-moses.pl's ``--historic-interpolation``): see :func:`tuning.loop.interpolated`.
INTERPOLATION = 0.5
#: N-best entries per dev sentence and decode, without ``--rerank`` (with it: the system's ``rescore-size``).
NBEST_SIZE = 100
#: How far one MERT iteration may move each weight, in units of the larger of its magnitude and the mean
#: magnitude: see :func:`tuning.optimizer.trust_region_bounds`.
TRUST_REGION = 1.0
#: The most random restarts MERT may make: each start is drawn (its point and generator kept) before the climbs, so
#: memory grows with their number (a billion ran out of it, after the first decoding); Moses' default is 20.
MAX_RESTARTS = 10_000
#: The optimizers ``--optimizer`` names, and the default: batch MIRA, the best and steadiest on test in
#: docs/results.md ("Three optimizers"), as Moses users tuning many features choose it.
OPTIMIZERS = ("kbmira", "mert", "pro")
OPTIMIZER = "kbmira"
#: Moses' kbmira defaults (-C, -J, -D); :mod:`tuning.kbmira` holds the same (kept here too, so that the command
#: line is built without importing the optimizers: a test checks that they agree).
MIRA_C, MIRA_PASSES, MIRA_DECAY = 0.01, 60, 0.999


@dataclass(kw_only=True)
class TuningOptions:
    """Everything ``pysmt tune`` is told: the fields with an option in their metadata are its command-line
    options (:mod:`pysmt.cli_options`), in its ``--help``'s order, after the system's (``-c``, ``--features``,
    ``--param``)."""

    config: Path
    features: list[str] = field(default_factory=list)
    #: ``FEATURE.key=value`` parameter settings, as ``decode --param`` takes them.
    params: list[str] = field(default_factory=list)
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
            "learned ones as rescoring-weights (README, Tuning). Needs a feature of complete translations.",
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
    restarts: int = field(
        default=20,
        metadata=option(type=click.IntRange(0, MAX_RESTARTS), help="Random restarts of MERT's line searches."),
    )
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
            "iteration 2 from collapsing (README, Tuning); --rerank decodes no more, so there it defaults to 1.",
        ),
    )
    #: What learns the weights from the pool: MERT (:mod:`tuning.optimizer`), k-best batch MIRA
    #: (:mod:`tuning.kbmira`) or PRO (:mod:`tuning.pro`).
    optimizer: str = field(
        default=OPTIMIZER,
        metadata=option(
            type=click.Choice(OPTIMIZERS),
            help="kbmira: Cherry and Foster's k-best batch MIRA, as Moses' kbmira (--mira-*); mert: Och's line "
            "searches (--restarts, --trust-region); pro: Hopkins and May's pairwise ranking, as Moses' pro. README, "
            "Tuning.",
        ),
    )
    trust_region: float = field(
        default=TRUST_REGION,
        metadata=option(
            "--trust-region",
            type=click.FloatRange(0.0, min_open=True),
            help="How far one MERT iteration may move each weight: this many times the larger of its magnitude and "
            "the mean weight's, so that no weight changes sign at once unless it is small ('inf': Moses' "
            "unbounded line searches). Keeps the decoder near what the n-best pool has seen (README, Tuning).",
        ),
    )
    mira_c: float = field(
        default=MIRA_C,
        metadata=option(
            "--mira-c",
            type=click.FloatRange(0.0, min_open=True),
            help="kbmira's step-size cap C (Moses' -C): lower regularizes more.",
        ),
    )
    mira_passes: int = field(
        default=MIRA_PASSES,
        metadata=option("--mira-passes", type=POSITIVE, help="kbmira's passes over the pool (Moses' -J)."),
    )
    mira_decay: float = field(
        default=MIRA_DECAY,
        metadata=option(
            "--mira-decay",
            type=click.FloatRange(0.0, 1.0, min_open=True),
            help="Decay of kbmira's background BLEU corpus (Moses' -D).",
        ),
    )
    mira_model_bg: bool = field(
        default=False,
        metadata=option(
            "--mira-model-bg",
            is_flag=True,
            help="kbmira's background corpus adds the model's best instead of the hope (Moses' --model-bg).",
        ),
    )
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
    search: str | None = field(default=None, metadata=SEARCH)
    #: How markup in the dev source is read (``--xml-input``), in every decode of it (None: as the config's
    #: ``[xml-input]`` says, else pass-through).
    xml_input: str | None = field(default=None, metadata=XML_INPUT)
    #: The search settings given on the command line (``--stack`` ... ``--weight-overwrite``: their options are
    #: :data:`pysmt.shared_options.SEARCH_SETTINGS`): every decode of the dev set uses them, ``--weight-overwrite``
    #: gives the starting weights, and the tuned pysmt.toml keeps the search settings.
    search_settings: SearchOverrides = field(default_factory=SearchOverrides)
    #: Start afresh in an ``out`` that holds an earlier job.
    force: bool = field(
        default=False,
        metadata=option(is_flag=True, help="Start afresh: discard the iterations of an earlier job in --out."),
    )

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
