"""``pysmt tune``: MERT's outer loop (Moses' ``mert-moses.pl``), resumable.

Each iteration decodes the dev set into an n-best list with the current weights, merges it into
the pool of all earlier lists (deduplicated), and optimizes the weights on the pool from the
current ones. It stops when no weight moves by ``1e-5`` or more, when a decode brings no new
candidate, or at the iteration cap. The tuned config takes the weights whose decode scored the
best dev BLEU (the last optimized weights are only a prediction until decoded).

Everything an iteration produces lives in ``TUNE_DIR/run<N>/`` and is written atomically:
``weights.txt`` (the weights decoded with, ``Name= w ...``), the decode step's ``nbest.txt`` and
``output.txt`` (the post-processed 1-best), the optimize step's ``optimized.txt``; each step then
marks itself done (``decode.done``, ``optimize.done``: its seconds, and the optimizer's predicted
BLEU; :class:`pysmt.running.jobs.DoneMarkers`), so a rerun skips the steps that finished and an interrupted
run resumes where it stopped. The folder's lock keeps a second run out (:mod:`pysmt.running.folder_lock`).
``TUNE_DIR/summary.tsv`` holds the per-iteration table (dev BLEU, pool, the optimizer's prediction, seconds,
and the weights decoded with), ``TUNE_DIR/curve.png`` draws it (when matplotlib is installed).
``TUNE_DIR/job.json`` records the system, dev set and settings (:mod:`pysmt.running.jobs`): a rerun with
other ones is refused instead of mixing their n-best lists, unless ``force`` starts afresh.

**Re-ranking** (``rerank``, ``pysmt tune --rerank``; Moses' n-best reranking): the weights learned are the
rescoring weights of every feature, those with which the decoder's rescoring pass re-ranks each line's
``rescore-size`` distinct translations when the system has features of complete translations
(:class:`~pysmt.features.base.TranslationFeature`, a sentence model). The dev set is decoded once, in
``run1``, with the config's weights as they are (no L1 normalization: the search must produce the
candidates the tuned config will re-rank), into n-best lists of the system's ``rescore-size`` entries by
default. The optimizer then runs on that one pool again and again, each step from the weights of the
step before, and never decodes again: re-ranking a fixed list is exactly what the pool computes, so an
iteration's dev BLEU is the pool's BLEU of its weights (:meth:`~tuning.line_search.CandidatePool.bleu`),
the BLEU the decoder's re-ranked 1-best scores. ``runN/weights.txt`` then holds iteration N's rescoring
weights, and the run folders after ``run1`` hold no decode. The tuned config keeps every search
feature's ``weights`` as the decoder used them and gets the best iteration's vector as every feature's
``rescoring_weights`` (a translation feature's ``weights`` too: it has no part in the search);
``TUNE_DIR/rescoring-weights.txt`` holds that vector (there is no ``weights.txt``: a ``--weights`` file
sets search weights).
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

import numpy as np
import sacrebleu

from pysmt.config import SystemConfig
from pysmt.config_files import read_weights_file, write_toml
from pysmt.decoder import Decoder
from pysmt.decoding.cluster import Cluster
from pysmt.decoding.line_streams import TranslationLines
from pysmt.decoding.options import system_recipe
from pysmt.errors import PysmtError
from pysmt.features.base import scores_translations
from pysmt.features.registry import add_feature_types, system_inputs, translation_feature_names
from pysmt.files import progress
from pysmt.files.figures import MISSING, available
from pysmt.files.formats import format_labels
from pysmt.files.outputs import Inputs, check_outputs
from pysmt.files.progress import progress_bar
from pysmt.files.textio import atomic_writer, read_lines
from pysmt.running.folder_lock import release_folder
from pysmt.running.jobs import DoneMarkers, Job
from pysmt.running.parallel import map_with_shared
from tuning.bleu import BleuStatistics
from tuning.curve import tuning_curve
from tuning.line_search import CandidatePool
from tuning.nbest import NbestPool
from tuning.optimizer import constant_features, l1_normalized
from tuning.optimizers import Task, registered
from tuning.options import TuningOptions

S = TypeVar("S")
J = TypeVar("J")
R = TypeVar("R")

#: Smallest weight change that counts as a change (mert-moses.pl's convergence test).
WEIGHT_TOLERANCE = 1e-5


@dataclass
class Iteration:
    number: int
    dev_bleu: float
    new: int
    pool: int
    predicted_bleu: float
    decode_s: float
    optimize_s: float
    weights: np.ndarray  # decoded with


def log(message: str) -> None:
    """A line on stderr, even with ``--quiet``: warnings and the result."""
    print(f"pysmt tune: {message}", file=sys.stderr, flush=True)


def measured(record: dict[str, object], key: str) -> float:
    """What a finished step measured, as its marker holds it (nan when unknown: a marker damaged by hand)."""
    value = record.get(key)
    return float(value) if isinstance(value, (int, float)) else NAN


def read_dev(options: TuningOptions) -> tuple[list[str], list[list[str]]]:
    """Dev source lines and, per sentence, its references; lengths are checked before any decoding."""
    source = [text for _, text in read_lines(options.source)]
    references = []
    for path in options.references:
        refs = [text for _, text in read_lines(path)]
        if len(refs) != len(source):
            raise PysmtError(
                f"{options.source} has {len(source):,} lines but {path} has {len(refs):,}: "
                "the dev source and its references must be parallel"
            )
        references.append(refs)
    if not source:
        raise PysmtError(f"{options.source}: empty dev set")
    return source, [list(refs) for refs in zip(*references)]


def weights_text(decoder: Decoder, weights: np.ndarray) -> str:
    return "".join(
        f"{name}= {' '.join(repr(float(w)) for w in weights[lo:hi])}\n" for name, lo, hi in decoder.nbest_labels()
    )


def as_lists(decoder: Decoder, weights: np.ndarray) -> list[list[float]]:
    return [weights[lo:hi].tolist() for _, lo, hi in decoder.nbest_labels()]


def from_file(decoder: Decoder, path: Path) -> np.ndarray:
    named = read_weights_file(path)
    return np.concatenate([named[name] for name, _, _ in decoder.nbest_labels()])


NAN = float("nan")
#: What a tuning folder holds besides its run folders (``rescoring-weights.txt`` instead of ``weights.txt``: a
#: rerank job's).
TUNE_FILES = ("pysmt.toml", "weights.txt", "rescoring-weights.txt", "summary.tsv", "curve.png")


class NothingToRerank(PysmtError):
    """``rerank`` on a system without a feature of complete translations: the decoder's rescoring pass runs only
    with one, so rescoring weights learned there would change no translation (``pysmt tune``: a usage error)."""


def interpolated(
    decoded: np.ndarray, optimized: np.ndarray, tuned: np.ndarray, share: float, constant: np.ndarray
) -> np.ndarray:
    """The next iteration's weights: ``share`` of the optimizer's, the rest those just decoded with.

    Why not the optimizer's alone: the pool of the first iterations holds candidates of one or two
    weight settings, and it leaves most directions unconstrained (a swap feature that is zero in
    nearly every candidate, an LM whose candidates are all fluent). The optimizer finds its best
    pool BLEU far out along them (on a 300-sentence newstest2012 dev set: the LM's share of the
    weights from 0.11 to 0.002), where the decoder produces translations the pool never held:
    iteration 2 decoded 0.6–4.4 BLEU after 8.8. Moses' ``mert`` does the same on that pool. Moving
    only part of the way keeps the next decode near what the pool describes, and the decode then
    adds the candidates that constrain the next step (docs/results.md, "MERT at iteration 2").
    Both vectors are L1-normalized over the ``tuned`` features first, as the optimizer normalizes
    its result (:func:`~tuning.optimizer.l1_normalized`: only when every other feature is
    ``constant`` within each sentence's list, so rankings do not depend on the scale), so that
    neither dominates by its size. ``share`` 1 is plain MERT (mert-moses.pl's default).
    """
    if share >= 1.0:
        return optimized
    indices = np.flatnonzero(tuned)
    old, new = (l1_normalized(w, indices, constant)[tuned] for w in (decoded, optimized))
    mixed = decoded.copy()
    mixed[tuned] = share * new + (1.0 - share) * old
    return mixed


def job_settings(options: TuningOptions, nbest_size: int, interpolation: float) -> dict[str, object]:
    """What ``job.json`` records of the options: a rerun with other settings is another job. Kept exactly as
    earlier records hold them (an entry added since is written only when it differs from what the jobs before it
    did), so that their jobs resume."""
    settings: dict[str, object] = {
        "features": options.system.features,
        "params": options.system.params,
        "nbest_size": nbest_size,
        "restarts": options.restarts,
        "seed": options.seed,
        "search": options.system.search,
        "interpolation": interpolation,
    }
    if options.rerank:  # none: a job of the normal loop, as all were before --rerank
        settings["rerank"] = True
    if options.xml_input not in (None, "pass-through"):  # none: the record of a job from before --xml-input
        settings["xml_input"] = options.xml_input
    if options.system.search_settings.given():  # none: the record of a job from before the search settings' options
        settings["search_settings"] = options.system.search_settings.recorded()
    return {**settings, **registered(options.optimizer).record(options.optimizer_options())}


def start_job(options: TuningOptions, config: SystemConfig, nbest_size: int, interpolation: float) -> None:
    """Check the outputs and record the job before any work; discard an earlier job's runs when starting afresh.
    (``nbest_size`` and ``interpolation``: the options' values, their defaults filled in.)"""
    out = options.out
    inputs: Inputs = {"--src": options.source, "--ref": options.references, **system_inputs(config)}
    check_outputs(
        {f"--out {out} (its {name})": out / name for name in TUNE_FILES}, inputs, folders={"--out": out}, create=True
    )
    settings = job_settings(options, nbest_size, interpolation)
    if not Job(out, "tune", settings, inputs).start(options.force):
        for old in [*out.glob("run[0-9]*"), *(out / name for name in TUNE_FILES)]:
            if old.is_dir():
                shutil.rmtree(old)
            elif old.exists():
                old.unlink()


class Tuner:
    """One tuning job in ``options.out``."""

    def __init__(self, options: TuningOptions) -> None:
        self.o = options
        progress.quiet = options.quiet  # no bar, not even a model's loading bar (a redirected log gets none anyway)
        self.source, references = read_dev(options)
        #: The system as the actors (``--cluster``) build it too; new features start at the default weights their
        #: feature declares (the registry gives those first), else at 0.
        self.recipe = system_recipe(
            options.system.config,
            options.system.features,
            options.system.params,
            None,
            search=options.system.search,
            overrides=options.system.search_settings,
            xml_input=options.xml_input,
            missing_weight=0.0,
        )
        config = self.recipe.configure()
        if options.rerank and not translation_feature_names(add_feature_types(config, options.system.features)):
            raise NothingToRerank(
                "--rerank: the system has no feature of complete translations (a sentence model: --features "
                "sentence), and without one the decoder re-ranks nothing; tune without --rerank"
            )
        self.nbest_size = options.nbest_entries(config.search.rescore_size)
        self.interpolation = options.interpolation_share()
        start_job(options, config, self.nbest_size, self.interpolation)
        self.rescore_size = config.search.rescore_size
        if options.rerank and self.nbest_size < self.rescore_size:
            log(
                f"warning: --nbest-size {self.nbest_size} is less than the system's rescore-size {self.rescore_size}: "
                "the lists miss translations the decoder re-ranks, so the dev BLEU tuning sees is not quite the "
                "decoder's"
            )
        self.say(f"loading {options.system.config}")
        self.decoder = self.recipe.build(config)
        labels = self.decoder.nbest_labels()
        self.fixed = np.concatenate(
            [[not feature.tunable] * (hi - lo) for feature, (_, lo, hi) in zip(self.decoder.features, labels)]
        )
        #: Every feature's weights as the decoder was built with them, and the rescoring pass's: a rerank job
        #: decodes with these, starts from the rescoring weights and keeps the weights as its tuned config's.
        self.built_weights, self.built_rescoring = self.decoder.weights, self.decoder.rescoring_weights
        if not options.rerank and self.decoder.rescorers and any(w is not None for w in self.decoder.given_rescoring):
            log(
                f"warning: {options.system.config} gives rescoring-weights (a --rerank tuning's): the decoder re-ranks "
                "every decode with them, so this tuning learns the search's weights, not theirs; tune them with "
                "--rerank afterwards"
            )
        self.pool = NbestPool(BleuStatistics(references), self.decoder.postprocess)
        self.candidates: CandidatePool | None = None  # the pool as the optimizer takes it (see reranked)
        self.references = [list(refs) for refs in zip(*references)]  # sacrebleu's layout: one list per reference
        self.history: list[Iteration] = []
        self.warm = False  # feature caches filled for forked workers (Decoder.warm_caches)
        self.cluster: Cluster | None = None  # decoder actors, kept across iterations (see workers)

    def run(self) -> Path:
        weights = self.starting_weights()
        for number in range(1, self.o.max_iterations + 1):
            run = self.o.out / f"run{number}"
            run.mkdir(parents=True, exist_ok=True)
            if (run / "weights.txt").exists():
                weights = from_file(self.decoder, run / "weights.txt")
            else:
                with atomic_writer(run / "weights.txt") as out:
                    out.write(weights_text(self.decoder, weights))
            steps = DoneMarkers(run)
            dev_bleu, new, decode_s = self.evaluate(number, weights, run, steps)
            if new == 0 and number > 1 and not self.o.rerank:
                self.record(Iteration(number, dev_bleu, new, len(self.pool), NAN, decode_s, 0.0, weights))
                self.say("no new candidates: stopping")
                break
            if steps.done("optimize"):
                optimized = from_file(self.decoder, run / "optimized.txt")
            else:
                start = time.time()
                optimized, predicted = self.optimize(weights)
                with atomic_writer(run / "optimized.txt") as out:
                    out.write(weights_text(self.decoder, optimized))
                steps.finish("optimize", seconds=round(time.time() - start, 3), predicted_bleu=predicted)
            record = steps.record("optimize")
            predicted = measured(record, "predicted_bleu")
            self.record(
                Iteration(
                    number, dev_bleu, new, len(self.pool), predicted, decode_s, measured(record, "seconds"), weights
                )
            )
            if np.max(np.abs(optimized - weights)) < WEIGHT_TOLERANCE:
                self.say("no weight changed: converged")
                break
            weights = optimized
        return self.finish()

    def starting_weights(self) -> np.ndarray:
        """Iteration 1's weights: the decoder's, L1-normalized over the tuned features as mert-moses.pl decodes its
        first run; a rerank job's, every feature's rescoring weights as the config gives them (the decoder's
        rescoring pass totals with these: iteration 1 is the decode's own re-ranking)."""
        if self.o.rerank:
            return np.concatenate(self.built_rescoring)
        weights = np.concatenate(self.decoder.weights)
        tuned = ~self.fixed
        if np.abs(weights[tuned]).sum() > 0:
            weights[tuned] /= np.abs(weights[tuned]).sum()
        return weights

    def evaluate(self, number: int, weights: np.ndarray, run: Path, steps: DoneMarkers) -> tuple[float, int, float]:
        """Iteration ``number``'s dev BLEU, the candidates its decode added to the pool, and the decode's seconds.

        It decodes the dev set with ``weights`` into ``run``, unless it did already (``steps``); a rerank job
        decodes only its first iteration, with the config's weights, and scores every iteration's ``weights`` by
        re-ranking that pool."""
        if self.o.rerank and number > 1:
            dev_bleu = self.reranked().bleu(weights)
            self.say(f"iteration {number}: dev BLEU {dev_bleu:.2f}, re-ranked")
            return dev_bleu, 0, 0.0
        if not steps.done("decode"):
            self.say(f"iteration {number}: decode dev ({len(self.source):,} sentences)")
            start = time.time()
            self.decode(None if self.o.rerank else weights, run)
            steps.finish("decode", seconds=round(time.time() - start, 3))
        decode_s = measured(steps.record("decode"), "seconds")
        outputs = [text for _, text in read_lines(run / "output.txt")]
        dev_bleu = sacrebleu.corpus_bleu(outputs, self.references).score
        new = self.pool.add(run / "nbest.txt")
        self.candidates = None
        self.say(f"iteration {number}: dev BLEU {dev_bleu:.2f}; {new:,} new candidates, {len(self.pool):,} in the pool")
        if self.o.rerank:
            reranked = self.reranked().bleu(weights)
            if abs(reranked - dev_bleu) > 1e-9:  # the lists' best is the decoder's but for a near tie
                log(
                    f"warning: the n-best lists re-ranked with the config's rescoring weights score dev BLEU "
                    f"{reranked:.2f}, the decoder's 1-best {dev_bleu:.2f}: their scores' 6 decimals break a near tie "
                    "otherwise than the decoder did; tuning scores weights on the lists"
                )
            dev_bleu = reranked
        return dev_bleu, new, decode_s

    def reranked(self) -> CandidatePool:
        """The pool as the optimizer takes it, built once after each decode."""
        if self.candidates is None:
            self.candidates = CandidatePool.from_lists(*self.pool.arrays())
        return self.candidates

    def decode(self, weights: np.ndarray | None, run: Path) -> None:
        """Decode the dev set with ``weights`` (None: the decoder's own, as built) into ``run/nbest.txt`` and
        ``run/output.txt``."""
        from pysmt.decoding.runner import translate_stream

        if self.o.threads > 1 and not self.warm:  # before the first fork: see Decoder.warm_caches
            self.decoder.warm_caches(
                progress_bar(
                    iterable=(  # a line too long to translate is not prepared either (tokenizing 2 MB took a minute)
                        "" if self.decoder.too_long(0, len(line)) else self.decoder.preprocess(line, index)
                        for index, line in enumerate(self.source)
                    ),
                    total=len(self.source),
                    unit=" sent",
                    desc="dev options",
                )
            )
            self.warm = True
        if weights is not None:
            self.decoder.set_weights(as_lists(self.decoder, weights))
        with (
            atomic_writer(run / "nbest.txt") as nbest,
            atomic_writer(run / "output.txt") as output,
            progress_bar(total=len(self.source), unit=" sent", desc="decode dev") as progress,
        ):
            emit = TranslationLines(
                output, self.decoder.nbest_labels(), nbest=nbest, nbest_size=self.nbest_size, progress=progress
            )
            if self.o.cluster:  # only the weights travel
                self.workers().translate(
                    enumerate(self.source), emit, weights=self.decoder.weights, nbest_size=self.nbest_size
                )
            else:
                translate_stream(
                    self.decoder, enumerate(self.source), emit, threads=self.o.threads, nbest_size=self.nbest_size
                )

    def workers(self) -> Cluster:
        """The decoder actors, started at the first need: each loads the system once, for every iteration."""
        if self.cluster is None:
            self.cluster = Cluster(str(self.o.cluster), self.recipe)
        return self.cluster

    def optimize(self, weights: np.ndarray) -> tuple[np.ndarray, float]:
        features, stats = self.pool.arrays()
        pool = self.reranked()
        constant = constant_features(pool)
        names = self.weight_names()
        for j in np.flatnonzero(constant & ~self.fixed):
            self.say(f"feature {names[j]} is constant in every sentence's n-best list: its weight stays {weights[j]:g}")
        task = Task(features, stats, weights.tolist(), seed=self.o.seed, fixed=self.fixed.tolist(), mapper=self.map)
        optimized, _ = registered(self.o.optimizer).run(self.o.optimizer_options(), task)
        # a fixed weight that kbmira's averaging scaled with the others (Moses' arithmetic counts the start once
        # more) gets its own value back where it is constant within every list, which changes no ranking
        optimized = np.where(self.fixed & constant, weights, optimized)
        step = interpolated(weights, optimized, ~self.fixed, self.interpolation, constant)
        return step, pool.bleu(step)  # the pool's BLEU where the next decode goes

    def map(self, function: Callable[[S, J], R], jobs: Sequence[J], shared: S) -> list[R]:
        """Where an optimizer spreads its work (MERT's restarts; a :class:`~tuning.optimizer.Mapper`): where the
        decoding runs, on the actors or on ``threads`` local processes."""
        if self.o.cluster:
            return self.workers().map(function, jobs, shared)
        return map_with_shared(function, jobs, shared, processes=self.o.threads)

    def say(self, message: str) -> None:
        """A progress line on stderr, left out with ``--quiet``."""
        if not self.o.quiet:
            log(message)

    def weight_names(self) -> list[str]:
        """Each weight's name: its feature's, with ``[k]`` for the k-th of a feature's several scores."""
        return [
            f"{name}[{k}]" if hi - lo > 1 else name
            for name, lo, hi in self.decoder.nbest_labels()
            for k in range(hi - lo)
        ]

    def record(self, iteration: Iteration) -> None:
        """Rewrite ``summary.tsv`` and ``curve.png`` with every iteration so far."""
        self.history.append(iteration)
        columns = ["iteration", "dev_bleu", "new_candidates", "pool", "predicted_bleu", "decode_s", "optimize_s"]
        with atomic_writer(self.o.out / "summary.tsv") as out:
            out.write("\t".join([*columns, *self.weight_names()]) + "\n")
            for it in self.history:
                figures = [it.number, f"{it.dev_bleu:.2f}", it.new, it.pool, f"{it.predicted_bleu:.2f}"]
                figures += [f"{it.decode_s:.1f}", f"{it.optimize_s:.1f}", *(f"{w:.6g}" for w in it.weights)]
                out.write("\t".join(map(str, figures)) + "\n")
        if available():
            tuning_curve(
                [it.dev_bleu for it in self.history],
                [it.predicted_bleu for it in self.history],
                f"pysmt tune --optimizer {self.o.optimizer}{' --rerank' if self.o.rerank else ''}",
                self.o.out / "curve.png",
            )
        elif len(self.history) == 1:
            self.say(f"no curve.png: {MISSING}")

    def finish(self) -> Path:
        """Write ``TUNE_DIR/pysmt.toml`` and ``weights.txt`` with the weights of the best iteration (a rerank job:
        the search weights as they were, the best weights as rescoring weights, and ``rescoring-weights.txt``)."""
        best = max(self.history, key=lambda it: it.dev_bleu)
        weights = from_file(self.decoder, self.o.out / f"run{best.number}" / "weights.txt")
        names = [name for name, _, _ in self.decoder.nbest_labels()]
        named = dict(zip(names, as_lists(self.decoder, weights)))
        if self.o.rerank:
            built = dict(zip(names, self.built_weights))
            specs = [
                replace(
                    spec,
                    weights=named[spec.name] if scores_translations(feature) else built[spec.name],
                    rescoring_weights=named[spec.name],
                )
                for spec, feature in zip(self.decoder.specs, self.decoder.features)
            ]
        else:
            specs = [replace(spec, weights=named[spec.name]) for spec in self.decoder.specs]
        config = replace(self.decoder.config, features=specs)
        if self.o.rerank and self.nbest_size > self.rescore_size:  # re-rank the lists the weights were tuned on
            config = replace(config, search=replace(config.search, rescore_size=self.nbest_size))
        path = self.o.out / "pysmt.toml"
        write_toml(config, path)
        with atomic_writer(self.o.out / ("rescoring-weights.txt" if self.o.rerank else "weights.txt")) as out:
            out.write(weights_text(self.decoder, weights))
        log(f"best dev BLEU {best.dev_bleu:.2f} (iteration {best.number}); wrote {path}")
        self.say("features: " + format_labels([(name, hi - lo) for name, lo, hi in self.decoder.nbest_labels()]))
        if best.number == 1 and len(self.history) > 1:
            log(
                f"warning: the starting weights {'re-ranked' if self.o.rerank else 'decoded'} best (iteration 1 of "
                f"{len(self.history)}): tuning did not improve on them; more iterations may"
            )
        unused = [spec.name for spec in specs if spec.type in self.o.system.features and not any(named[spec.name])]
        if unused:
            log(f"warning: tuned weight 0 for {', '.join(unused)}: the added feature is not used by these weights")
        return path


def tune(options: TuningOptions) -> Path:
    """Run (or resume) a tuning job; return the tuned config's path."""
    tuner = None
    try:
        tuner = Tuner(options)
        return tuner.run()
    finally:
        if tuner is not None and tuner.cluster is not None:
            tuner.cluster.close()
        release_folder(options.out)  # taken by start_job
