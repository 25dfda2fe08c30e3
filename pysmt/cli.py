"""The ``pysmt`` command: ``decode``, ``filter``, ``binarize``, ``rescore``, ``serve``, ``train``, ``tune``,
``lm``, ``evaluate``, ``experiment``, and subcommands that plugins register.

A plugin adds a subcommand through the entry-point group ``pysmt.commands``
(``rnn = "rnn_feature.cli:rnn"``, a click command or group). ``tune`` and ``experiment`` are defined
beside what they run (``tuning/cli.py``, ``pysmt/experiment/cli.py``). Options that a dataclass
carries are made from its fields (:mod:`pysmt.cli_options`), and those several commands give alike are
declared once (:mod:`pysmt.shared_options`).
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from pysmt.cli_options import command_option, from_command, options_of
from pysmt.decoding.options import DecodeOptions
from pysmt.errors import PysmtError, missing_extra
from pysmt.experiment.cli import experiment
from pysmt.moses_arguments import MosesCommand
from pysmt.running.processes import Terminated, stop_on_sigterm
from pysmt.serving.options import ServeOptions
from pysmt.shared_options import (
    CLUSTER,
    TEMP_DIR,
    XML_INPUT,
    memory_option,
    one_of,
    only_one_place,
    only_with,
    search_setting_options,
    split_names,
    system_options,
    system_values,
)
from pysmt.training.options import PRESET_DATA, PRESETS, TrainingOptions
from tuning.cli import tune

if TYPE_CHECKING:
    from pysmt.decoding.mbr import MbrSettings

COMMANDS_GROUP = "pysmt.commands"


def silence_stdout() -> None:
    """Point stdout at /dev/null, so that Python's final flush of what is still buffered cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def flush_stdout() -> None:
    """Write out what stdout still buffers before an error ends the command; if stdout itself has failed (its
    disk is full, its reader gone), silence it, so that Python's final flush adds no second message."""
    try:
        sys.stdout.flush()
    except OSError:
        silence_stdout()


class PysmtGroup(click.Group):
    """Turns user errors into one-line messages and adds the plugins' subcommands.

    Exit statuses: 1 for an error (one line on stderr, no traceback), 2 for a bad option (click's),
    130 for Ctrl-C and 143 for SIGTERM (the shell's convention: 128 + the signal), 0 when the
    output's reader stops early. SIGTERM is handled as Ctrl-C is (:mod:`pysmt.running.processes`).
    Errors of the system that name their file (a permission, a vanished folder) are one line in the
    system's words; every write pysmt makes names its file itself (:mod:`pysmt.files.textio`), so an
    ``OSError`` that names none is a bug, and shown whole.
    """

    def invoke(self, ctx: click.Context) -> Any:
        stop_on_sigterm()
        try:
            return super().invoke(ctx)
        except PysmtError as err:
            flush_stdout()
            raise click.ClickException(str(err)) from None
        except BrokenPipeError:
            silence_stdout()  # output piped into `head`: stop quietly
            return None
        except Terminated:
            click.echo("\npysmt: terminated", err=True)
            raise click.exceptions.Exit(143) from None
        except KeyboardInterrupt:
            click.echo("\npysmt: interrupted", err=True)
            raise click.exceptions.Exit(130) from None
        except OSError as err:
            if err.filename is None:
                raise
            flush_stdout()
            raise click.ClickException(f"{err.filename}: {err.strerror or err}") from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | {ep.name for ep in entry_points(group=COMMANDS_GROUP)})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        command = super().get_command(ctx, name)
        if command is None:
            for ep in entry_points(group=COMMANDS_GROUP, name=name):
                return ep.load()
        return command


@click.group(cls=PysmtGroup)
@click.version_option(package_name="pysmt-mt")
def main() -> None:
    """Phrase-based statistical machine translation, compatible with Moses models."""


cluster_option = command_option("cluster", CLUSTER)


