"""``pysmt train``: the Moses baseline recipe, step by step, resumable.

Steps (Moses' ``train-model.perl`` order; ``--first-step``/``--last-step`` take names or numbers):

1. ``prepare``  normalize, tokenize, train truecasers, truecase, clean -> ``corpus/train.{src,tgt}``
2. ``align``    eflomal both ways + symmetrization -> ``model/aligned.<heuristic>``
3. ``lex``      word translation tables -> ``lex.f2e``, ``lex.e2f``
4. ``extract``  phrase pairs with orientations -> ``model/extract.occurrences`` (written as found)
5. ``score``    ``phrase-table.gz`` and ``reordering-table.wbe-msd-bidirectional-fe.gz``, in buckets that
                fit ``--memory`` (:mod:`pysmt.training.buckets`)
6. ``lm``       5-gram modified Kneser-Ney LM with lmplz (``-S`` from ``--memory``) -> ``lm.bin``
7. ``binarize`` both tables as memory-mapped binary tables (within ``--memory``) -> ``phrase-table.bin/``,
                ``reordering-table.wbe-msd-bidirectional-fe.bin/``; the text tables stay (Moses reads them)
8. ``config``   ``pysmt.toml`` naming the binary tables, with Moses' untuned default weights

The system loads in milliseconds rather than minutes (``pysmt decode``, each tuning iteration, ``serve``),
and a config written by ``tune`` or ``binarize`` from this one keeps naming the binary tables.

Each step writes its outputs atomically and then a marker ``steps/<name>.done`` (its seconds:
:class:`pysmt.running.jobs.DoneMarkers`); a step whose marker and outputs exist is skipped (``--force``
redoes it), so an interrupted run resumes where it stopped, unless a step it reads from ran again in
this run (then it is redone too: a folder trained before the binarize step existed gets its binary
tables and a config naming them from a plain rerun). Before any work the run records itself in
``job.json`` (:mod:`pysmt.running.jobs`): a rerun with other corpora, languages or result-shaping
options stops with an error naming what changed, unless ``--force`` starts afresh (the other job's step
markers are then discarded). Each step declares the files it reads and the step that makes them; a run
whose ``--first-step`` skips a step whose files are missing stops before doing anything, saying which
step to start from.
"""

from __future__ import annotations

import re
import shutil
import sys
import time
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path

from pysmt.config import FeatureSpec, ProcessingConfig, SearchConfig, SystemConfig
from pysmt.config_files import write_toml
from pysmt.errors import PysmtError, at_line
from pysmt.features.table_binarizing import binarize_feature_table
from pysmt.files.outputs import check_outputs
from pysmt.files.progress import progress_bar
from pysmt.files.textio import NO_ROOM, atomic_path, atomic_writer, count_lines, read_lines, scratch_folder, writing
from pysmt.running.folder_lock import release_folder
from pysmt.running.jobs import DoneMarkers, Job
from pysmt.running.memory_budget import megabytes
from pysmt.training.options import STEPS, TrainingOptions

#: The share of ``--memory`` lmplz is given (``-S``): it also needs a little beyond its sorting memory.
LM_SHARE = 0.8

REORDERING_MODEL = "wbe-msd-bidirectional-fe-allff"

#: A Pharaoh alignment point ``i-j``: 0-based source and target word numbers.
POINT = re.compile(r"([0-9]+)-([0-9]+)")


def step_name(value: str) -> str:
    """A step given by name or 1-based number."""
    if value.isdigit() and 1 <= int(value) <= len(STEPS):
        return STEPS[int(value) - 1]
    if value in STEPS:
        return value
    raise PysmtError(f"unknown step {value!r}; steps: " + ", ".join(f"{k + 1}={s}" for k, s in enumerate(STEPS)))


def log(message: str) -> None:
    print(f"pysmt train: {message}", file=sys.stderr, flush=True)


