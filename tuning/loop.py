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
"""

from __future__ import annotations

import math
import shutil
import sys
import time
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import numpy as np
import sacrebleu

from pysmt.config import SystemConfig
from pysmt.config_files import read_weights_file, write_toml
from pysmt.decoder import Decoder, SystemRecipe
from pysmt.decoding.cluster import Cluster
from pysmt.decoding.line_streams import TranslationLines
from pysmt.errors import PysmtError
from pysmt.features.registry import system_inputs
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
from tuning.kbmira import kbmira
from tuning.line_search import CandidatePool
from tuning.nbest import NbestPool
from tuning.optimizer import constant_features, l1_normalized, optimize
from tuning.options import TuningOptions
from tuning.pro import pro

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
#: What a tuning folder holds besides its run folders.
TUNE_FILES = ("pysmt.toml", "weights.txt", "summary.tsv", "curve.png")


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


def start_job(options: TuningOptions, config: SystemConfig) -> None:
    """Check the outputs and record the job before any work; discard an earlier job's runs when starting afresh."""
    out = options.out
    inputs: Inputs = {"--src": options.source, "--ref": options.references, **system_inputs(config)}
    check_outputs(
        {f"--out {out} (its {name})": out / name for name in TUNE_FILES}, inputs, folders={"--out": out}, create=True
    )
    settings = {
        "features": options.features,
        "params": options.params,
        "nbest_size": options.nbest_size,
        "restarts": options.restarts,
        "seed": options.seed,
        "search": options.search,
        "interpolation": options.interpolation,
    }
    if options.xml_input not in (None, "pass-through"):  # none: the record of a job from before --xml-input
        settings["xml_input"] = options.xml_input
    if options.search_settings.given():  # none: the record of a job from before the search settings' options
        settings["search_settings"] = options.search_settings.recorded()
    if options.optimizer == "mert":  # no optimizer entry: a MERT job of before --optimizer is refused by its region
        settings["trust_region"] = options.trust_region if math.isfinite(options.trust_region) else "inf"
    elif options.optimizer == "kbmira":
        settings["optimizer"] = {
            "name": options.optimizer,
            "c": options.mira_c,
            "passes": options.mira_passes,
            "decay": options.mira_decay,
            "model_bg": options.mira_model_bg,
        }
    else:
        settings["optimizer"] = {"name": options.optimizer}
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
        #: The system as the actors (``--cluster``) build it too; new features start at weight 0.
        self.recipe = SystemRecipe(
            str(options.config),
            tuple(options.features),
            tuple(options.params),
            algorithm=options.search,  # type: ignore[arg-type]
            missing_weight=0.0,
            overrides=options.search_settings,
            xml_input=options.xml_input,  # type: ignore[arg-type]
        )
        config = self.recipe.configure()
        start_job(options, config)
        self.say(f"loading {options.config}")
        self.decoder = self.recipe.build(config)
        labels = self.decoder.nbest_labels()
        self.fixed = np.concatenate(
            [[not feature.tunable] * (hi - lo) for feature, (_, lo, hi) in zip(self.decoder.features, labels)]
        )
        self.pool = NbestPool(BleuStatistics(references), self.decoder.postprocess)
        self.references = [list(refs) for refs in zip(*references)]  # sacrebleu's layout: one list per reference
        self.history: list[Iteration] = []
        self.warm = False  # feature caches filled for forked workers (Decoder.warm_caches)
        self.cluster: Cluster | None = None  # decoder actors, kept across iterations (see workers)

    def run(self) -> Path:
        weights = np.concatenate(self.decoder.weights)
        tuned = ~self.fixed
        if np.abs(weights[tuned]).sum() > 0:  # mert-moses.pl decodes its first run with L1-normalized weights too
            weights[tuned] /= np.abs(weights[tuned]).sum()
        for number in range(1, self.o.max_iterations + 1):
            run = self.o.out / f"run{number}"
            run.mkdir(parents=True, exist_ok=True)
            if (run / "weights.txt").exists():
                weights = from_file(self.decoder, run / "weights.txt")
            else:
                with atomic_writer(run / "weights.txt") as out:
                    out.write(weights_text(self.decoder, weights))
            steps = DoneMarkers(run)
            if not steps.done("decode"):
                self.say(f"iteration {number}: decode dev ({len(self.source):,} sentences)")
                start = time.time()
                self.decode(weights, run)
                steps.finish("decode", seconds=round(time.time() - start, 3))
            decode_s = measured(steps.record("decode"), "seconds")
            outputs = [text for _, text in read_lines(run / "output.txt")]
            dev_bleu = sacrebleu.corpus_bleu(outputs, self.references).score
            new = self.pool.add(run / "nbest.txt")
            self.say(
                f"iteration {number}: dev BLEU {dev_bleu:.2f}; {new:,} new candidates, {len(self.pool):,} in the pool"
            )
            if new == 0 and number > 1:
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

    def decode(self, weights: np.ndarray, run: Path) -> None:
        """Decode the dev set with ``weights`` into ``run/nbest.txt`` and ``run/output.txt``."""
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
        self.decoder.set_weights(as_lists(self.decoder, weights))
        with (
            atomic_writer(run / "nbest.txt") as nbest,
            atomic_writer(run / "output.txt") as output,
            progress_bar(total=len(self.source), unit=" sent", desc="decode dev") as progress,
        ):
            emit = TranslationLines(
                output, self.decoder.nbest_labels(), nbest=nbest, nbest_size=self.o.nbest_size, progress=progress
            )
            if self.o.cluster:  # only the weights travel
                self.workers().translate(
                    enumerate(self.source), emit, weights=as_lists(self.decoder, weights), nbest_size=self.o.nbest_size
                )
            else:
                translate_stream(
                    self.decoder, enumerate(self.source), emit, threads=self.o.threads, nbest_size=self.o.nbest_size
                )

    def workers(self) -> Cluster:
        """The decoder actors, started at the first need: each loads the system once, for every iteration."""
        if self.cluster is None:
            self.cluster = Cluster(str(self.o.cluster), self.recipe)
        return self.cluster

    def optimize(self, weights: np.ndarray) -> tuple[np.ndarray, float]:
        features, stats = self.pool.arrays()
        pool = CandidatePool.from_lists(features, stats)
        constant = constant_features(pool)
        names = self.weight_names()
        for j in np.flatnonzero(constant & ~self.fixed):
            self.say(f"feature {names[j]} is constant in every sentence's n-best list: its weight stays {weights[j]:g}")
        if self.o.optimizer == "pro":  # seconds, here, wherever the decoding runs
            optimized, _ = pro(features, stats, weights.tolist(), seed=self.o.seed, fixed=self.fixed.tolist())
        elif self.o.optimizer == "kbmira":  # one pass after the other: seconds, here, wherever the decoding runs
            optimized, _ = kbmira(
                features,
                stats,
                weights.tolist(),
                c=self.o.mira_c,
                decay=self.o.mira_decay,
                passes=self.o.mira_passes,
                model_bg=self.o.mira_model_bg,
                seed=self.o.seed,
                fixed=self.fixed.tolist(),
            )
        else:
            # the restarts climb where the decoding runs: on the actors, or on --threads local processes
            mapper = self.workers().map if self.o.cluster else partial(map_with_shared, processes=self.o.threads)
            optimized, _ = optimize(
                features,
                stats,
                weights.tolist(),
                restarts=self.o.restarts,
                seed=self.o.seed,
                fixed=self.fixed.tolist(),
                trust_region=self.o.trust_region,
                mapper=mapper,
            )
        step = interpolated(weights, optimized, ~self.fixed, self.o.interpolation, constant)
        return step, pool.bleu(step)  # the pool's BLEU where the next decode goes

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
                f"pysmt tune --optimizer {self.o.optimizer}",
                self.o.out / "curve.png",
            )
        elif len(self.history) == 1:
            self.say(f"no curve.png: {MISSING}")

    def finish(self) -> Path:
        """Write ``TUNE_DIR/pysmt.toml`` and ``weights.txt`` with the weights of the best decoded iteration."""
        best = max(self.history, key=lambda it: it.dev_bleu)
        weights = from_file(self.decoder, self.o.out / f"run{best.number}" / "weights.txt")
        named = dict(zip((name for name, _, _ in self.decoder.nbest_labels()), as_lists(self.decoder, weights)))
        specs = [replace(spec, weights=named[spec.name]) for spec in self.decoder.specs]
        config = replace(self.decoder.config, features=specs)
        path = self.o.out / "pysmt.toml"
        write_toml(config, path)
        with atomic_writer(self.o.out / "weights.txt") as out:
            out.write(weights_text(self.decoder, weights))
        log(f"best dev BLEU {best.dev_bleu:.2f} (iteration {best.number}); wrote {path}")
        self.say("features: " + format_labels([(name, hi - lo) for name, lo, hi in self.decoder.nbest_labels()]))
        if best.number == 1 and len(self.history) > 1:
            log(
                f"warning: the starting weights decoded best (iteration 1 of {len(self.history)}): tuning did not "
                "improve on them; more iterations may"
            )
        unused = [spec.name for spec in specs if spec.type in self.o.features and not any(named[spec.name])]
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
