"""``pysmt rnn``: train the encoder-decoder on a phrase table, score tables with it, analyse it as the paper does."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from rnn_feature.hyperparameters import PRESETS


@click.group()
def rnn() -> None:
    """The RNN Encoder-Decoder phrase model (Cho et al. 2014)."""


@rnn.command()
@click.option("--phrase-table", "table", required=True, type=click.Path(dir_okay=False),
              help="Moses phrase table (text or gzip) whose unique pairs are the training data.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Model directory (rerun the same command to resume).")
@click.option("--preset", default="default", show_default=True, type=click.Choice(sorted(PRESETS)))
@click.option("--device", default="auto", show_default=True, help="auto, cpu or cuda.")
@click.option("--max-time", type=float, help="Stop after this many minutes (a checkpoint is kept).")
@click.option("--max-updates", type=int, help="Stop after this many updates in total.")
@click.option("--valid-every", default=2000, show_default=True, help="Updates between validations.")
@click.option("--patience", default=10, show_default=True,
              help="Stop when this many validations in a row do not improve perplexity.")
@click.option("--seed", type=int, help="Seed of initialization, validation split and minibatches (preset's: 1234).")
def train(table: str, out_dir: str, preset: str, device: str, max_time: float | None, max_updates: int | None,
          valid_every: int, patience: int, seed: int | None) -> None:
    """Train on the unique phrase pairs of a phrase table (Adadelta, minibatches of 64)."""
    from pysmt.errors import PysmtError
    from rnn_feature.hyperparameters import preset as make_preset
    from rnn_feature.store import resolve_device
    from rnn_feature.training import TrainingLimits
    from rnn_feature.training import train as run_training

    if not Path(table).is_file():
        raise PysmtError(f"{table}: no such phrase table")
    hp = make_preset(preset) if seed is None else make_preset(preset, seed=seed)
    limits = TrainingLimits(max_updates, max_time * 60 if max_time else None, valid_every, valid_every, patience)
    best = run_training(Path(table), Path(out_dir), hp, resolve_device(device), limits)
    click.echo(f"pysmt rnn train: best validation perplexity {best:.2f}; model in {out_dir}")


@rnn.command()
@click.option("--model", "model_dir", required=True, type=click.Path(file_okay=False), help="Model directory.")
@click.option("--phrase-table", "table", required=True, type=click.Path(dir_okay=False), help="Table to score.")
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False),
              help="Scored table (gzip if it ends in .gz): each line's scores get p(target | source) appended.")
@click.option("--device", default="auto", show_default=True, help="auto, cpu or cuda.")
@click.option("--batch-size", default=512, show_default=True)
def score(model_dir: str, table: str, out_path: str, device: str, batch_size: int) -> None:
    """Append the RNN's p(target | source) to every line of a phrase table (the paper's way)."""
    from rnn_feature.scoring import score_table
    from rnn_feature.store import load_model

    model, source, target = load_model(Path(model_dir), device)
    n = score_table(model, source, target, Path(table), Path(out_path), batch_size)
    click.echo(f"pysmt rnn score: {n:,} pairs scored into {out_path}")


# -- analyses (the paper's Tables 2-3 and Figures 3-5) -----------------------------------------

def analysis_command(name: str, help_text: str, selection: bool = False) -> Callable[[Callable], click.Command]:
    """A ``pysmt rnn`` analysis subcommand with the options every analysis shares."""

    def decorate(function: Callable) -> click.Command:
        options = [
            click.option("--model", "model_dir", required=True, type=click.Path(file_okay=False), help="Model directory."),
            click.option("--phrase-table", "table", required=True, type=click.Path(dir_okay=False),
                         help="The phrase table the analysis draws from (text or gzip)."),
            click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
                         help=f"Folder for {name}.md (and its figures)."),
            click.option("--tm-column", default=2, show_default=True,
                         help="Score column holding the translation model's p(e|f) (2 in a Moses table)."),
            click.option("--device", default="auto", show_default=True, help="auto, cpu or cuda."),
            click.option("--seed", default=0, show_default=True, help="Seed of every random choice."),
        ]
        if selection:
            options += [
                click.option("--source", "sources", multiple=True,
                             help="Analyse this source phrase (repeatable) instead of random ones."),
                click.option("--frequent", default=5, show_default=True, help="Random frequent source phrases."),
                click.option("--rare", default=5, show_default=True, help="Random rare source phrases."),
                click.option("--min-words", default=4, show_default=True, help="Shortest source phrase considered."),
                click.option("--frequent-min", default=20.0, show_default=True,
                             help="count(f) from which a source phrase is frequent."),
                click.option("--rare-max", default=1.0, show_default=True,
                             help="count(f) up to which a source phrase is rare."),
            ]
        for option in reversed(options):
            function = option(function)
        return rnn.command(name, help=help_text)(function)

    return decorate


def load_for_analysis(model_dir: str, out_dir: str, device: str):  # noqa: ANN201 - (model, source, target)
    from rnn_feature.store import load_model

    Path(out_dir).mkdir(parents=True, exist_ok=True)
    return load_model(Path(model_dir), device)


def selected_sources(table: str, sources: tuple[str, ...], frequent: int, rare: int, min_words: int,
                     frequent_min: float, rare_max: float, tm_column: int, seed: int) -> dict:
    """Source phrases to analyse, by group title: the named ones, or seeded random frequent and rare ones."""
    from rnn_feature.table_sample import SampleSizes, named_sources, sample_table

    if sources:
        return {"Chosen source phrases": named_sources(Path(table), list(sources), tm_column)}
    sizes = SampleSizes(frequent=frequent, rare=rare, min_words=min_words, frequent_min=frequent_min,
                        rare_max=rare_max)
    sample = sample_table(Path(table), sizes, tm_column, seed)
    return {f"Frequent source phrases (count >= {frequent_min:g}, {min_words}+ words)": sample.frequent,
            f"Rare source phrases (count <= {rare_max:g}, {min_words}+ words)": sample.rare}


def write_report(out_dir: str, name: str, title: str, body: str) -> Path:
    from pysmt.textio import atomic_writer

    path = Path(out_dir) / f"{name}.md"
    with atomic_writer(path) as out:
        out.write(f"# {title}\n\n{body}\n")
    click.echo(f"pysmt rnn: wrote {path}")
    return path


@analysis_command("top-phrases", "Table 2: top target phrases by the translation model and by the RNN.", selection=True)
@click.option("--count", default=3, show_default=True, help="Targets shown per source phrase and scorer.")
def top_phrases(model_dir: str, table: str, out_dir: str, tm_column: int, device: str, seed: int,
                sources: tuple[str, ...], frequent: int, rare: int, min_words: int, frequent_min: float,
                rare_max: float, count: int) -> None:
    from rnn_feature.analysis import top_phrases as analyse

    model, source, target = load_for_analysis(model_dir, out_dir, device)
    groups = selected_sources(table, sources, frequent, rare, min_words, frequent_min, rare_max, tm_column, seed)
    write_report(out_dir, "top-phrases", "Translation model vs RNN Encoder-Decoder (Table 2)",
                 analyse(model, source, target, groups, count))


@analysis_command("samples", "Table 3: target phrases sampled from the RNN, best distinct ones first.", selection=True)
@click.option("--samples", "count", default=50, show_default=True, help="Samples drawn per source phrase.")
@click.option("--top", default=5, show_default=True, help="Best distinct samples shown.")
def samples_command(model_dir: str, table: str, out_dir: str, tm_column: int, device: str, seed: int,
                    sources: tuple[str, ...], frequent: int, rare: int, min_words: int, frequent_min: float,
                    rare_max: float, count: int, top: int) -> None:
    from rnn_feature.analysis import samples

    model, source, target = load_for_analysis(model_dir, out_dir, device)
    groups = selected_sources(table, sources, frequent, rare, min_words, frequent_min, rare_max, tm_column, seed)
    write_report(out_dir, "samples", "Samples from the RNN Encoder-Decoder (Table 3)",
                 samples(model, source, target, groups, count, top, seed))


@analysis_command("scatter", "Fig. 3: RNN vs translation-model log-probabilities (scatter.png).")
@click.option("--pairs", default=20_000, show_default=True, help="Phrase pairs drawn uniformly from the table.")
def scatter_command(model_dir: str, table: str, out_dir: str, tm_column: int, device: str, seed: int,
                    pairs: int) -> None:
    from rnn_feature.analysis import scatter
    from rnn_feature.table_sample import SampleSizes, sample_table

    model, source, target = load_for_analysis(model_dir, out_dir, device)
    sample = sample_table(Path(table), SampleSizes(pairs=pairs), tm_column, seed)
    write_report(out_dir, "scatter", "RNN vs translation-model scores (Fig. 3)",
                 scatter(model, source, target, sample.pairs, Path(out_dir) / "scatter.png"))


@analysis_command("maps", "Fig. 4-5: t-SNE maps of word embeddings and phrase representations (PNG).")
@click.option("--words", default=1000, show_default=True, help="Most frequent source words mapped.")
@click.option("--phrases", default=2000, show_default=True, help="Random source phrases of 4+ words mapped.")
def maps_command(model_dir: str, table: str, out_dir: str, tm_column: int, device: str, seed: int, words: int,
                 phrases: int) -> None:
    from rnn_feature.analysis import maps
    from rnn_feature.table_sample import SampleSizes, sample_table

    model, source, _ = load_for_analysis(model_dir, out_dir, device)
    sample = sample_table(Path(table), SampleSizes(long_phrases=phrases), tm_column, seed)
    write_report(out_dir, "maps", "Word and phrase representations (Fig. 4 and 5)",
                 maps(model, source, sample.long_phrases, Path(out_dir), words, seed=seed))