@main.command(cls=MosesCommand)
@system_options
@options_of(DecodeOptions, stop="prepared")
@search_setting_options
@options_of(DecodeOptions, start="prepared")
def decode(config_path: str, features: str | None, params: tuple[str, ...], **given: Any) -> None:
    """Translate text, one sentence per line, from stdin or --input to stdout.

    Systems trained by `pysmt train` take raw text and give raw text; other systems (moses.ini) take
    text prepared as their models were, and give tokens. N-best lists and alignments are always on
    model tokens, as in Moses. They are written as sentences are done, into a temporary file that
    replaces --nbest/--alignment when the run ends. With --report-segmentation or --print-alignment-info
    the translation is the model's tokens too (the marks count them); unknown words marked or dropped are
    detokenized with the rest. With --constraint (forced decoding) only translations equal to the constraint's
    line survive; a line none reaches is written empty, with a warning naming it on stderr. With --xml-input
    (Moses' modes; default: a moses.ini's [xml-input], else pass-through) markup in the input gives translations of
    spans and reordering walls and zones; a system that prepares its text prepares only the words between the tags.
    A line with a malformed tag is translated as text with a warning naming it, as in Moses (--xml-strict: an error).
    Moses' spellings of these options are read too (-f, -config, -input-file, -threads, -n-best-list FILE N
    [distinct], -stack, -search-algorithm 0/1, -v 0, ...: docs/tutorials/moses-users.md).
    """
    from pysmt.decoding.command import decode as decode_text

    only_one_place(given["threads"], given["cluster"])
    one_of(
        ("--mbr", given["mbr"]),
        ("--consensus-decoding", given["consensus_decoding"]),
        why="each chooses the translation from the n-best list its own way",
    )
    only_with("--mark-unknown", given["mark_unknown"], "unknown_word_prefix")
    only_with("--nbest", given["nbest_path"] is not None, "nbest_size", "distinct")
    told = from_command(DecodeOptions, given, system=system_values(config_path, features, params, given))
    decode_text(told, mbr_settings(told.mbr, told.mbr_size, told.mbr_scale, told.consensus_decoding))


def mbr_settings(mbr: bool, size: int | None, scale: float | None, consensus: bool) -> MbrSettings | None:
    """``decode``'s ``--mbr`` or ``--consensus-decoding`` with ``--mbr-size`` and ``--mbr-scale`` (Moses' defaults: 200,
    1), checked before anything loads (a bad value is a usage error, exit 2); None for the best model score's
    translation (MAP)."""
    from pysmt.decoding.mbr import MbrSettings

    if not (mbr or consensus):
        if size is not None or scale is not None:
            raise click.UsageError("--mbr-size and --mbr-scale apply to --mbr or --consensus-decoding: give one")
        return None
    default = MbrSettings()
    try:
        return MbrSettings(
            default.size if size is None else size, default.scale if scale is None else scale, consensus=consensus
        )
    except PysmtError as err:
        raise click.UsageError(str(err)) from None


@main.command("filter")
@system_options
@click.option(
    "-i",
    "--input",
    "input_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="The text that will be decoded, as `decode` will take it.",
)
@click.option(
    "-o",
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False),
    help="Folder for the filtered tables and their pysmt.toml (not the system's own folder).",
)
@click.option("--prepared", is_flag=True, help="The input is already tokenized and truecased (as `decode --prepared`).")
def filter_command(
    config_path: str, features: str | None, params: tuple[str, ...], input_path: str, out_dir: str, prepared: bool
) -> None:
    """Keep only the table entries an input can use (Moses' filter-model-given-input.pl).

    The input is prepared as `decode` prepares it (the system's [processing]), so the filtered
    system translates that input exactly as the full one does.
    """
    from pysmt.config_files import configure_system
    from pysmt.filtering import filter_system

    config = configure_system(config_path, split_names(features), params)
    out = filter_system(config, input_path, Path(out_dir), prepared=prepared)
    click.echo(f"pysmt filter: wrote {out}")


