"""``pysmt train``: the Moses baseline recipe, step by step, resumable.

Steps (Moses' ``train-model.perl`` order; ``--first-step``/``--last-step`` take names or numbers):

1. ``prepare``  normalize, tokenize, train truecasers, truecase, clean -> ``corpus/train.{src,tgt}``
2. ``align``    eflomal both ways + symmetrization -> ``model/aligned.<heuristic>``
3. ``lex``      word translation tables -> ``lex.f2e``, ``lex.e2f``
4. ``extract``  phrase pairs with orientations -> ``model/extract.npz``
5. ``score``    ``phrase-table.gz`` and ``reordering-table.wbe-msd-bidirectional-fe.gz``
6. ``lm``       5-gram modified Kneser-Ney LM with lmplz -> ``lm.bin``
7. ``config``   ``pysmt.toml`` with Moses' untuned default weights

Each step writes its outputs atomically and then a marker ``steps/<name>.done``; a step whose
marker exists is skipped (``--force`` redoes it), so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from tqdm import tqdm

from pysmt.config import FeatureSpec, ProcessingConfig, SearchConfig, SystemConfig
from pysmt.errors import PysmtError
from pysmt.textio import atomic_path, atomic_writer, read_lines

STEPS = ("prepare", "align", "lex", "extract", "score", "lm", "config")

#: Bitexts of the named presets (prefixes under the data folder), and their languages.
PRESETS = {
    "news": ["tatoeba/tatoeba", "news/news-test2008", "news/newssyscomb2009", "news/newstest2009",
             "news/newstest2010", "news/newstest2011", "news/newsdiscussdev2015-enfr", "multi30k/raw/train"],
    "multi30k": ["multi30k/raw/train"],
}

REORDERING_MODEL = "wbe-msd-bidirectional-fe-allff"


@dataclass
class TrainingOptions:
    """Everything ``pysmt train`` is told."""

    src_lang: str
    tgt_lang: str
    corpora: list[Path]
    out: Path
    lm_texts: list[Path] = field(default_factory=list)
    prepared: bool = False
    alignment: Path | None = None
    symmetrization: str = "grow-diag-final-and"
    max_phrase_length: int = 7
    lm_order: int = 5
    first_step: str = STEPS[0]
    last_step: str = STEPS[-1]
    force: bool = False
    processes: int = 2


def step_name(value: str) -> str:
    """A step given by name or 1-based number."""
    if value.isdigit() and 1 <= int(value) <= len(STEPS):
        return STEPS[int(value) - 1]
    if value in STEPS:
        return value
    raise PysmtError(f"unknown step {value!r}; steps: " + ", ".join(f"{k + 1}={s}" for k, s in enumerate(STEPS)))


def count_lines(path: Path) -> int:
    if not path.is_file():
        raise PysmtError(f"{path}: no such file")
    with open(path, "rb") as handle:
        return sum(1 for _ in handle)


def log(message: str) -> None:
    print(f"pysmt train: {message}", file=sys.stderr, flush=True)


class Pipeline:
    """Runs the steps of one training job into ``options.out``."""

    def __init__(self, options: TrainingOptions) -> None:
        self.o = options
        out = options.out
        self.train_src = out / "corpus" / f"train.{options.src_lang}"
        self.train_tgt = out / "corpus" / f"train.{options.tgt_lang}"
        self.lm_extra = out / "corpus" / f"lm-extra.{options.tgt_lang}"
        self.truecase_src = out / f"truecase.{options.src_lang}"
        self.truecase_tgt = out / f"truecase.{options.tgt_lang}"
        self.aligned = out / "model" / f"aligned.{options.symmetrization}"
        self.lex_f2e = out / "lex.f2e"
        self.lex_e2f = out / "lex.e2f"
        self.extract = out / "model" / "extract.npz"
        self.phrase_table = out / "phrase-table.gz"
        self.reordering_table = out / "reordering-table.wbe-msd-bidirectional-fe.gz"
        self.lm = out / "lm.bin"
        self.config = out / "pysmt.toml"
        self.timings: dict[str, float] = {}

    def check_inputs(self) -> None:
        """Fail before any work if a bitext's sides differ in length or a file is missing."""
        if not self.o.corpora:
            raise PysmtError("no --corpus given")
        for prefix in self.o.corpora:
            src, tgt = Path(f"{prefix}.{self.o.src_lang}"), Path(f"{prefix}.{self.o.tgt_lang}")
            n_src, n_tgt = count_lines(src), count_lines(tgt)
            if n_src != n_tgt:
                raise PysmtError(f"{src} has {n_src:,} lines but {tgt} has {n_tgt:,}: a bitext needs equal line counts")
        for path in self.o.lm_texts:
            count_lines(path)
        if self.o.alignment is not None:
            count_lines(self.o.alignment)

    def run(self) -> None:
        first, last = STEPS.index(step_name(self.o.first_step)), STEPS.index(step_name(self.o.last_step))
        if first > last:
            raise PysmtError(f"--first-step {self.o.first_step} comes after --last-step {self.o.last_step}")
        if first == 0:
            self.check_inputs()
        self.o.out.mkdir(parents=True, exist_ok=True)
        for name in STEPS[first:last + 1]:
            marker = self.o.out / "steps" / f"{name}.done"
            if marker.exists() and not self.o.force:
                log(f"step {name}: done already (use --force to redo)")
                continue
            log(f"step {name} ...")
            start = time.time()
            getattr(self, f"step_{name}")()
            self.timings[name] = time.time() - start
            with atomic_writer(marker) as out:
                out.write(f"{self.timings[name]:.1f} s\n")
            log(f"step {name}: {self.timings[name]:.1f} s")

    # -- steps -------------------------------------------------------------------------------

    def step_prepare(self) -> None:
        from pysmt.training.preparation import CleaningReport, keep_pair, process_lines, train_truecaser

        src_raw, tgt_raw = [], []
        for prefix in self.o.corpora:
            src_raw += [line for _, line in read_lines(f"{prefix}.{self.o.src_lang}")]
            tgt_raw += [line for _, line in read_lines(f"{prefix}.{self.o.tgt_lang}")]
        tokenize = not self.o.prepared
        sides = []
        for lang, raw, model in ((self.o.src_lang, src_raw, self.truecase_src),
                                 (self.o.tgt_lang, tgt_raw, self.truecase_tgt)):
            bar = tqdm(total=len(raw), desc=f"tokenize {lang}", unit=" lines", file=sys.stderr)
            tokens = []
            for line in process_lines(raw, lang, tokenize=tokenize, processes=self.o.processes):
                tokens.append(line)
                bar.update(1)
            bar.close()
            if tokenize:
                train_truecaser(tokens, model)
                tokens = list(tqdm(process_lines(tokens, lang, truecase_model=model, mode="truecase",
                                                 processes=self.o.processes),
                                   total=len(tokens), desc=f"truecase {lang}", unit=" lines", file=sys.stderr))
            sides.append(tokens)
        report = CleaningReport()
        with atomic_writer(self.train_src) as src_out, atomic_writer(self.train_tgt) as tgt_out:
            for src, tgt in zip(*sides):
                reason = keep_pair(src, tgt)
                if reason is None:
                    src_out.write(src + "\n")
                    tgt_out.write(tgt + "\n")
                    report.kept += 1
                else:
                    report.dropped[reason] += 1
        log(f"cleaning: {report.summary()}")
        with atomic_writer(self.lm_extra) as out:
            for path in self.o.lm_texts:
                lines = [line for _, line in read_lines(path)]
                for line in process_lines(lines, self.o.tgt_lang, truecase_model=self.truecase_tgt if tokenize else None,
                                          tokenize=tokenize, mode="prepare", processes=self.o.processes):
                    if line:
                        out.write(line + "\n")

    def step_align(self) -> None:
        from pysmt.training.alignment import align

        self.aligned.parent.mkdir(parents=True, exist_ok=True)
        if self.o.alignment is not None:
            n, expected = count_lines(self.o.alignment), count_lines(self.train_src)
            if n != expected:
                raise PysmtError(f"{self.o.alignment} has {n:,} lines but the corpus {self.train_src} has {expected:,}")
            with atomic_writer(self.aligned) as out:
                for _, line in read_lines(self.o.alignment):
                    out.write(line + "\n")
            return
        align(self.train_src, self.train_tgt, self.aligned, self.o.symmetrization)

    @cached_property
    def corpus(self):  # noqa: ANN201 - AlignedCorpus, imported lazily
        from pysmt.training.corpus import AlignedCorpus

        return AlignedCorpus.load(self.train_src, self.train_tgt, self.aligned)

    def step_lex(self) -> None:
        from pysmt.training.lexical import estimate_lexical_tables

        estimate_lexical_tables(self.corpus).save(self.lex_f2e, self.lex_e2f)

    def step_extract(self) -> None:
        from pysmt.training.extraction import extract_corpus

        bar = tqdm(total=len(self.corpus), desc="extract", unit=" sent", file=sys.stderr)
        instances = extract_corpus(self.corpus.sources, self.corpus.targets, self.corpus.alignments,
                                   self.o.max_phrase_length, self.o.processes, bar)
        bar.close()
        log(f"extracted {len(instances):,} phrase pair occurrences")
        with atomic_path(self.extract) as tmp:
            instances.save(str(tmp))

    def step_score(self) -> None:
        from pysmt.training.extraction import PhraseInstances
        from pysmt.training.lexical import LexicalTables
        from pysmt.training.scoring import count_pairs, write_tables

        instances = PhraseInstances.load(str(self.extract))
        pairs = count_pairs(instances, self.corpus)
        lexical = LexicalTables.load(self.lex_f2e, self.lex_e2f)
        bar = tqdm(total=len(pairs), desc="score", unit=" pairs", file=sys.stderr)
        n = write_tables(instances, self.corpus, pairs, lexical, self.phrase_table, self.reordering_table,
                         self.o.processes, bar)
        bar.close()
        log(f"{n:,} distinct phrase pairs")

    def step_lm(self) -> None:
        from pysmt.training.language_model import build_language_model

        texts = [self.train_tgt] + ([self.lm_extra] if self.lm_extra.is_file() and self.lm_extra.stat().st_size else [])
        build_language_model(texts, self.lm, self.o.lm_order)

    def step_config(self) -> None:
        system_config(self).write_toml(self.config)


