"""The chain of stages behind ``pysmt experiment``: data, system, neural models, MERT, decoding, scores.

Every stage runs the public ``pysmt`` commands (``train``, ``binarize``, ``rnn train``, ``rnn score``,
``cslm train``, ``tune``, ``decode``, the ``rnn`` analyses) as child processes, exactly as a user would, so
the experiment tests the toolkit as shipped and the core never imports a plugin. The RNN is trained once
per run, transductively: on the system's phrase pairs that the dev and test sources can use (``rnn train
--pairs-for``), never on a reference. It enters the model as the paper's extra phrase-table column: ``rnn
score --pairs-for`` stores its scores of those pairs with the binarized phrase table (the others stay
unscored: no dev or test sentence looks them up), and every configuration with the RNN decodes and tunes
with ``--param rnn.mode=column``, so that the RNN's score takes part in the table limit's ranking. The
CSLM (and WP) score inside the search (``--features``). The sentence model (an attention encoder-decoder over
subwords) is trained once per run too, on the system's bitext, when a row that re-ranks with it is chosen:
such a row starts from another row's tuned config of the same seed and tunes the rescoring weights with
``pysmt tune --rerank --features sentence``; its test decodes re-rank each line's n-best list after the search.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import partial
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from pysmt.errors import PysmtError
from pysmt.experiment.data import Bitext, write_every, write_head
from pysmt.experiment.options import ExperimentOptions
from pysmt.experiment.run_folder import RunFolder
from pysmt.experiment.settings import (
    CSLM_SHORTLIST,
    DEV,
    FULL_SCALE_PEAK_MB,
    MODEL_STAGES,
    PLUGINS,
    PRESET,
    RNN_MODE,
    SRC,
    TEST,
    TGT,
    Configuration,
)
from pysmt.experiment.stages import Measure, Needs, Stages, Step, log
from pysmt.features.registry import available
from pysmt.files.textio import atomic_path, atomic_writer
from pysmt.running.jobs import content_files
from pysmt.training.options import PRESETS

#: The scores of every run, written by the evaluate stage under RUN_DIR (the report reads them).
EVALUATION = "evaluation.json"
#: The folder of a binary phrase table where features' scores are stored (``rnn score`` writes there).
STORED = "stored"


def check_plugins(features: Iterable[str] = PLUGINS) -> None:
    """The plugins of ``features`` (default: every configuration's) are installed (found through entry points,
    never imported here)."""
    commands = {ep.name for ep in entry_points(group="pysmt.commands")}
    for feature in features:
        distribution, folder, command = PLUGINS[feature]
        if feature not in available() or command not in commands:
            raise PysmtError(
                f"pysmt experiment needs the {distribution} plugin (feature {feature!r}, command "
                f"`pysmt {command}`), which is not installed: pip install -e {folder}"
            )


def check_system(system: Path, sentence: bool) -> None:
    """A reused system is a `pysmt train` folder: the RNN needs its text phrase table, the CSLM its target text,
    the ``sentence`` model (when a row re-ranks with it) its bitext."""
    bitext = [f"corpus/train.{SRC}"] if sentence else []
    for needed in ("pysmt.toml", "phrase-table.gz", f"corpus/train.{TGT}", *bitext):
        if not (system / needed).is_file():
            raise PysmtError(f"--system {system}: no {needed} (give a folder written by `pysmt train`)")


def test_name(source: Path, taken: set[str]) -> str:
    """A short unique name for a test set: its file name without the language suffix (``newstest2013``)."""
    base = source.name.removesuffix(f".{SRC}") or "test"
    name, k = base, 2
    while name in taken:
        name, k = f"{base}-{k}", k + 1
    taken.add(name)
    return name


def tune_stage(configuration: Configuration, seed: int) -> str:
    return f"tune-{configuration.key}-seed{seed}"


def decode_stage(test: str, configuration: Configuration, seed: int) -> str:
    return f"decode-{test}-{configuration.key}-seed{seed}"


class Experiment(RunFolder):
    """One experiment in ``options.out`` (its run folder): its stages, in order."""

    def __init__(self, options: ExperimentOptions) -> None:
        #: The features of the chosen rows, and those of the stages every run has (the RNN's, the CSLM's).
        self.features = {"rnn", "wp", "cslm", *(f for c in options.configurations for f in c.features)}
        check_plugins(sorted(self.features))
        self.o = options
        if options.system is not None:
            check_system(options.system, "sentence" in self.features)
        tests = options.tests or [Bitext(options.data / f"{TEST}.{SRC}", options.data / f"{TEST}.{TGT}")]
        taken = {"train", "dev"}  # the names of the other files in RUN_DIR/data
        tests_by_name = {test_name(t.source, taken): t for t in tests}
        super().__init__(options.out.resolve(), tests_by_name, options.seeds, options.configurations)
        self.system = options.system.resolve() if options.system else self.run_dir / "system"
        self.config = self.run_dir / "system-bin" / "pysmt.toml"
        self.rnn, self.cslm, self.sentence = self.run_dir / "rnn", self.run_dir / "cslm", self.run_dir / "sentence"
        self.stages = Stages(self.run_dir, 0, options.force)
        self.stages.total = self.data_stages + len(self.plan())

    @property
    def slices_training(self) -> bool:
        """Whether the system is trained here on a slice (a small scale without --system)."""
        return self.o.system is None and self.o.scale.train_every is not None

    # -- the chain --------------------------------------------------------------------------------

    def plan(self) -> list[Step]:
        """The stages after the data's, in the order a single machine runs them, each with those it needs."""

        def needed(configuration: Configuration, seed: int) -> list[str]:
            """The stages a tuning needs: the system it starts from (the binarized one, or the tuning of the row
            it re-ranks), and those whose models its features read (with ``rnn``: its column, ``score-rnn``)."""
            features = configuration.tuned_features
            models = {MODEL_STAGES[feature] for feature in features} | ({"score-rnn"} if "rnn" in features else set())
            start = configuration.start
            return [tune_stage(start, seed) if start else "binarize", *sorted(models)]

        steps = [Step("system", [], self.train_system)] if self.o.system is None else []
        built = ["system"] if self.o.system is None else []
        steps += [
            Step("binarize", built, self.binarize),
            Step("rnn", built, self.train_rnn),
            Step("score-rnn", ["binarize", "rnn"], self.score_rnn),
            Step("cslm", [*built, "rnn"], self.train_cslm),
        ]
        if "sentence" in self.features:  # only for a row that re-ranks with it
            steps.append(Step("sentence", built, self.train_sentence))
        for seed in self.seeds:
            for configuration in self.configurations:  # a row that re-ranks another comes after it
                tune = tune_stage(configuration, seed)
                steps.append(Step(tune, needed(configuration, seed), partial(self.tune, configuration, seed)))
                steps += [
                    Step(
                        decode_stage(test, configuration, seed), [tune], partial(self.decode, test, configuration, seed)
                    )
                    for test in self.tests
                ]
        steps.append(Step("analyses", ["rnn"], self.analyse))
        steps.append(
            Step("evaluate", [step.name for step in steps if step.name.startswith(("tune-", "decode-"))], self.evaluate)
        )
        return steps

    def run(self) -> None:
        """Every stage: in order on this machine; on a cluster, each as soon as those it needs are done."""
        self.prepare_data()
        steps = self.plan()
        if self.o.cluster is None:
            for step in steps:
                step.action()
            return
        from pysmt.experiment.on_cluster import StageCluster, run_graph

        with StageCluster(self.o.cluster) as cluster:
            self.stages.place = cluster
            try:
                run_graph(steps, cluster)
            finally:  # the report lists the stages in the single-machine order, the data's first
                self.stages.place = None
                position = {step.name: k for k, step in enumerate(steps)}
                self.stages.done.sort(key=lambda stage: position.get(stage.name, -1))

    @property
    def data_stages(self) -> int:
        return 1 + self.slices_training + len(self.tests)

    def needs(self, kind: str, gpu: bool = False) -> Needs:
        """What a command stage asks a cluster for: the experiment's --threads CPUs, a GPU for neural work,
        and the memory its kind of stage took: measured in this run folder when one has finished (plus
        a quarter), else as measured at full scale."""
        measured = [stage.peak_mb for stage in self.stages.done if stage.name.split("-")[0] == kind and stage.peak_mb]
        memory = 1.25 * max(measured) if measured else FULL_SCALE_PEAK_MB[kind]
        return Needs(self.o.threads, memory, 1.0 if gpu else 0.0)

    def where_to_decode(self) -> list[str]:
        """Tuning's and test decoding's local processes (on a cluster: on the stage's node)."""
        return ["--threads", str(self.o.threads)]

    def force_flag(self) -> list[str]:
        return ["--force"] if self.o.force else []

    def prepare_data(self) -> None:
        """One stage per file pair, so that adding a test set leaves the dev set (and all tuning) alone."""
        scale, data = self.o.scale, self.o.data
        every = scale.train_every if self.slices_training else None
        if every:
            corpora = [Bitext(data / f"{prefix}.{SRC}", data / f"{prefix}.{TGT}") for prefix in PRESETS[PRESET]]

            def slice_training(_: Measure, every: int = every) -> None:
                n = write_every(corpora, every, self.train_bitext, "--data")
                log(f"training slice: every {every}th pair of the {PRESET} preset, {n:,} pairs")

            self.stages.run(
                "data-train",
                {"every": every},
                {"--data": [path for c in corpora for path in (c.source, c.target)]},
                slice_training,
                in_process=True,
            )
        dev = Bitext(data / f"{DEV}.{SRC}", data / f"{DEV}.{TGT}")
        self.stages.run(
            "data-dev",
            {"dev_size": self.o.dev_size},
            {"--data": [dev.source, dev.target]},
            lambda _: write_head(dev, self.o.dev_size, self.dev, "--data", "--dev-size"),
            in_process=True,
        )
        for name, test in self.tests.items():

            def head(_: Measure, name: str = name, test: Bitext = test) -> None:
                """The scale's first lines; a test set shorter than that is used whole."""
                label = f"--test {name}"
                size = scale.test_size if scale.test_size and test.count(label) > scale.test_size else None
                write_head(test, size, self.test_files(name), label, "--scale")

            self.stages.run(
                f"data-{name}",
                {"test_size": scale.test_size},
                {"--test": [test.source, test.target]},
                head,
                in_process=True,
            )

    @property
    def train_bitext(self) -> Bitext:
        return Bitext(self.data_dir / f"train.{SRC}", self.data_dir / f"train.{TGT}")

    def train_system(self) -> None:
        if self.slices_training:
            corpus = ["--corpus", str(self.data_dir / "train")]
            inputs: dict[str, Any] = {"corpus": [self.train_bitext.source, self.train_bitext.target]}
        else:
            corpus = ["--preset", PRESET, "--data", str(self.o.data)]
            inputs = {"--data": [self.o.data / f"{p}.{lang}" for p in PRESETS[PRESET] for lang in (SRC, TGT)]}
        args = [
            "train",
            *corpus,
            "--src-lang",
            SRC,
            "--tgt-lang",
            TGT,
            "--out",
            str(self.system),
            "--processes",
            str(self.o.threads),
            *self.force_flag(),
        ]
        self.stages.run("system", {"corpus": corpus[:2]}, inputs, lambda m: m.run(args), needs=self.needs("system"))

    def binarize(self) -> None:
        args = ["binarize", "-c", str(self.system / "pysmt.toml"), "-o", str(self.config.parent)]
        self.stages.run("binarize", {}, {"system": self.system}, lambda m: m.run(args), needs=self.needs("binarize"))

    def neural_limits(self) -> list[str]:
        """The training commands' limits, and their torch threads (the experiment's --threads)."""
        updates = self.o.scale.max_updates
        return [
            "--max-time",
            repr(self.o.budget),
            "--valid-every",
            str(self.o.scale.valid_every),
            *(["--max-updates", str(updates)] if updates else []),
            "--threads",
            str(self.o.threads),
        ]

    @property
    def neural_options(self) -> dict[str, Any]:
        """What a neural stage records: its limits change the model, so changing them is refused."""
        return {
            "budget_minutes": self.o.budget,
            "max_updates": self.o.scale.max_updates,
            "valid_every": self.o.scale.valid_every,
        }

    @property
    def sources(self) -> list[Path]:
        """The source sides the decoder translates: the dev set's (tuning) and every test set's."""
        return [self.dev.source, *(self.test_files(test).source for test in self.tests)]

    def train_rnn(self) -> None:
        """Transductive, once per run: on the system's pairs that the dev and test sources can use (what
        ``pysmt filter`` keeps for them, prepared as the decoder prepares them), never on a reference."""
        table, config = self.system / "phrase-table.gz", self.system / "pysmt.toml"
        args = [
            "rnn",
            "train",
            "--phrase-table",
            str(table),
            *(arg for source in self.sources for arg in ("--pairs-for", str(source))),
            "-c",
            str(config),
            "--out",
            str(self.rnn),
            *self.neural_limits(),
            *self.force_flag(),
        ]
        self.stages.run(
            "rnn",
            self.neural_options,
            {"--phrase-table": table, "--pairs-for": self.sources, "-c": config},
            lambda m: m.run(args),
            needs=self.needs("rnn", gpu=True),
        )

    def train_sentence(self) -> None:
        """Once per run, on the system's prepared bitext (what ``pysmt train`` left in its ``corpus/``), with the
        run's neural limits; every row that re-ranks with it reads it."""
        bitext = [self.system / "corpus" / f"train.{language}" for language in (SRC, TGT)]
        args = [
            "sentence",
            "train",
            "--system",
            str(self.system),
            "--out",
            str(self.sentence),
            *self.neural_limits(),
            *self.force_flag(),
        ]
        self.stages.run(
            "sentence",
            self.neural_options,
            {"--system": [self.system / "pysmt.toml", *bitext]},
            lambda m: m.run(args),
            needs=self.needs("sentence", gpu=True),
        )

    def binarized_tables(self) -> list[Path]:
        """The binarized system's phrase tables (folders), as its pysmt.toml names them."""
        from pysmt.config_files import load_config

        config = load_config(self.config)
        tables = [
            Path(str(spec.params["path"]))
            for spec in config.features
            if spec.type == "phrase-table" and Path(str(spec.params.get("path", ""))).is_dir()
        ]
        if not tables:
            raise PysmtError(f"{self.config}: no binary phrase table to store the RNN's scores with")
        return tables

    def binarized_files(self, folder: Path) -> list[Path]:
        """A folder of the binarized system without the scores stored with its tables (the score-rnn stage's
        output, written after the baseline's tunings may have started): what a stage records of it."""
        return [path for path in content_files(folder) if STORED not in path.relative_to(folder).parts]

    def score_rnn(self) -> None:
        """The RNN's phrase-table column: ``rnn score`` stores its scores with the binarized phrase tables, only
        for the pairs the dev and test sources can use (those the RNN was trained on); the others stay NaN."""
        tables = self.binarized_tables()

        def action(measure: Measure) -> None:
            for table in tables:
                measure.run(
                    [
                        "rnn",
                        "score",
                        "--model",
                        str(self.rnn),
                        "--phrase-table",
                        str(table),
                        *(arg for source in self.sources for arg in ("--pairs-for", str(source))),
                        "-c",
                        str(self.config),
                        "--threads",
                        str(self.o.threads),
                    ]
                )

        self.stages.run(
            "score-rnn",
            {"mode": RNN_MODE},
            {
                "--model": self.rnn,
                "--phrase-table": [path for table in tables for path in self.binarized_files(table)],
                "--pairs-for": self.sources,
                "-c": self.config,
            },
            action,
            needs=self.needs("score", gpu=True),
        )

    def train_cslm(self) -> None:
        text = self.system / "corpus" / f"train.{TGT}"

        def action(measure: Measure) -> None:
            measure.run(
                [
                    "cslm",
                    "train",
                    "--text",
                    str(text),
                    "--out",
                    str(self.cslm),
                    *self.shortlist(),
                    *self.neural_limits(),
                    *self.force_flag(),
                ]
            )

        self.stages.run(
            "cslm", self.neural_options, {"--text": text, "rnn": self.rnn}, action, needs=self.needs("cslm", gpu=True)
        )

    def shortlist(self) -> list[str]:
        """The RNN's target shortlist for the CSLM when it has the CSLM's size (so WP counts what both
        networks miss); a small slice has fewer target words than that, and the CSLM keeps its text's own."""
        vocab = self.rnn / "target.vocab"
        with open(vocab, "rb") as handle:
            size = sum(1 for _ in handle)
        shared = size == CSLM_SHORTLIST
        log(f"CSLM shortlist: {'the RNN target shortlist' if shared else 'its own'} ({size:,} RNN target entries)")
        return ["--shortlist", str(vocab)] if shared else []

    def model(self, feature: str) -> Path:
        """The model folder a feature reads: that of the stage that trains it."""
        return self.run_dir / MODEL_STAGES[feature]

    def model_params(self, features: tuple[str, ...]) -> list[str]:
        """Each feature's model folder; the RNN as its phrase-table column (``rnn.mode=column``)."""
        params = [f"{feature}.model={self.model(feature)}" for feature in features]
        if "rnn" in features:
            params.append(f"rnn.mode={RNN_MODE}")
        return [arg for param in params for arg in ("--param", param)]

    def search_settings(self, weights: bool) -> tuple[list[str], dict[str, Any]]:
        """The search settings given on the command line, as arguments and as recorded; ``weights``:
        ``--weight-overwrite`` too (a tuning from the system's weights; a test decode or a re-ranking tuning
        starts from tuned weights)."""
        recorded = self.o.search_settings.recorded()
        if not weights:
            recorded.pop("weight_overwrite", None)
        return self.o.search_settings.arguments(weights=weights), recorded

    def tune(self, configuration: Configuration, seed: int) -> None:
        """``pysmt tune`` of a row and seed: from the binarized system, or with ``--rerank`` from the tuned config
        of the row it re-ranks (same seed), whose search weights it keeps; the n-best lists then have the
        decoder's rescore-size (the tuning's default), every translation the test decode re-ranks."""
        scale, out, start = self.o.scale, self.tune_dir(configuration, seed), configuration.start
        config = self.config if start is None else self.tune_dir(start, seed) / "pysmt.toml"
        features = configuration.tuned_features
        args = [
            "tune",
            "-c",
            str(config),
            "--src",
            str(self.dev.source),
            "--ref",
            str(self.dev.target),
            "--out",
            str(out),
            "--seed",
            str(seed),
            *(["--nbest-size", str(scale.nbest_size)] if start is None else ["--rerank"]),
            "--max-iterations",
            str(scale.max_iterations),
            "--restarts",
            str(scale.restarts),
            "--optimizer",
            self.o.optimizer,
            *self.where_to_decode(),
            *self.force_flag(),
        ]
        if features:
            args += ["--features", ",".join(features), *self.model_params(features)]
        options: dict[str, Any] = {
            "features": list(features),
            **({"rnn_mode": RNN_MODE} if "rnn" in features else {}),
            **({"reranks": start.key} if start else {}),
            "seed": seed,
            **({"nbest_size": scale.nbest_size} if start is None else {}),
            "max_iterations": scale.max_iterations,
            "restarts": scale.restarts,
            "optimizer": self.o.optimizer,
        }
        settings, recorded = self.search_settings(weights=start is None)
        if recorded:  # none: the record of a run from before the search settings' options
            args += settings
            options["search_settings"] = recorded
        inputs: dict[str, Any] = {
            "system": self.binarized_files(self.config.parent),
            "dev": [self.dev.source, self.dev.target],
            **{f"{f} model": self.model(f) for f in features},
        }
        if start is not None:
            inputs["config"] = [config, self.tuned_weights(start, seed)]
        if "rnn" in features:
            inputs["rnn column"] = [table / STORED for table in self.binarized_tables()]
        self.stages.run(
            tune_stage(configuration, seed),
            options,
            inputs,
            lambda m: m.run(args),
            needs=self.needs("tune", gpu=bool(configuration.features)),
        )

    def decode(self, test: str, configuration: Configuration, seed: int) -> None:
        config = self.tune_dir(configuration, seed) / "pysmt.toml"  # a re-ranking row's: with its rescoring pass
        output, source = self.output(test, configuration, seed), self.test_files(test).source

        def action(measure: Measure) -> None:
            output.parent.mkdir(parents=True, exist_ok=True)
            with atomic_path(output) as tmp:
                measure.run(["decode", "-c", str(config), "-i", str(source), *self.where_to_decode(), *settings], tmp)

        # the tuned config holds the search settings already; given again, they are recorded (not the weights: the
        # tuning's are the result)
        settings, recorded = self.search_settings(weights=False)
        inputs = {"config": config, "weights": self.tuned_weights(configuration, seed), "--test": source}
        self.stages.run(
            decode_stage(test, configuration, seed),
            {"search_settings": recorded} if recorded else {},
            inputs,
            action,
            needs=self.needs("decode", gpu=bool(configuration.features)),
        )

    def analyse(self) -> None:
        """The paper's Table 2 and 3 and Fig. 3-5 by the RNN plugin's commands, into RUN_DIR/analysis: on the
        pairs the RNN was trained on (its ``pairs-for.gz``, the table filtered to the dev and test sources),
        the pairs it is asked about, not the whole table's."""
        scale, out = self.o.scale, self.run_dir / "analysis"
        pairs = self.rnn / "pairs-for.gz"
        common = [
            "--model",
            str(self.rnn),
            "--phrase-table",
            str(pairs),
            "--out",
            str(out),
            "--threads",
            str(self.o.threads),
        ]

        def action(measure: Measure) -> None:
            measure.run(["rnn", "top-phrases", *common])
            measure.run(["rnn", "samples", *common, "--samples", str(scale.samples)])
            measure.run(["rnn", "scatter", *common, "--pairs", str(scale.scatter_pairs)])
            measure.run(["rnn", "maps", *common, "--words", str(scale.map_words), "--phrases", str(scale.map_phrases)])

        options = {
            "samples": scale.samples,
            "scatter_pairs": scale.scatter_pairs,
            "map_words": scale.map_words,
            "map_phrases": scale.map_phrases,
        }
        self.stages.run(
            "analyses",
            options,
            {"rnn": self.rnn, "pairs": pairs},
            action,
            needs=self.needs("analyses", gpu=True),
        )

    def evaluate(self) -> None:
        """sacrebleu's scores of every dev and test output, and the paired tests, into RUN_DIR/evaluation.json."""
        from pysmt.experiment.scoring import evaluate_runs

        tuned = [self.tuned_weights(c, s) for c in self.configurations for s in self.seeds]
        outputs = [self.output(t, c, s) for t in self.tests for c in self.configurations for s in self.seeds]
        inputs = {
            "tuned": tuned,
            "outputs": outputs,
            "dev": self.dev.target,
            "references": [self.test_files(t).target for t in self.tests],
        }

        def action(_: Measure) -> None:
            with atomic_writer(self.run_dir / EVALUATION) as out:
                json.dump(evaluate_runs(self), out, indent=1)

        self.stages.run(
            "evaluate",
            {"seeds": self.o.seeds, "tests": sorted(self.tests)},
            inputs,
            action,
            in_process=True,
            derived=True,
        )
