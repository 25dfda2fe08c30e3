"""``pysmt rnn``: train the encoder-decoder on a phrase table, score tables with it, analyse it as the paper does."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from pysmt.plugin.commands import from_command, options_of, threads_option, use_training_threads
from pysmt.plugin.files import require_file
from pysmt.plugin.neural import TrainingLimits
from rnn_feature.hyperparameters import PRESETS, Hyperparameters
from rnn_feature.sample_sizes import SampleSizes

if TYPE_CHECKING:
    from rnn_feature.pairs_for import PairsFor


@click.group()
def rnn() -> None:
    """The RNN Encoder-Decoder phrase model (Cho et al. 2014)."""


COUNT = click.IntRange(min=1)
SEED = click.IntRange(0, 2**32 - 1)
DEVICE_HELP = "auto (CUDA when there is a GPU), cpu, cuda or cuda:N."


def check_device(device: str) -> None:
    """A clear error for an unknown --device, before anything is loaded."""
    from rnn_feature.store import resolve_device

    resolve_device(device)


def pairs_for_options(verb: str) -> Callable[[Callable], Callable]:
    """``--pairs-for FILE`` (repeatable), ``-c`` and ``--prepared``: the pairs the decoder can use for source files."""

    def decorate(function: Callable) -> Callable:
        for option in reversed(
            [
                click.option(
                    "--pairs-for",
                    "pairs_for",
                    multiple=True,
                    type=click.Path(dir_okay=False),
                    help=f"{verb} the pairs the decoder can use for this source file, as `decode` takes it (what "
                    "`pysmt filter` keeps for it; repeatable: the pairs of all the files). Only its words are read.",
                ),
                click.option(
                    "-c",
                    "--config",
                    "config_path",
                    type=click.Path(dir_okay=False),
                    help="With --pairs-for: the system whose decoder reads the files (its [processing] and maximum "
                    "phrase length); default: the pysmt.toml beside --phrase-table.",
                ),
                click.option(
                    "--prepared", is_flag=True, help="The --pairs-for files are already tokenized and truecased."
                ),
            ]
        ):
            function = option(function)
        return function

    return decorate


def pairs_for_selection(
    pairs_for: tuple[str, ...], config_path: str | None, prepared: bool, table: str
) -> PairsFor | None:
    """The checked --pairs-for selection (a :class:`rnn_feature.pairs_for.PairsFor`), or None without files."""
    from pysmt.plugin import PysmtError
    from rnn_feature.pairs_for import PairsFor

    if not pairs_for and (config_path or prepared):
        raise PysmtError(f"{'-c' if config_path else '--prepared'} goes with --pairs-for: give the source files")
    return PairsFor.of(pairs_for, config_path, prepared, table=table) if pairs_for else None


@rnn.command()
@click.option(
    "--phrase-table",
    "table",
    required=True,
    type=click.Path(dir_okay=False),
    help="Moses phrase table (text or gzip) whose unique pairs are the training data.",
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False),
    help="Model directory (rerun the same command to resume).",
)
@pairs_for_options("Train only on")
@click.option("--preset", default="default", show_default=True, type=click.Choice(sorted(PRESETS)))
@click.option("--device", default="auto", show_default=True, help=DEVICE_HELP)
@options_of(TrainingLimits)
@click.option(
    "--seed",
    type=SEED,
    help=f"Seed of initialization, validation split and minibatches (preset's: {Hyperparameters.seed}).",
)
@click.option("--force", is_flag=True, help="Start afresh: discard the model folder's earlier training.")
@threads_option
def train(
    table: str,
    out_dir: str,
    pairs_for: tuple[str, ...],
    config_path: str | None,
    prepared: bool,
    preset: str,
    device: str,
    seed: int | None,
    force: bool,
    threads: int | None,
    **given: Any,
) -> None:
    """Train on the unique phrase pairs of a phrase table (Adadelta, minibatches of 64), or with
    --pairs-for on those the decoder can use for these source files.

    The folder records the job (job.json: preset, seed, the table's size and time, the --pairs-for
    files). Rerunning the same command resumes it; another table, preset, seed or other files is an
    error unless --force. The time and update limits, --valid-every, --patience and --device may
    change between runs.
    """
    from pysmt.plugin.files import check_outputs
    from rnn_feature.hyperparameters import preset as make_preset
    from rnn_feature.store import resolve_device
    from rnn_feature.training import train as run_training

    use_training_threads(threads)
    torch_device = resolve_device(device)
    selection = pairs_for_selection(pairs_for, config_path, prepared, table)
    check_outputs(
        {}, {"--phrase-table": table, **(selection.job_inputs() if selection else {})}, folders={"--out": out_dir}
    )
    hp = make_preset(preset) if seed is None else make_preset(preset, seed=seed)
    limits = from_command(TrainingLimits, given, checkpoint_every=given["valid_every"])
    best = run_training(Path(table), Path(out_dir), hp, torch_device, limits, force=force, pairs_for=selection)
    click.echo(f"pysmt rnn train: best validation perplexity {best:.2f}; model in {out_dir}")


@rnn.command()
@click.option("--model", "model_dir", required=True, type=click.Path(file_okay=False), help="Model directory.")
@click.option(
    "--phrase-table",
    "table",
    required=True,
    type=click.Path(),
    help="Table to score: a text table (gzip or not), or a binary table folder (pysmt binarize), in "
    "which the scores are stored for the decoder's rnn feature.",
)
@click.option(
    "--out",
    "out_path",
    type=click.Path(dir_okay=False),
    help="For a text table: the scored table (gzip if it ends in .gz), each line's scores with "
    "p(target | source) appended.",
)
@pairs_for_options("With a binary table: score only")
@click.option("--device", default="auto", show_default=True, help=DEVICE_HELP)
@click.option("--batch-size", default=512, show_default=True, type=COUNT, help="Pairs scored at once.")
@threads_option
def score(
    model_dir: str,
    table: str,
    out_path: str | None,
    pairs_for: tuple[str, ...],
    config_path: str | None,
    prepared: bool,
    device: str,
    batch_size: int,
    threads: int | None,
) -> None:
    """Score every pair of a phrase table with the RNN: stored in a binary table, for `pysmt decode
    --features rnn` to read instead of running the network (a stopped run resumes), or appended to a
    text table's lines (the paper's way: a fifth score). With --pairs-for, a binary table's pairs the
    decoder can use for those files only (the others stay unscored: the decoder asks the network)."""
    from pysmt.plugin import PysmtError
    from pysmt.plugin.files import check_outputs
    from rnn_feature.scoring import score_table, store_table_scores
    from rnn_feature.store import load_model, stored_by

    use_training_threads(threads)
    check_device(device)
    binary = require_file(table, "--phrase-table", folder_ok=True).is_dir()
    if binary and out_path:
        raise PysmtError(f"--out: the scores of binary table {table} are stored in its folder; give no --out")
    if not binary and not out_path:
        raise PysmtError(f"--out is needed: where to write {table} with its scores appended")
    if not binary and pairs_for:
        raise PysmtError(f"--pairs-for: only for a binary table (a text table's lines all get a score: filter {table})")
    selection = pairs_for_selection(pairs_for, config_path, prepared, table)
    if out_path:
        check_outputs({"--out": out_path}, {"--phrase-table": table, "--model": model_dir})
    model, source, target = load_model(Path(model_dir), device)
    if binary:
        made_by, only = stored_by(Path(model_dir)), None
        if selection is not None:
            only = selection.source_phrases()
            made_by["pairs_for"] = hashlib.sha256("\n".join(sorted(only)).encode()).hexdigest()
        stored = store_table_scores(model, source, target, Path(table), made_by, batch_size, only)
        which = f"the pairs for {selection.names}" if selection else "all pairs"
        click.echo(f"pysmt rnn score: {table}: the scores of {which} stored in {stored}")
    else:
        n = score_table(model, source, target, Path(table), Path(str(out_path)), batch_size)
        click.echo(f"pysmt rnn score: {n:,} pairs scored into {out_path}")


# -- analyses (the paper's Tables 2-3 and Figures 3-5) -----------------------------------------


def analysis_command(name: str, help_text: str, selection: bool = False) -> Callable[[Callable], click.Command]:
    """A ``pysmt rnn`` analysis subcommand with the options every analysis shares."""

    def decorate(function: Callable) -> click.Command:
        options: list[Callable[[Callable], Callable]] = [
            click.option(
                "--model", "model_dir", required=True, type=click.Path(file_okay=False), help="Model directory."
            ),
            click.option(
                "--phrase-table",
                "table",
                required=True,
                type=click.Path(dir_okay=False),
                help="The phrase table the analysis draws from (text or gzip).",
            ),
            click.option(
                "--out",
                "out_dir",
                required=True,
                type=click.Path(file_okay=False),
                help=f"Folder for {name}.md (and its figures).",
            ),
            click.option(
                "--tm-column",
                default=2,
                show_default=True,
                type=click.IntRange(min=0),
                help="Score column holding the translation model's p(e|f), counted from 0 "
                "(2 in a Moses table: p(f|e) lex(f|e) p(e|f) lex(e|f)).",
            ),
            click.option("--device", default="auto", show_default=True, help=DEVICE_HELP),
            click.option("--seed", default=0, show_default=True, type=SEED, help="Seed of every random choice."),
            threads_option,
        ]
        if selection:
            options += [
                click.option(
                    "--source",
                    "sources",
                    multiple=True,
                    help="Analyse this source phrase (repeatable) instead of random ones.",
                ),
                options_of(SampleSizes),
            ]
        for option in reversed(options):
            function = option(function)
        return rnn.command(name, help=help_text)(function)

    return decorate


def load_for_analysis(
    model_dir: str,
    table: str,
    out_dir: str,
    device: str,  # noqa: ANN201 - (model, source, target)
    threads: int | None,
):
    """Check the device, the table and the output folder, then load the model: mistakes cost nothing."""
    from pysmt.plugin.files import check_outputs
    from rnn_feature.store import load_model

    use_training_threads(threads)
    check_device(device)
    require_file(table, "--phrase-table")
    check_outputs({}, {"--phrase-table": table, "--model": model_dir}, folders={"--out": out_dir})
    loaded = load_model(Path(model_dir), device)
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    return loaded


def selected_sources(table: str, sources: tuple[str, ...], sizes: dict[str, Any], tm_column: int, seed: int) -> dict:
    """Source phrases to analyse, by group title: the named ones, or seeded random frequent and rare ones
    (``sizes``: the command's :class:`SampleSizes` options)."""
    from rnn_feature.table_sample import named_sources, sample_table

    if sources:
        return {"Chosen source phrases": named_sources(Path(table), list(sources), tm_column)}
    picked = from_command(SampleSizes, sizes)
    sample = sample_table(Path(table), picked, tm_column, seed)
    return {
        f"Frequent source phrases (count >= {picked.frequent_min:g}, {picked.min_words}+ words)": sample.frequent,
        f"Rare source phrases (count <= {picked.rare_max:g}, {picked.min_words}+ words)": sample.rare,
    }


def write_report(out_dir: str, name: str, title: str, body: str) -> Path:
    from pysmt.plugin.files import atomic_writer

    path = Path(out_dir) / f"{name}.md"
    with atomic_writer(path) as out:
        out.write(f"# {title}\n\n{body}\n")
    click.echo(f"pysmt rnn: wrote {path}")
    return path


@analysis_command("top-phrases", "Table 2: top target phrases by the translation model and by the RNN.", selection=True)
@click.option("--count", default=3, show_default=True, type=COUNT, help="Targets shown per source phrase and scorer.")
def top_phrases(
    model_dir: str,
    table: str,
    out_dir: str,
    tm_column: int,
    device: str,
    seed: int,
    sources: tuple[str, ...],
    count: int,
    threads: int | None,
    **sizes: Any,
) -> None:
    from rnn_feature.analysis import top_phrases as analyse

    model, source, target = load_for_analysis(model_dir, table, out_dir, device, threads)
    groups = selected_sources(table, sources, sizes, tm_column, seed)
    write_report(
        out_dir,
        "top-phrases",
        "Translation model vs RNN Encoder-Decoder (Table 2)",
        analyse(model, source, target, groups, count),
    )


@analysis_command("samples", "Table 3: target phrases sampled from the RNN, best distinct ones first.", selection=True)
@click.option("--samples", "count", default=50, show_default=True, type=COUNT, help="Samples drawn per source phrase.")
@click.option("--top", default=5, show_default=True, type=COUNT, help="Best distinct samples shown.")
def samples_command(
    model_dir: str,
    table: str,
    out_dir: str,
    tm_column: int,
    device: str,
    seed: int,
    sources: tuple[str, ...],
    count: int,
    top: int,
    threads: int | None,
    **sizes: Any,
) -> None:
    from rnn_feature.analysis import samples

    model, source, target = load_for_analysis(model_dir, table, out_dir, device, threads)
    groups = selected_sources(table, sources, sizes, tm_column, seed)
    write_report(
        out_dir,
        "samples",
        "Samples from the RNN Encoder-Decoder (Table 3)",
        samples(model, source, target, groups, count, top, seed),
    )


@analysis_command("scatter", "Fig. 3: RNN vs translation-model log-probabilities (scatter.png).")
@click.option(
    "--pairs", default=20_000, show_default=True, type=COUNT, help="Phrase pairs drawn uniformly from the table."
)
def scatter_command(
    model_dir: str, table: str, out_dir: str, tm_column: int, device: str, seed: int, pairs: int, threads: int | None
) -> None:
    from pysmt.plugin import PysmtError
    from rnn_feature.analysis import scatter
    from rnn_feature.table_sample import sample_table

    model, source, target = load_for_analysis(model_dir, table, out_dir, device, threads)
    sample = sample_table(Path(table), SampleSizes(pairs=pairs), tm_column, seed)
    if not sample.pairs:
        raise PysmtError(f"--phrase-table {table}: no phrase pairs to plot (the table is empty)")
    write_report(
        out_dir,
        "scatter",
        "RNN vs translation-model scores (Fig. 3)",
        scatter(model, source, target, sample.pairs, Path(out_dir) / "scatter.png"),
    )


@analysis_command("maps", "Fig. 4-5: t-SNE maps of word embeddings and phrase representations (PNG).")
@click.option(
    "--words",
    default=1000,
    show_default=True,
    type=COUNT,
    help="Most frequent source words mapped (t-SNE needs at least 3).",
)
@click.option(
    "--phrases",
    default=2000,
    show_default=True,
    type=click.IntRange(min=0),
    help="Random source phrases of 4+ words mapped (0: no phrase map; fewer than 5 found: none).",
)
def maps_command(
    model_dir: str,
    table: str,
    out_dir: str,
    tm_column: int,
    device: str,
    seed: int,
    words: int,
    phrases: int,
    threads: int | None,
) -> None:
    from rnn_feature.analysis import maps
    from rnn_feature.table_sample import sample_table

    model, source, _ = load_for_analysis(model_dir, table, out_dir, device, threads)
    sample = sample_table(Path(table), SampleSizes(long_phrases=phrases), tm_column, seed)
    write_report(
        out_dir,
        "maps",
        "Word and phrase representations (Fig. 4 and 5)",
        maps(model, source, sample.long_phrases, Path(out_dir), words, seed=seed),
    )
