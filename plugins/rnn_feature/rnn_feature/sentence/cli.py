"""``pysmt sentence``: train the attention encoder-decoder on a system's bitext, and translate with it alone."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from pysmt.plugin import PysmtError
from pysmt.plugin.commands import from_command, options_of, threads_option, use_training_threads
from pysmt.plugin.neural import TrainingLimits
from rnn_feature.sentence.hyperparameters import PRESETS, SentenceHyperparameters

DEVICE_HELP = "auto (CUDA when there is a GPU), cpu, cuda or cuda:N."


@click.group()
def sentence() -> None:
    """The sentence model: the RNN Encoder-Decoder with attention over subwords, re-ranking n-best lists."""


def bitext_of(system: str | None, source: str | None, target: str | None) -> tuple[Path, Path]:
    """The bitext to train on: ``--source``/``--target``, or the prepared one ``pysmt train`` left in ``--system``."""
    if system is None:
        if source is None or target is None:
            raise click.UsageError("give --system SYSTEM (a folder pysmt train made), or --source and --target")
        return Path(source), Path(target)
    if source is not None or target is not None:
        raise click.UsageError("--system names the bitext: give it, or --source and --target, not both")
    from pysmt.plugin.systems import load_config

    processing = load_config(Path(system) / "pysmt.toml").processing
    if processing is None:
        raise PysmtError(f"{system}/pysmt.toml: no [processing] section to name its languages; use --source/--target")
    corpus = Path(system) / "corpus" / "train"
    return Path(f"{corpus}.{processing.source_language}"), Path(f"{corpus}.{processing.target_language}")


@sentence.command()
@click.option("--system", type=click.Path(file_okay=False), help="A system folder (pysmt train): its prepared bitext.")
@click.option(
    "--source", type=click.Path(dir_okay=False), help="Source side of a prepared bitext (instead of --system)."
)
@click.option("--target", type=click.Path(dir_okay=False), help="Its target side.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False), help="Model folder to write.")
@click.option("--preset", default="cpu", show_default=True, type=click.Choice(sorted(PRESETS)))
@click.option("--right-to-left", is_flag=True, help="Train on reversed targets (the sentence-r2l feature's model).")
@click.option("--device", default="auto", show_default=True, help=DEVICE_HELP)
@options_of(TrainingLimits)
@click.option(
    "--seed",
    type=click.IntRange(0, 2**32 - 1),
    help=f"Seed of subwords, initialization, validation slice and minibatches ({SentenceHyperparameters.seed}).",
)
@click.option("--force", is_flag=True, help="Start afresh: discard the model folder's earlier training.")
@threads_option
def train(
    system: str | None,
    source: str | None,
    target: str | None,
    out_dir: str,
    preset: str,
    right_to_left: bool,
    device: str,
    seed: int | None,
    force: bool,
    threads: int | None,
    **given: Any,
) -> None:
    """Train on a system's prepared bitext (Adam, minibatches of sentence pairs, resumable).

    The folder records the job (job.json: preset, direction, seed, the bitext's files). Rerunning the
    same command resumes it; another bitext, preset, direction or seed is an error unless --force. The
    time and update limits, --valid-every, --patience and --device may change between runs.
    """
    from pysmt.plugin.files import check_outputs
    from pysmt.plugin.neural import resolve_device
    from rnn_feature.sentence.hyperparameters import preset as make_preset
    from rnn_feature.sentence.training import train as run_training

    source_path, target_path = bitext_of(system, source, target)
    use_training_threads(threads)
    torch_device = resolve_device(device)
    check_outputs({}, {"--source": str(source_path), "--target": str(target_path)}, folders={"--out": out_dir})
    changes: dict[str, Any] = {"right_to_left": right_to_left} | ({} if seed is None else {"seed": seed})
    limits = from_command(TrainingLimits, given, checkpoint_every=given["valid_every"])
    best = run_training(
        source_path, target_path, Path(out_dir), make_preset(preset, **changes), torch_device, limits, force
    )
    click.echo(f"pysmt sentence train: best validation perplexity {best:.2f}; model in {out_dir}")


@sentence.command()
@click.option("--model", "model_dir", required=True, type=click.Path(file_okay=False), help="Model folder.")
@click.option(
    "-c", "--config", "config_path", type=click.Path(dir_okay=False), help="Prepare and restore text as this system."
)
@click.option(
    "-i", "--input", "input_path", type=click.Path(exists=True, dir_okay=False), help="Input file (default: stdin)."
)
@click.option("--out", "out_path", type=click.Path(dir_okay=False), help="Translations, one a line (default: stdout).")
@click.option("--max-length", default=200, show_default=True, type=click.IntRange(min=1), help="Subwords at most.")
@click.option("--device", default="auto", show_default=True, help=DEVICE_HELP)
@threads_option
def translate(
    model_dir: str,
    config_path: str | None,
    input_path: str | None,
    out_path: str | None,
    max_length: int,
    device: str,
    threads: int | None,
) -> None:
    """Translate with the sentence model alone, greedily (its strength as a translator, beside the system's)."""
    from pysmt.plugin.files import atomic_writer, check_outputs, read_lines, standard_inputs
    from rnn_feature.sentence.translation import greedy_translations

    use_training_threads(threads)
    text = {"--input": input_path} if input_path else standard_inputs()
    check_outputs(
        {"--out": out_path}, {**text, "--model": model_dir, "--config": config_path}, writes_stdout=not out_path
    )
    lines = [line for _, line in read_lines(input_path)] if input_path else sys.stdin.read().splitlines()
    translations = greedy_translations(Path(model_dir), lines, config_path, device, max_length)
    if out_path is None:
        click.echo("\n".join(translations) + ("\n" if lines else ""), nl=False)
        return
    with atomic_writer(out_path) as out:
        out.writelines(line + "\n" for line in translations)