class Pipeline:
    """Runs the steps of one training job into ``options.out``."""

    def __init__(self, options: TrainingOptions) -> None:
        self.o = options
        out = options.out
        #: Which steps finished (``steps/<name>.done``, with their seconds).
        self.steps = DoneMarkers(out / "steps")
        self.train_src = out / "corpus" / f"train.{options.src_lang}"
        self.train_tgt = out / "corpus" / f"train.{options.tgt_lang}"
        self.lm_extra = out / "corpus" / f"lm-extra.{options.tgt_lang}"
        self.truecase_src = out / f"truecase.{options.src_lang}"
        self.truecase_tgt = out / f"truecase.{options.tgt_lang}"
        self.aligned = out / "model" / f"aligned.{options.symmetrization}"
        self.lex_f2e = out / "lex.f2e"
        self.lex_e2f = out / "lex.e2f"
        self.extract = out / "model" / "extract.occurrences"
        self.phrase_table = out / "phrase-table.gz"
        self.reordering_table = out / "reordering-table.wbe-msd-bidirectional-fe.gz"
        self.lm = out / "lm.bin"
        #: The binary tables (folders) the config names.
        self.binary_phrase_table = out / "phrase-table.bin"
        self.binary_reordering_table = out / "reordering-table.wbe-msd-bidirectional-fe.bin"
        self.folders = {self.binary_phrase_table, self.binary_reordering_table}
        self.config = out / "pysmt.toml"
        self.timings: dict[str, float] = {}
        truecase = [] if options.prepared else [self.truecase_src, self.truecase_tgt]
        corpus = [self.train_src, self.train_tgt]
        #: What each step writes (what its marker vouches for) ...
        self.outputs: dict[str, list[Path]] = {
            "prepare": corpus + [self.lm_extra] + truecase,
            "align": [self.aligned],
            "lex": [self.lex_f2e, self.lex_e2f],
            "extract": [self.extract],
            "score": [self.phrase_table, self.reordering_table],
            "lm": [self.lm],
            "binarize": [self.binary_phrase_table, self.binary_reordering_table],
            "config": [self.config],
        }
        #: ... and what it reads of the other steps' outputs.
        self.needs: dict[str, list[Path]] = {
            "prepare": [],
            "align": corpus,
            "lex": corpus + [self.aligned],
            "extract": corpus + [self.aligned],
            "score": [self.extract, self.lex_f2e, self.lex_e2f] + corpus + [self.aligned],
            "lm": [self.train_tgt, self.lm_extra],
            "binarize": [self.phrase_table, self.reordering_table],
            "config": [self.binary_phrase_table, self.binary_reordering_table, self.lm] + truecase,
        }
        self.maker = {path: step for step, paths in self.outputs.items() for path in paths}

    @cached_property
    def corpus_lines(self) -> dict[str, int]:
        """The lines of each ``--corpus`` file (a missing one is an error), counted once: checked
        before any work, and the totals of the prepare step's progress bars."""
        return {
            f"{prefix}.{lang}": count_lines(Path(f"{prefix}.{lang}"))
            for prefix in self.o.corpora
            for lang in (self.o.src_lang, self.o.tgt_lang)
        }

    def check_inputs(self) -> None:
        """Fail before any work if a bitext's sides differ in length or a file is missing."""
        if not self.o.corpora:
            raise PysmtError("no --corpus given")
        for prefix in self.o.corpora:
            src, tgt = f"{prefix}.{self.o.src_lang}", f"{prefix}.{self.o.tgt_lang}"
            n_src, n_tgt = self.corpus_lines[src], self.corpus_lines[tgt]
            if n_src != n_tgt:
                raise PysmtError(f"{src} has {n_src:,} lines but {tgt} has {n_tgt:,}: a bitext needs equal line counts")
        for path in self.o.lm_texts:
            count_lines(path)
        if self.o.alignment is not None:
            count_lines(self.o.alignment)

    def job(self) -> Job:
        """This run as a :class:`~pysmt.running.jobs.Job`: the options that shape the system, and its input files."""
        o = self.o
        options = {
            "src_lang": o.src_lang,
            "tgt_lang": o.tgt_lang,
            "prepared": o.prepared,
            "symmetrization": o.symmetrization,
            "max_phrase_length": o.max_phrase_length,
            "lm_order": o.lm_order,
        }
        corpus = [Path(f"{prefix}.{lang}") for prefix in o.corpora for lang in (o.src_lang, o.tgt_lang)]
        inputs = {"--corpus": corpus, "--lm-text": o.lm_texts, "--alignment": o.alignment}
        return Job(o.out, "train", options, inputs)

    def made(self, path: Path) -> bool:
        """Whether a step's output is there: a file, or a binary table's folder (written whole, then renamed)."""
        return path.is_dir() if path in self.folders else path.is_file()

    def done(self, step: str) -> bool:
        """Whether a step finished (its marker is written last) and its outputs are still there."""
        return self.steps.done(step) and all(self.made(path) for path in self.outputs[step])

    def missing(self, first: int, last: int, discarded: bool) -> list[tuple[str, Path, str]]:
        """``(step, file, maker)`` for each file a step in ``first..last`` needs that nothing provides.

        A file is provided by its maker when the maker runs earlier in this invocation, or when it
        is done already (unless the folder's earlier work is ``discarded``).
        """
        found = []
        for step in STEPS[first : last + 1]:
            for path in self.needs[step]:
                maker = self.maker[path]
                if STEPS.index(maker) < first and (discarded or not self.done(maker)):
                    found.append((step, path, maker))
        return found

    def check_plan(self, first: int, last: int, discarded: bool) -> None:
        """Fail before any work if a step in the range would lack a file that an earlier, skipped step makes."""
        missing = self.missing(first, last, discarded)
        if not missing:
            return
        step = missing[0][0]
        _, path, maker = min((m for m in missing if m[0] == step), key=lambda m: STEPS.index(m[2]))
        start = next(k for k in range(first - 1, -1, -1) if not self.missing(k, last, discarded))
        rel = path.relative_to(self.o.out) if path.is_relative_to(self.o.out) else path
        message = f"step {step} needs {rel}, which step {maker} makes"
        if discarded:
            message += f" (what {self.o.out} holds is another job's, which --force discards)"
        elif self.made(path):
            message += f" (step {maker} did not finish)"
        if start < STEPS.index(maker):
            message += " (and the steps before it have not run either)"
        message += f": run pysmt train with --first-step {STEPS[start]}" + (" (or earlier)" if start else "")
        raise PysmtError(message)

    def run(self) -> None:
        first, last = STEPS.index(step_name(self.o.first_step)), STEPS.index(step_name(self.o.last_step))
        if first > last:
            raise PysmtError(f"--first-step {self.o.first_step} comes after --last-step {self.o.last_step}")
        if not self.o.corpora:
            raise PysmtError("no --corpus given")
        if self.o.src_lang == self.o.tgt_lang:
            raise PysmtError(f"--src-lang and --tgt-lang are both {self.o.src_lang!r}: give two languages")
        job = self.job()
        check_outputs({}, job.inputs, folders={"--out": self.o.out})
        if first == 0:
            self.check_inputs()
        discarded = job.holds_other_work()  # (fails on a missing input file, whatever the first step)
        if discarded and not self.o.force:
            job.start()  # fails, naming what differs
        self.check_plan(first, last, discarded)
        job.start(force=self.o.force)
        try:
            if discarded:  # --force over another job's work: none of its steps counts as done
                shutil.rmtree(self.steps.folder, ignore_errors=True)
            ran: set[str] = set()
            for name in STEPS[first : last + 1]:
                remade = sorted({self.maker[path] for path in self.needs[name]} & ran)
                if self.done(name) and not self.o.force and not remade:
                    log(f"step {name}: done already (use --force to redo)")
                    continue
                if self.done(name) and remade:
                    log(f"step {name}: redone, as step {' and '.join(remade)} ran again")
                log(f"step {name} ...")
                start = time.time()
                self.steps.redo(name)
                self.run_step(name)
                self.timings[name] = time.time() - start
                self.steps.finish(name, seconds=round(self.timings[name], 1))
                ran.add(name)
                log(f"step {name}: {self.timings[name]:.1f} s")
        finally:
            release_folder(self.o.out)

    def run_step(self, name: str) -> None:
        """Run one step; a disk that fills is a one-line error (the step's temporary files are gone by then)."""
        try:
            getattr(self, f"step_{name}")()
        except OSError as err:
            if err.errno not in NO_ROOM:
                raise
            where = f" writing {err.filename}" if err.filename else ""
            folders = sorted({str(self.o.out), str(self.o.temp_dir or self.o.out)})
            raise PysmtError(
                f"step {name}: {err.strerror}{where}; make room in {' and '.join(folders)} (or give "
                f"--temp-dir on a disk with room) and run the same command again to resume"
            ) from None

    # -- steps -------------------------------------------------------------------------------

    def step_prepare(self) -> None:
        """Each side streamed through tokenization, truecaser training and truecasing via files in a
        hidden folder (removed at the end), then the pairs cleaned: memory holds chunks, not the corpus."""
        self.train_src.parent.mkdir(parents=True, exist_ok=True)
        with scratch_folder(self.train_src, self.o.temp_dir) as folder:
            sides = [
                self.prepared_side(lang, model, folder)
                for lang, model in ((self.o.src_lang, self.truecase_src), (self.o.tgt_lang, self.truecase_tgt))
            ]
            self.clean(*sides)
        self.prepare_lm_texts()

    def prepared_side(self, lang: str, model: Path, folder: Path) -> Path:
        """One side of every corpus, tokenized and truecased (``--prepared``: as given), into a file in ``folder``."""
        from pysmt.training.preparation import process_lines, train_truecaser

        tokenize = not self.o.prepared
        raw = (line for prefix in self.o.corpora for _, line in read_lines(f"{prefix}.{lang}"))
        total = sum(self.corpus_lines[f"{prefix}.{lang}"] for prefix in self.o.corpora)
        tokens = folder / f"tokens.{lang}"
        self.write_lines(
            tokens, process_lines(raw, lang, tokenize=tokenize, processes=self.o.processes), total, f"tokenize {lang}"
        )
        if not tokenize:
            return tokens
        train_truecaser((line for _, line in read_lines(tokens)), model)
        cased = folder / f"truecased.{lang}"
        self.write_lines(
            cased,
            process_lines(
                (line for _, line in read_lines(tokens)),
                lang,
                truecase_model=model,
                mode="truecase",
                processes=self.o.processes,
            ),
            total,
            f"truecase {lang}",
        )
        return cased

    @staticmethod
    def write_lines(path: Path, lines: Iterable[str], total: int, description: str) -> None:
        with writing(path), open(path, "w", encoding="utf-8") as out:
            for line in progress_bar(lines, total=total, desc=description, unit=" lines"):
                out.write(line + "\n")

    def clean(self, source: Path, target: Path) -> None:
        """Keep the pairs :func:`keep_pair` accepts, into the training corpus; log what was dropped and why."""
        from pysmt.training.preparation import CleaningReport, keep_pair

        report = CleaningReport()
        with atomic_writer(self.train_src) as src_out, atomic_writer(self.train_tgt) as tgt_out:
            for (_, src), (_, tgt) in zip(read_lines(source), read_lines(target)):
                reason = keep_pair(src, tgt)
                if reason is None:
                    src_out.write(src + "\n")
                    tgt_out.write(tgt + "\n")
                    report.kept += 1
                else:
                    report.dropped[reason] += 1
        log(f"cleaning: {report.summary()}")
        if not report.kept:
            raise PysmtError(
                f"cleaning kept no sentence pair of the --corpus ({report.summary()}): nothing to train on"
            )

    def prepare_lm_texts(self) -> None:
        from pysmt.training.preparation import process_lines

        tokenize = not self.o.prepared
        with atomic_writer(self.lm_extra) as out:
            for path in self.o.lm_texts:
                lines = (line for _, line in read_lines(path))
                model = self.truecase_tgt if tokenize else None
                for line in process_lines(
                    lines,
                    self.o.tgt_lang,
                    truecase_model=model,
                    tokenize=tokenize,
                    mode="prepare",
                    processes=self.o.processes,
                ):
                    if line:
                        out.write(line + "\n")

    def step_align(self) -> None:
        from pysmt.training.alignment import align

        self.aligned.parent.mkdir(parents=True, exist_ok=True)
        if self.o.alignment is not None:
            self.copy_alignment(self.o.alignment)
            return
        align(self.train_src, self.train_tgt, self.aligned, self.o.symmetrization)

    def copy_alignment(self, alignment: Path) -> None:
        """Copy ``--alignment`` into the model, checking it is a Pharaoh alignment of the cleaned corpus."""
        label = f"--alignment {alignment}"
        n, expected = count_lines(alignment), count_lines(self.train_src)
        if n != expected:
            raise PysmtError(
                f"{label} has {n:,} lines but the cleaned corpus {self.train_src} has {expected:,}: "
                "it must align the corpus as step prepare left it (after cleaning), line for line"
            )
        lines = zip(read_lines(alignment), read_lines(self.train_src), read_lines(self.train_tgt))
        with atomic_writer(self.aligned) as out:
            for (line_no, line), (_, src), (_, tgt) in lines:
                n_src, n_tgt = len(src.split()), len(tgt.split())
                for token in line.split():
                    point = POINT.fullmatch(token)
                    if point is None:
                        raise at_line(
                            label,
                            line_no,
                            f"{token!r} is not an alignment point i-j (0-based source and target word numbers)",
                        )
                    i, j = point.groups()
                    if int(i) >= n_src:
                        raise at_line(
                            label,
                            line_no,
                            f"point {token}: source word {i} is out of range, as line "
                            f"{line_no} of {self.train_src} has {n_src} words",
                        )
                    if int(j) >= n_tgt:
                        raise at_line(
                            label,
                            line_no,
                            f"point {token}: target word {j} is out of range, as line "
                            f"{line_no} of {self.train_tgt} has {n_tgt} words",
                        )
                out.write(line + "\n")

    @cached_property
    def corpus(self):  # noqa: ANN201 - AlignedCorpus, imported lazily
        from pysmt.training.corpus import AlignedCorpus

        return AlignedCorpus.load(self.train_src, self.train_tgt, self.aligned)

    def step_lex(self) -> None:
        from pysmt.training.lexical import estimate_lexical_tables

        estimate_lexical_tables(self.corpus).save(self.lex_f2e, self.lex_e2f)

    def step_extract(self) -> None:
        from pysmt.training.extraction import extracted_parts, write_occurrences

        with progress_bar(total=len(self.corpus), desc="extract", unit=" sent") as bar:  # closed on failure
            parts = extracted_parts(
                self.corpus.sources,
                self.corpus.targets,
                self.corpus.alignments,
                self.o.max_phrase_length,
                self.o.processes,
                bar,
            )
            with atomic_path(self.extract) as tmp, open(tmp, "wb") as out:
                n = write_occurrences(parts, out)
        log(f"extracted {n:,} phrase pair occurrences")

    def step_score(self) -> None:
        from pysmt.training.buckets import score_occurrences
        from pysmt.training.lexical import Lexicon

        lexicon = Lexicon.load(self.lex_f2e, self.lex_e2f, self.corpus.src_vocab, self.corpus.tgt_vocab)
        with progress_bar(desc="score", unit=" pairs") as bar:  # closed on failure too: the error's own line
            n = score_occurrences(
                self.extract,
                self.corpus,
                lexicon,
                self.phrase_table,
                self.reordering_table,
                self.o.memory,
                self.o.processes,
                bar,
                self.o.temp_dir,
            )
        log(f"{n:,} distinct phrase pairs")

    def step_lm(self) -> None:
        from pysmt.training.language_model import build_language_model

        texts = [self.train_tgt] + ([self.lm_extra] if self.lm_extra.is_file() and self.lm_extra.stat().st_size else [])
        build_language_model(texts, self.lm, self.o.lm_order, megabytes(int(LM_SHARE * self.o.memory)), self.o.temp_dir)

    def step_binarize(self) -> None:
        """The config's text tables as binary tables, each sorted within ``--memory``."""
        text = system_config(self, binary=False)
        for spec in text.features:
            if spec.type in ("phrase-table", "lexical-reordering"):
                folder = self.binary_phrase_table if spec.type == "phrase-table" else self.binary_reordering_table
                header = binarize_feature_table(spec, folder, self.o.memory, self.o.temp_dir)
                counts = ", ".join(f"{value:,} {name}" for name, value in header["counts"].items())
                log(f"binarized {spec.name}: {counts} -> {folder.name}")

    def step_config(self) -> None:
        write_toml(system_config(self), self.config)


