"""Training the CSLM on tokenized target-language text (``pysmt cslm train``).

Every token of the text (and the ``</s>`` ending each sentence) is one training n-gram. Minibatches
of ``batch_size`` n-grams are drawn uniformly (with replacement) by a seeded numpy generator; Adam
minimizes the mean negative log-likelihood plus ``alpha * (log Z)^2`` (self-normalization, Devlin et
al. 2014). The validation text (``--valid``, or a seeded 1 % of the lines, at most 10,000) gives the
perplexity per token (``</s>`` included, words outside the shortlist through the back-off
distribution: see :mod:`pysmt_cslm.vocabulary`) every ``valid_every`` updates; the best model is
kept in ``model.pt``. Training stops at ``max_updates``, after ``max_time`` seconds of training in
all (resumed runs included), or when validation perplexity has not improved ``patience`` times in a
row. ``last.pt`` is written every ``checkpoint_every`` updates, at the end and on interruption
(Ctrl-C, SIGTERM); rerunning the same command resumes from it and continues exactly as an
uninterrupted run would.

Before any work the folder gets a job record (``job.json``,
:func:`pysmt.plugin.neural.start_training_job`): the hyperparameters
(seed included) and fingerprints of ``--text``, ``--valid`` and ``--shortlist``. A rerun with
another text (or a changed one), preset or seed stops with an error naming the differences instead
of resuming; ``force`` discards the folder's earlier training (:data:`TRAINING_FILES`) and starts
afresh. The limits and the device are not recorded: they may change between runs.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import torch

from pysmt.plugin import PysmtError
from pysmt.plugin.files import count_lines
from pysmt.plugin.neural import (
    LOG,
    TrainingLimits,
    TrainingTask,
    resume_or_start,
    start_training_job,
    train_loop,
)
from pysmt_cslm.data import (
    EncodedText,
    count_words,
    encode_text,
    validation_lines,
)
from pysmt_cslm.hyperparameters import Hyperparameters
from pysmt_cslm.model import Cslm
from pysmt_cslm.store import (
    COUNTS,
    LAST,
    MODEL,
    VOCAB,
    build_model,
    load_checkpoint,
    save_checkpoint,
)
from pysmt_cslm.vocabulary import Backoff, Shortlist, save_counts

TRAIN, VALID = "train.npz", "valid.npz"
#: What a training run writes into its folder (besides job.json): all that ``force`` deletes.
TRAINING_FILES = (LAST, MODEL, TRAIN, VALID, VOCAB, COUNTS, LOG)
JOB_COMMAND = "cslm train"
#: N-grams per forward pass when computing validation perplexity.
EVAL_BATCH = 4096


def log(message: str) -> None:
    print(f"pysmt cslm train: {message}", file=sys.stderr, flush=True)


def prepare(
    text: Path, out: Path, hp: Hyperparameters, valid: Path | None = None, shortlist_path: Path | None = None
) -> tuple[EncodedText, EncodedText]:
    """The shortlist, the word counts and the encoded training and validation texts in ``out``.

    Made once per job (a resumed run reads them back; the job record vouches that the inputs are
    unchanged). Without ``valid`` a seeded 1 % of the lines is held out; the counts (shortlist,
    back-off) come from the training lines only.
    """
    if all((out / name).exists() for name in (TRAIN, VALID, VOCAB, COUNTS)):
        return EncodedText.load(out / TRAIN), EncodedText.load(out / VALID)
    log(f"counting words in {text}")
    held = None if valid is not None else validation_lines(count_lines(text), hp.seed)
    counts, sentences = count_words(text, held)
    if shortlist_path is not None:
        shortlist = Shortlist.load(shortlist_path, "--shortlist")
        if len(shortlist) != hp.shortlist:
            raise PysmtError(
                f"--shortlist {shortlist_path} holds {len(shortlist):,} entries but preset "
                f"{hp.preset!r} has a softmax of {hp.shortlist:,}"
            )
    else:
        shortlist = Shortlist.most_frequent(counts, hp.shortlist)
    backoff = Backoff(shortlist, counts, sentences)
    log(f"encoding ({len(counts):,} word types in {sentences:,} training lines; shortlist of {len(shortlist):,})")
    train_text = encode_text(text, shortlist, hp.context, None if held is None else ~held)
    valid_text = (
        encode_text(valid, shortlist, hp.context, None, backoff)
        if valid is not None
        else encode_text(text, shortlist, hp.context, held, backoff)
    )
    if not len(train_text):
        raise PysmtError(f"--text {text}: no lines to train on")
    shortlist.save(out / VOCAB)
    save_counts(out / COUNTS, counts, sentences)
    valid_text.save(out / VALID)
    train_text.save(out / TRAIN)
    return train_text, valid_text


def validate(model: Cslm, text: EncodedText, device: torch.device) -> tuple[float, float]:
    """(perplexity per token, mean log Z) of a validation text, exact softmax plus back-off."""
    if not len(text):
        return float("nan"), float("nan")
    model.eval()
    total, total_z = 0.0, 0.0
    with torch.inference_mode():
        for lo in range(0, len(text), EVAL_BATCH):
            index = np.arange(lo, min(lo + EVAL_BATCH, len(text)))
            contexts = torch.from_numpy(text.contexts(index, model.hp.context)).to(device)
            words = torch.from_numpy(text.ids[index].astype(np.int64)).to(device)
            logits = model(contexts)
            log_z = torch.logsumexp(logits, dim=1)
            total += float((logits.gather(1, words[:, None]).squeeze(1) - log_z).double().sum())
            total_z += float(log_z.double().sum())
    model.train()
    if text.extra is not None:
        total += float(text.extra.sum())
    return math.exp(-total / len(text)), total_z / len(text)


def model_state(model: Cslm, update: int) -> dict:
    """What every checkpoint holds: hyperparameters, weights, vocabulary size, the update count."""
    return {
        "hyperparameters": model.hp.to_dict(),
        "model": model.state_dict(),
        "update": update,
        "vocab_size": model.vocab_size,
    }


def minibatch(text: EncodedText, rng: np.random.Generator, hp: Hyperparameters) -> tuple[torch.Tensor, torch.Tensor]:
    index = rng.integers(0, len(text), hp.batch_size)
    return torch.from_numpy(text.contexts(index, hp.context)), torch.from_numpy(text.ids[index].astype(np.int64))


def train(
    text: Path,
    out: Path,
    hp: Hyperparameters,
    device: torch.device,
    limits: TrainingLimits,
    valid: Path | None = None,
    shortlist: Path | None = None,
    force: bool = False,
) -> float:
    """Train (or resume) a model in ``out``; return the best validation perplexity.

    A rerun resumes only the same job (same texts, unchanged, same hyperparameters); anything else
    is an error unless ``force``, which discards the folder's earlier training first.
    """
    text, out = Path(text), Path(out)
    valid = Path(valid) if valid is not None else None
    shortlist = Path(shortlist) if shortlist is not None else None
    start_training_job(
        out, JOB_COMMAND, hp, {"--text": text, "--valid": valid, "--shortlist": shortlist}, TRAINING_FILES, force
    )
    train_text, valid_text = prepare(text, out, hp, valid, shortlist)
    torch.manual_seed(hp.seed)
    state, model = resume_or_start(
        out / LAST, hp, load_checkpoint, build_model, lambda: Cslm(hp, len(Shortlist.load(out / VOCAB))), log
    )
    model.to(device).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=hp.learning_rate)

    def step(rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """A minibatch of n-grams drawn uniformly from the text: (the loss, its negative log-likelihood part)."""
        contexts, words = minibatch(train_text, rng, hp)
        return model.loss(contexts.to(device), words.to(device))

    def validation() -> tuple[float, dict[str, float]]:
        perplexity, log_z = validate(model, valid_text, device)
        return perplexity, {"mean log Z": log_z}

    task = TrainingTask(
        JOB_COMMAND,
        hp.batch_size,
        "ngrams",
        "nll",
        step,
        validation,
        model_state=lambda update: model_state(model, update),
        save=save_checkpoint,
    )
    return train_loop(task, out, model, optimizer, state, hp.seed, limits)
