"""What an experiment runs: the paper's four configurations, RNN + WP, two rows re-ranked by a sentence model,
and the sizes of each ``--scale``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

#: The news preset of ``pysmt train``, the dev set and the default test set, under ``--data``.
PRESET = "news"
DEV = "news/newstest2012"
TEST = "news/newstest2013"
SRC, TGT = "en", "fr"


@dataclass(frozen=True)
class Configuration:
    """One row of Table 1: the features added to the baseline system, and the paper's BLEU (dev / test; None
    for a row the paper does not have)."""

    key: str  # folder name
    label: str  # as the paper's Table 1 names it
    features: tuple[str, ...]
    paper_dev: float | None
    paper_test: float | None
    #: The key of the row whose tuned config this row re-ranks: ``pysmt tune --rerank`` from that row's tuned
    #: ``pysmt.toml`` of the same seed, with the features that row lacks (a sentence model, scoring each line's
    #: n-best list after the search). None: tuned from the baseline system.
    reranks: str | None = None

    @property
    def start(self) -> Configuration | None:
        """The row whose tuned config this row's tuning starts from (None: the baseline system)."""
        return None if self.reranks is None else configuration(self.reranks)

    @property
    def tuned_features(self) -> tuple[str, ...]:
        """The features its tuning adds (``pysmt tune --features``): a re-ranking row's, those of the row it
        re-ranks lacks."""
        start = self.start
        return self.features if start is None else tuple(f for f in self.features if f not in start.features)


CONFIGURATIONS = (
    Configuration("baseline", "Baseline", (), 30.64, 33.30),
    Configuration("rnn", "RNN", ("rnn",), 31.20, 33.87),
    # not in the paper: WP, the counterweight to the optimistic [UNK] probabilities, without the CSLM
    Configuration("rnn-wp", "RNN + WP", ("rnn", "wp"), None, None),
    Configuration("cslm-rnn", "CSLM + RNN", ("cslm", "rnn"), 31.48, 34.64),
    Configuration("cslm-rnn-wp", "CSLM + RNN + WP", ("cslm", "rnn", "wp"), 31.50, 34.54),
    # not in the paper: a sentence model (an attention encoder-decoder over subwords) re-ranking a tuned row's
    # n-best lists after the search, its rescoring weights tuned on one decode's lists of the dev set
    Configuration("baseline-sentence", "Baseline + sentence", ("sentence",), None, None, reranks="baseline"),
    Configuration(
        "cslm-rnn-wp-sentence",
        "CSLM + RNN + WP + sentence",
        ("cslm", "rnn", "wp", "sentence"),
        None,
        None,
        reranks="cslm-rnn-wp",
    ),
)


def configuration(key: str) -> Configuration:
    """The row of ``key``."""
    return next(c for c in CONFIGURATIONS if c.key == key)


def chosen(keys: Iterable[str]) -> tuple[Configuration, ...]:
    """The rows an experiment runs for the rows ``keys`` (``--configurations``): those, the baseline (every row is
    compared with it) and every row a chosen one re-ranks, in :data:`CONFIGURATIONS`' order."""
    wanted = {"baseline", *keys}
    for c in reversed(CONFIGURATIONS):  # a row re-ranks one before it
        if c.key in wanted and c.reranks is not None:
            wanted.add(c.reranks)
    return tuple(c for c in CONFIGURATIONS if c.key in wanted)


#: Where the RNN's score enters the model (the ``rnn`` feature's ``mode``): the paper's extra phrase-table
#: column, stored by ``pysmt rnn score`` with the binarized table and ranked by the table limit.
RNN_MODE = "column"

#: The plugin behind each feature the configurations add: its distribution, source folder and command.
PLUGINS = {
    "rnn": ("pysmt-rnn-feature", "plugins/rnn_feature", "rnn"),
    "wp": ("pysmt-rnn-feature", "plugins/rnn_feature", "rnn"),
    "cslm": ("pysmt-cslm", "plugins/cslm", "cslm"),
    "sentence": ("pysmt-rnn-feature", "plugins/rnn_feature", "sentence"),
}