def system_config(pipeline: Pipeline, binary: bool = True) -> SystemConfig:
    """The trained system with Moses' untuned default weights (train-model.perl) and cube pruning, reading the
    binary tables (``binary``) or the text ones."""
    o = pipeline.o
    phrase_table = pipeline.binary_phrase_table if binary else pipeline.phrase_table
    reordering_table = pipeline.binary_reordering_table if binary else pipeline.reordering_table
    features = [
        FeatureSpec("unknown-word-penalty", "UnknownWordPenalty0", {}, [1.0]),
        FeatureSpec("word-penalty", "WordPenalty0", {}, [-1.0]),
        FeatureSpec("phrase-penalty", "PhrasePenalty0", {}, [0.2]),
        FeatureSpec(
            "phrase-table",
            "TranslationModel0",
            {"path": str(phrase_table), "num-features": 4, "table-limit": 20},
            [0.2] * 4,
        ),
        FeatureSpec(
            "lexical-reordering",
            "LexicalReordering0",
            {"model": REORDERING_MODEL, "num-features": 6, "path": str(reordering_table)},
            [0.3] * 6,
        ),
        FeatureSpec("distortion", "Distortion0", {}, [0.3]),
        FeatureSpec("kenlm", "LM0", {"path": str(pipeline.lm), "order": o.lm_order}, [0.5]),
    ]
    processing = ProcessingConfig(
        o.src_lang,
        o.tgt_lang,
        tokenize=not o.prepared,
        truecase_source=None if o.prepared else str(pipeline.truecase_src),
        truecase_target=None if o.prepared else str(pipeline.truecase_tgt),
    )
    return SystemConfig(
        path=pipeline.config, features=features, search=SearchConfig(algorithm="cube"), processing=processing
    )
