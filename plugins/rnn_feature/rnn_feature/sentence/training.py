"""Training the sentence model on a system's prepared bitext (``pysmt sentence train``).

The folder's first run learns the subword model on the training side (the bitext minus the held-out
slice is what it sees; the slice is 1% and does not change the units measurably, so the whole bitext's
lines are used: no dev or test text ever is), encodes the bitext and records the job
(:func:`pysmt.plugin.neural.start_training_job`: the hyperparameters, seed and direction included, and the
bitext's fingerprint); a rerun resumes it, one with other inputs or hyperparameters is refused unless
``force``. Training runs in shuffled epochs of length-bucketed minibatches (:mod:`rnn_feature.batches`),
Adam with the gradient's norm clipped, and validates per-subword perplexity (end-of-sentence included)
on the held-out slice every ``valid_every`` updates, keeping the best model in ``model.pt``
(:func:`pysmt.plugin.neural.train_loop`: ``--max-time`` across resumed runs, Ctrl-C and SIGTERM checkpoint).
Adam rather than the paper's Adadelta: within a CPU's two hours it reaches a lower perplexity.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch

from pysmt.plugin.neural import LOG, TrainingLimits, TrainingTask, resume_or_start, start_training_job, train_loop
from rnn_feature.batches import EpochBatches
from rnn_feature.sentence.data import ENCODED, EncodedBitext, read_bitext, split
from rnn_feature.sentence.hyperparameters import SentenceHyperparameters
from rnn_feature.sentence.model import AttentionEncoderDecoder, initialize
from rnn_feature.sentence.store import LAST, MODEL, build_model, load_checkpoint, save_checkpoint
from rnn_feature.sentence.subwords import SUBWORDS, Subwords, learn

JOB_COMMAND = "sentence train"
#: What a training run writes into its folder (besides job.json): all that ``force`` deletes.
TRAINING_FILES = (LAST, MODEL, ENCODED, SUBWORDS, LOG)
#: Sentence pairs scored together when validating.
VALID_BATCH = 64


def log(message: str) -> None:
    print(f"pysmt {JOB_COMMAND}: {message}", file=sys.stderr, flush=True)


class ClippedAdam(torch.optim.Adam):
    """Adam whose step first clips the gradients' global norm (the training loop only calls ``step``)."""

    def __init__(self, params: Any, lr: float, clip_norm: float) -> None:
        self.clip_norm = clip_norm
        super().__init__(params, lr=lr)

    def step(self, closure: Any = None) -> Any:
        torch.nn.utils.clip_grad_norm_([p for group in self.param_groups for p in group["params"]], self.clip_norm)
        return super().step(closure)


def prepare(source: Path, target: Path, out: Path, hp: SentenceHyperparameters) -> EncodedBitext:
    """The subword model and the encoded bitext in ``out``: made once per job, read back when resuming."""
    if (out / ENCODED).exists() and (out / SUBWORDS).exists():
        return EncodedBitext.load(out / ENCODED)
    src, tgt = read_bitext(source, target)
    log(f"learning {hp.subwords:,} subword units on {len(src):,} sentence pairs")
    learn((line for side in (src, tgt) for line in side), out / SUBWORDS, hp.subwords, hp.seed)
    subwords = Subwords(out / SUBWORDS)
    log(f"encoding the bitext ({len(subwords):,} units)")
    bitext = EncodedBitext.encode(subwords, src, tgt, hp.right_to_left)
    bitext.save(out / ENCODED)
    return bitext


def perplexity(model: AttentionEncoderDecoder, bitext: EncodedBitext, index: np.ndarray, device: torch.device) -> float:
    """Per-subword perplexity (end-of-sentence included) of pairs ``index``."""
    if not len(index):
        return float("nan")
    model.eval()
    total = 0.0
    order = index[np.argsort(bitext.target.lengths()[index], kind="stable")]
    with torch.no_grad():
        for begin in range(0, len(order), VALID_BATCH):
            batch = order[begin : begin + VALID_BATCH]
            src, src_len = bitext.source.padded(batch)
            tgt, tgt_len = bitext.target.padded(batch)
            total += float(
                model.log_probs(src.to(device), src_len.to(device), tgt.to(device), tgt_len.to(device)).sum()
            )
    model.train()
    return math.exp(-total / (int(bitext.target.lengths()[index].sum()) + len(index)))


def model_state(model: AttentionEncoderDecoder, update: int) -> dict[str, Any]:
    """What every checkpoint holds: hyperparameters, weights, the vocabulary size, the update count."""
    return {
        "hyperparameters": model.hp.to_dict(),
        "model": model.state_dict(),
        "update": update,
        "vocabulary": model.output.out_features,
    }


def train(
    source: Path,
    target: Path,
    out: Path,
    hp: SentenceHyperparameters,
    device: torch.device,
    limits: TrainingLimits,
    force: bool = False,
) -> float:
    """Train (or resume) a sentence model on the bitext ``source``/``target`` in ``out``; the best validation
    perplexity."""
    out = Path(out)
    start_training_job(out, JOB_COMMAND, hp, {"--source": source, "--target": target}, TRAINING_FILES, force)
    return train_prepared(prepare(source, target, out, hp), out, hp, device, limits)


def train_prepared(
    bitext: EncodedBitext, out: Path, hp: SentenceHyperparameters, device: torch.device, limits: TrainingLimits
) -> float:
    """Train (or resume) on a bitext already encoded with the folder's subword model (what a device run
    carries to a GPU machine); the best validation perplexity."""
    train_index, valid_index = split(bitext, hp.max_length, hp.seed)
    torch.manual_seed(hp.seed)

    def fresh() -> AttentionEncoderDecoder:
        model = AttentionEncoderDecoder(hp, len(Subwords(out / SUBWORDS)))
        initialize(model, hp.seed)
        return model

    state, model = resume_or_start(out / LAST, hp, load_checkpoint, build_model, fresh, log)
    model.to(device).train()
    optimizer = ClippedAdam(model.parameters(), lr=hp.learning_rate, clip_norm=hp.clip_norm)
    batches = EpochBatches(
        train_index, bitext.source.lengths(), bitext.target.lengths(), hp.batch_size, hp.sort_batches, hp.seed
    )
    update = state["update"]
    log(f"{len(train_index):,} training pairs ({len(valid_index):,} held out): {batches.per_epoch:,} updates an epoch")

    def step(rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """The next minibatch's loss: negative log-likelihood per target subword; shown as it is."""
        nonlocal update
        batch = batches.batch(update)
        update += 1
        src, src_len = bitext.source.padded(batch)
        tgt, tgt_len = bitext.target.padded(batch)
        scores = model.log_probs(src.to(device), src_len.to(device), tgt.to(device), tgt_len.to(device))
        loss = -scores.sum() / float(tgt_len.sum() + len(batch))
        return loss, loss

    task = TrainingTask(
        JOB_COMMAND,
        hp.batch_size,
        "pairs",
        "nll",
        step,
        validate=lambda: (perplexity(model, bitext, valid_index, device), {}),
        model_state=lambda update: model_state(model, update),
        save=save_checkpoint,
    )
    return train_loop(task, out, model, optimizer, state, hp.seed, limits)