def system_config(pipeline: Pipeline) -> SystemConfig:
    """The trained system with Moses' untuned default weights (train-model.perl) and cube pruning."""
    o = pipeline.o
    features = [
        FeatureSpec("unknown-word-penalty", "UnknownWordPenalty0", {}, [1.0]),
        FeatureSpec("word-penalty", "WordPenalty0", {}, [-1.0]),
        FeatureSpec("phrase-penalty", "PhrasePenalty0", {}, [0.2]),
        FeatureSpec("phrase-table", "TranslationModel0",
                    {"path": str(pipeline.phrase_table), "num-features": 4, "table-limit": 20}, [0.2] * 4),
        FeatureSpec("lexical-reordering", "LexicalReordering0",
                    {"model": REORDERING_MODEL, "num-features": 6, "path": str(pipeline.reordering_table)}, [0.3] * 6),
        FeatureSpec("distortion", "Distortion0", {}, [0.3]),
        FeatureSpec("kenlm", "LM0", {"path": str(pipeline.lm), "order": o.lm_order}, [0.5]),
    ]
    processing = ProcessingConfig(o.src_lang, o.tgt_lang, tokenize=not o.prepared,
                                  truecase_source=None if o.prepared else str(pipeline.truecase_src),
                                  truecase_target=None if o.prepared else str(pipeline.truecase_tgt))
    return SystemConfig(path=pipeline.config, features=features, search=SearchConfig(algorithm="cube"),
                        processing=processing)