@main.command("binarize")
@system_options
@click.option(
    "-o",
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False),
    help="Folder for the binary tables and their pysmt.toml (not the system's own folder if that holds a pysmt.toml).",
)
@command_option("memory", memory_option("sorting each table"))
@command_option("temp_dir", TEMP_DIR)
def binarize_command(
    config_path: str, features: str | None, params: tuple[str, ...], out_dir: str, memory: int, temp_dir: Path | None
) -> None:
    """Write the system's phrase and reordering tables as memory-mapped binary tables.

    The binary tables load in milliseconds, their pages are shared by forked --threads workers,
    and they give the same entries and scores: the new pysmt.toml decodes exactly as the system.
    """
    from pysmt.binarize import binarize_system
    from pysmt.config_files import configure_system

    config = configure_system(config_path, split_names(features), params)
    out = binarize_system(config, Path(out_dir), memory, temp_dir)
    click.echo(f"pysmt binarize: wrote {out}")


@main.command()
@system_options
@click.option(
    "--nbest",
    "nbest_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="Moses-format n-best list to rescore (as `decode --nbest` writes it).",
)
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False), help="The rescored n-best list.")
@click.option(
    "--weights",
    "weights_path",
    type=click.Path(exists=True, dir_okay=False),
    help="Weights of the added features (Name= w ...); without, those each feature declares "
    "(default_weights(): the CSLM's 0.25, the sentence model's 0.1 0.15), else 0.",
)
@click.option(
    "--src",
    "source_path",
    type=click.Path(exists=True, dir_okay=False),
    help="The input the list was decoded from, as `decode` was given it (a line per sentence id): features of "
    "complete translations (sentence models) read it, prepared as `decode` prepares it.",
)
@click.option(
    "--prepared",
    is_flag=True,
    help="--src is already tokenized and truecased (as `decode --prepared` took it): [processing] is skipped.",
)
@command_option("xml_input", XML_INPUT)
@cluster_option
def rescore(
    config_path: str,
    features: str | None,
    params: tuple[str, ...],
    nbest_path: str,
    out_path: str,
    weights_path: str | None,
    source_path: str | None,
    prepared: bool,
    xml_input: str | None,
    cluster: str | None,
) -> None:
    """Add stateful features' scores (e.g. --features cslm), or features of complete translations' (a sentence
    model, with --src), to an n-best list, re-sorted by the new totals (the rescoring totals, as `decode`'s
    rescoring pass makes them)."""
    from pysmt.decoder import SystemRecipe
    from pysmt.features.registry import system_inputs
    from pysmt.files.outputs import check_outputs
    from pysmt.rescoring import SourceText, added_translation_features
    from pysmt.rescoring import rescore as run_rescoring

    added = split_names(features)
    if not added:
        raise click.UsageError("give the features to add with --features, e.g. --features cslm")
    only_with("--src", source_path is not None, "prepared", "xml_input")
    inputs = {"--nbest": nbest_path, "--config": config_path, "--weights": weights_path, "--src": source_path}
    check_outputs({"--out": out_path}, inputs)
    recipe = SystemRecipe(config_path, tuple(added), params, weights_path)
    config = recipe.configure()
    needing = added_translation_features(config, added)
    if needing and source_path is None:
        raise click.UsageError(
            f"{', '.join(needing)} scores complete translations of the input: give the input the list was decoded "
            "from with --src FILE"
        )
    if source_path is not None and not needing:
        raise click.UsageError("--src is read by features of complete translations (sentence models): none is added")
    source = SourceText(Path(source_path), prepared, xml_input) if source_path else None  # type: ignore[arg-type]
    check_outputs({"--out": out_path}, system_inputs(config))
    if cluster:
        from pysmt.decoding.cluster import Cluster
        from pysmt.rescoring import RescoringActor

        with Cluster(cluster, recipe, worker=RescoringActor, args=(added,)) as workers:
            n = run_rescoring(config, added, Path(nbest_path), Path(out_path), workers, source)
            workers.log(f"done: {workers.where()}")
    else:
        n = run_rescoring(config, added, Path(nbest_path), Path(out_path), source=source)
    click.echo(f"pysmt rescore: {n:,} entries rescored into {out_path}", err=True)  # --out may be stdout