#: The stage that trains the model each feature reads (its folder in the run folder has the stage's name).
MODEL_STAGES = {"rnn": "rnn", "wp": "rnn", "cslm": "cslm", "sentence": "sentence"}

#: Peak memory (MB) of each kind of stage in the full-scale run (docs/results.md): what a stage asks a
#: cluster for until this run has measured a stage of its kind.
FULL_SCALE_PEAK_MB = {
    "system": 2100,
    "binarize": 2500,
    "rnn": 1100,
    # rnn score (the RNN's column): not in that run; the plugin README's whole news table took 0.9 GB
    "score": 1000,
    "cslm": 800,
    # the sentence model (the plugin's cpu preset): not in that run; an estimate above the RNN's
    "sentence": 1500,
    "tune": 6600,
    "decode": 2400,
    "analyses": 700,
}

#: The target shortlist of both plugins' default presets: the CSLM shares the RNN's when it has this size.
CSLM_SHORTLIST = 10_000


@dataclass(frozen=True, kw_only=True)
class Scale:
    """The sizes an experiment runs at; ``--dev-size``, ``--seeds`` and ``--budget`` override theirs."""

    name: str
    summary: str  # what it is for, in ``--scale``'s help
    #: Keep every k-th pair of the preset's bitext (a stratified slice of the same mixture); None: the preset itself.
    train_every: int | None
    dev_size: int | None  # first lines of newstest2012 (None: all 3,003)
    test_size: int | None  # first lines of each test set (None: all)
    seeds: int  # MERT optimizer seeds per configuration
    budget: float  # minutes of training per neural model (each may stop earlier by early stopping)
    max_updates: int | None  # updates per neural model, a cap independent of the machine's speed
    valid_every: int  # updates between the neural models' validations (points of the learning curves)
    nbest_size: int
    max_iterations: int
    restarts: int
    scatter_pairs: int  # Fig. 3
    map_words: int  # Fig. 4
    map_phrases: int  # Fig. 5
    samples: int  # Table 3: samples per source phrase


SCALES = {
    # The paper's experiment on our data: the full news preset, newstest2012 and the settings.
    "full": Scale(
        name="full",
        summary="the news preset and the issue's settings",
        train_every=None,
        dev_size=None,
        test_size=None,
        seeds=3,
        budget=60.0,
        max_updates=None,
        valid_every=2000,
        nbest_size=100,
        max_iterations=25,
        restarts=20,
        scatter_pairs=20_000,
        map_words=1000,
        map_phrases=2000,
        samples=50,
    ),
    # The whole chain in well under 15 minutes on 2 cores: 5,116 pairs, 100-sentence dev and test sets, one seed.
    "small": Scale(
        name="small",
        summary="a slice that runs in minutes",
        train_every=40,
        dev_size=100,
        test_size=100,
        seeds=1,
        budget=1.0,
        max_updates=None,
        valid_every=10,
        nbest_size=100,
        max_iterations=5,
        restarts=20,
        scatter_pairs=2000,
        map_words=300,
        map_phrases=300,
        samples=50,
    ),
    # CI's smoke test: every stage runs, on sizes that only check the plumbing; 20 updates per network
    # (two validations) whatever the machine's speed, so the test sees learning curves.
    "tiny": Scale(
        name="tiny",
        summary="the smoke test's",
        train_every=100,
        dev_size=20,
        test_size=20,
        seeds=1,
        budget=2.0,
        max_updates=20,
        valid_every=10,
        nbest_size=10,
        max_iterations=2,
        restarts=2,
        scatter_pairs=300,
        map_words=50,
        map_phrases=50,
        samples=10,
    ),
}


def scales_help() -> str:
    """``--scale``'s help: what each scale is for."""
    return "; ".join(f"{name}: {scale.summary}" for name, scale in SCALES.items()) + "."


def per_scale(size: str) -> str:
    """Each scale's ``size`` (a :class:`Scale` field), for an option's help: ``3 full, 1 small and tiny``."""
    scales: dict[str, list[str]] = {}
    for name, scale in SCALES.items():
        scales.setdefault(f"{getattr(scale, size):g}", []).append(name)
    return ", ".join(f"{value} {' and '.join(names)}" for value, names in scales.items())
