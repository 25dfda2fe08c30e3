"""``pysmt cslm``: train the continuous-space language model on target-language text, measure its perplexity."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from pysmt.plugin.commands import from_command, options_of, threads_option, use_training_threads
from pysmt.plugin.files import require_file
from pysmt.plugin.neural import TrainingLimits
from pysmt_cslm.hyperparameters import PRESETS, Hyperparameters


@click.group()
def cslm() -> None:
    """The continuous-space 7-gram language model (Schwenk 2007; Cho et al. 2014)."""


SEED = click.IntRange(0, 2**32 - 1)
DEVICE_HELP = "auto (CUDA when there is a GPU), cpu, cuda or cuda:N."


@cslm.command()
@click.option(
    "--text",
    required=True,
    type=click.Path(dir_okay=False),
    help="Tokenized target-language text, one sentence a line (plain or gzip).",
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False),
    help="Model directory (rerun the same command to resume).",
)
@click.option(
    "--valid",
    type=click.Path(dir_okay=False),
    help="Validation text (default: a seeded 1%% of --text's lines, at most 10,000, held out).",
)
@click.option(
    "--shortlist",
    type=click.Path(dir_okay=False),
    help="Use this shortlist file ([EOS], [UNK], then words; e.g. SYSTEM/rnn/target.vocab) instead of "
    "--text's most frequent words; it must have the preset's size.",
)
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
    text: str,
    out_dir: str,
    valid: str | None,
    shortlist: str | None,
    preset: str,
    device: str,
    seed: int | None,
    force: bool,
    threads: int | None,
    **given: Any,
) -> None:
    """Train on the n-grams of a target-language text (Adam, minibatches of 128 n-grams).

    The folder records the job (job.json: the hyperparameters, seed included, and the size and time
    of --text, --valid and --shortlist). Rerunning the same command resumes it; another text,
    preset or seed is an error unless --force. The time and update limits, --valid-every,
    --patience and --device may change between runs.
    """
    from pysmt.plugin.files import check_outputs
    from pysmt_cslm.hyperparameters import preset as make_preset
    from pysmt_cslm.store import resolve_device
    from pysmt_cslm.training import train as run_training

    use_training_threads(threads)
    torch_device = resolve_device(device)
    check_outputs({}, {"--text": text, "--valid": valid, "--shortlist": shortlist}, folders={"--out": out_dir})
    hp = make_preset(preset) if seed is None else make_preset(preset, seed=seed)
    limits = from_command(TrainingLimits, given, checkpoint_every=given["valid_every"])
    best = run_training(
        Path(text),
        Path(out_dir),
        hp,
        torch_device,
        limits,
        valid=Path(valid) if valid else None,
        shortlist=Path(shortlist) if shortlist else None,
        force=force,
    )
    click.echo(f"pysmt cslm train: best validation perplexity {best:.2f}; model in {out_dir}")


@cslm.command()
@click.option("--model", "model_dir", required=True, type=click.Path(file_okay=False), help="Model directory.")
@click.option(
    "--text",
    required=True,
    type=click.Path(dir_okay=False),
    help="Tokenized text, one sentence a line (plain or gzip).",
)
@click.option(
    "--exact/--self-normalized",
    default=True,
    show_default=True,
    help='Full softmax, or the logit alone (what the feature\'s normalization = "self" adds up).',
)
@click.option("--device", default="auto", show_default=True, help=DEVICE_HELP)
@threads_option
def perplexity(model_dir: str, text: str, exact: bool, device: str, threads: int | None) -> None:
    """Perplexity per token (</s> included) of a text, and the mean and spread of log Z.

    Words outside the shortlist are scored P([UNK] | context) x p(w | outside), the back-off
    unigram of the training text; the figure without them (the paper's convention, where WP counts
    them) is printed too.
    """
    import math

    import numpy as np

    from pysmt.plugin import PysmtError
    from pysmt_cslm.data import encode_text
    from pysmt_cslm.scoring import Scorer, score_text
    from pysmt_cslm.store import load_model, resolve_device

    use_training_threads(threads)
    torch_device = resolve_device(device)
    require_file(text, "--text")
    loaded = load_model(Path(model_dir), torch_device)
    encoded = encode_text(Path(text), loaded.shortlist, loaded.model.hp.context, backoff=loaded.backoff)
    if not len(encoded):
        raise PysmtError(f"--text {text}: no lines")
    scores, log_z = score_text(Scorer(loaded.model), encoded, "exact" if exact else "self", with_log_z=True)
    assert log_z is not None and encoded.extra is not None
    tokens = len(encoded)
    inside = encoded.ids != 1
    mode = "exact softmax" if exact else "self-normalized"
    click.echo(
        f"perplexity {math.exp(-scores.sum() / tokens):.3f} ({mode}; {tokens:,} tokens incl. </s>, "
        f"{tokens - int(inside.sum()):,} outside the shortlist, scored through the back-off unigram)"
    )
    click.echo(
        f"perplexity over the shortlist's tokens only {math.exp(-scores[inside].sum() / inside.sum()):.3f} "
        f"({int(inside.sum()):,} tokens; the paper's convention, WP counting the others)"
    )
    click.echo(f"log Z: mean {float(np.mean(log_z)):.4f}, std {float(np.std(log_z)):.4f}")