@main.command()
@system_options
@options_of(ServeOptions)
@search_setting_options
def serve(config_path: str, features: str | None, params: tuple[str, ...], **given: Any) -> None:
    """Serve a system over HTTP: Moses' XML-RPC protocol (/RPC2) and a JSON interface (/translate).

    Each of --workers processes loads the system once (binarize its tables to share their pages);
    requests from all clients are batched onto them. Listens on 127.0.0.1 unless --host says
    otherwise. SIGTERM or Ctrl-C: answers what is in flight, then exits 0. Needs aiohttp and defusedxml
    (pysmt-mt's extra `serve`).
    """
    try:
        from pysmt.serving.server import serve as run_server
    except ImportError as err:
        raise missing_extra(f"pysmt serve ({err.name} is not installed)", "serve") from None
    run_server(from_command(ServeOptions, given, system=system_values(config_path, features, params, given)))


@main.command()
@options_of(TrainingOptions, stop="out")
@click.option("--preset", type=click.Choice(sorted(PRESETS)), help="A named corpus recipe (under --data).")
@click.option(
    "--data",
    "data_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=PRESET_DATA,
    show_default=True,
    help="Data folder the preset's corpora live in.",
)
@options_of(TrainingOptions, start="out")
def train(preset: str | None, data_dir: Path, **given: Any) -> None:
    """Train a phrase-based system from a raw bitext (the Moses baseline recipe)."""
    options = from_command(TrainingOptions, given)
    options.corpora += [data_dir / prefix for prefix in PRESETS.get(preset or "", [])]
    from pysmt.training.pipeline import Pipeline  # (its steps' modules load only for this command)

    Pipeline(options).run()
    config = options.out / "pysmt.toml"
    if config.is_file():
        click.echo(f"pysmt train: system in {options.out} (decode with: pysmt decode -c {config})")


@main.command()
@click.option(
    "--text",
    "texts",
    multiple=True,
    required=True,
    type=click.Path(dir_okay=False),
    help="Prepared (tokenized, truecased) text, one sentence a line (repeatable).",
)
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False), help="KenLM binary to write.")
@click.option(
    "--order",
    default=5,
    show_default=True,
    type=click.IntRange(2, 6),
    help="N-gram order: 2 to 6 (KenLM builds no unigram binary; its Python module reads up to 6).",
)
def lm(texts: tuple[str, ...], out_path: str, order: int) -> None:
    """Estimate a modified Kneser-Ney n-gram LM with KenLM's lmplz and binarize it."""
    from pysmt.training.language_model import build_language_model

    build_language_model([Path(t) for t in texts], Path(out_path), order)
    click.echo(f"pysmt lm: wrote {out_path}")


@main.command()
@click.option(
    "-r",
    "--ref",
    "references",
    required=True,
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="Reference, raw text (repeatable for several references).",
)
@click.argument("hypotheses", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
def evaluate(references: tuple[str, ...], hypotheses: tuple[str, ...]) -> None:
    """sacrebleu's BLEU and chrF of each HYPOTHESES file; with several, paired bootstrap tests against the first.

    Raw (detokenized) text, as `decode` writes it, against raw references: the figures and
    signatures are exactly sacrebleu's.
    """
    from pysmt.evaluate import paired_bootstrap, read_text, score
    from pysmt.files.outputs import check_outputs

    check_outputs({}, {"--ref": references, "HYPOTHESES": hypotheses}, writes_stdout=True)
    refs = [read_text(Path(r), "--ref") for r in references]
    outputs = {h: read_text(Path(h), "output") for h in hypotheses}
    scores = {h: score(lines, refs, h) for h, lines in outputs.items()}
    p_values, paired = paired_bootstrap(outputs, refs) if len(outputs) > 1 else ({}, {})
    for h, s in scores.items():
        test = f"\tp(BLEU) {p_values[h]['bleu']:.4f}\tp(chrF) {p_values[h]['chrf']:.4f}" if h in p_values else ""
        click.echo(f"{h}\tBLEU {s.bleu:.2f}\tchrF {s.chrf:.2f}{test}")
    first = next(iter(scores.values()))
    click.echo(f"BLEU: {first.bleu_signature}\nchrF: {first.chrf_signature}")
    if paired:
        click.echo(f"paired bootstrap against {hypotheses[0]}: {paired['bleu']}")


main.add_command(tune)
main.add_command(experiment)

if __name__ == "__main__":
    main()
