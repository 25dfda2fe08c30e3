"""What ``pysmt train`` is told: :class:`TrainingOptions`, whose fields are also its command-line options,
its steps and its corpus presets.

Apart from the pipeline (:mod:`pysmt.training.pipeline`), so that the command line is built without
importing the steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import click

from pysmt.cli_options import POSITIVE, option
from pysmt.running.memory_budget import DEFAULT as MEMORY_DEFAULT
from pysmt.running.memory_budget import parse_size
from pysmt.shared_options import TEMP_DIR, memory_option
from pysmt.training.symmetrize import HEURISTICS

STEPS = ("prepare", "align", "lex", "extract", "score", "lm", "binarize", "config")

#: Bitexts of the named presets (prefixes under the data folder), and their languages.
PRESETS = {
    "news": [
        "tatoeba/tatoeba",
        "news/news-test2008",
        "news/newssyscomb2009",
        "news/newstest2009",
        "news/newstest2010",
        "news/newstest2011",
        "news/newsdiscussdev2015-enfr",
        "multi30k/raw/train",
    ],
    "multi30k": ["multi30k/raw/train"],
}
#: The data folder the presets' corpora live in, from the working folder (``--data``'s default).
PRESET_DATA = Path("../shared/data")


@dataclass(kw_only=True)
class TrainingOptions:
    """Everything ``pysmt train`` is told: the fields with an option in their metadata are its command-line
    options (:mod:`pysmt.cli_options`), in its ``--help``'s order."""

    src_lang: str = field(default="en", metadata=option(help="Source language code."))
    tgt_lang: str = field(default="fr", metadata=option(help="Target language code."))
    #: Bitext prefixes: ``PREFIX.<src_lang>`` and ``PREFIX.<tgt_lang>`` (a ``--preset``'s are added to ``--corpus``).
    corpora: list[Path] = field(
        default_factory=list,
        metadata=option(
            "--corpus", convert=Path, multiple=True, help="Bitext prefix: PREFIX.SRC and PREFIX.TGT (repeatable)."
        ),
    )
    lm_texts: list[Path] = field(
        default_factory=list,
        metadata=option(
            "--lm-text",
            multiple=True,
            type=click.Path(dir_okay=False, path_type=Path),
            help="Extra raw target-language text for the LM (repeatable).",
        ),
    )
    out: Path = field(metadata=option(type=click.Path(file_okay=False, path_type=Path), help="System folder to write."))
    prepared: bool = field(
        default=False, metadata=option(is_flag=True, help="The corpus is already tokenized and cased as wanted.")
    )
    alignment: Path | None = field(
        default=None,
        metadata=option(
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            help="Use this symmetrized Pharaoh alignment of the cleaned corpus instead of running eflomal.",
        ),
    )
    symmetrization: str = field(default="grow-diag-final-and", metadata=option(type=click.Choice(list(HEURISTICS))))
    max_phrase_length: int = field(default=7, metadata=option(type=click.IntRange(1, 20)))
    lm_order: int = 5
    first_step: str = field(default=STEPS[0], metadata=option(help="Step name or number: " + ", ".join(STEPS)))
    last_step: str = field(default=STEPS[-1], metadata=option())
    force: bool = field(
        default=False,
        metadata=option(is_flag=True, help="Start afresh: redo every step, also in a folder that holds another job."),
    )
    processes: int = field(default=2, metadata=option(type=POSITIVE, help="Worker processes for the parallel steps."))
    #: Bytes the steps that grow with the corpus may use; it never changes the system.
    memory: int = field(
        default=parse_size(MEMORY_DEFAULT), metadata=memory_option("phrase scoring, lmplz and binarizing")
    )
    #: Where the steps' temporary files go; None: beside the files they make.
    temp_dir: Path | None = field(default=None, metadata=TEMP_DIR)
