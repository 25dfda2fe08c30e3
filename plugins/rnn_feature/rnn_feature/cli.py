"""``pysmt rnn``: train the encoder-decoder on a phrase table, score tables with it."""

from __future__ import annotations

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
    from rnn_feature.training import TrainingLimits, train as run_training

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
