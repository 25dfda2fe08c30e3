"""Training the encoder-decoder on a phrase table's unique pairs (``pysmt rnn train``).

Training runs through the pairs in shuffled epochs of length-bucketed minibatches of ``batch_size``
pairs (:mod:`rnn_feature.batches`: every pair once per epoch, as GroundHog does); Adadelta (rho
0.95, epsilon 1e-6) minimizes the mean negative log-likelihood per pair, updating only the
embedding and softmax rows a minibatch used, with the gradient's norm clipped at ``clip_norm``
(:mod:`rnn_feature.adadelta`). With ``sampled_words`` the training softmax is normalized over the
minibatch's target words and that many others drawn uniformly (:class:`~rnn_feature.model.SampledWords`);
validation and scoring stay exact. A held-out set (1% of the pairs, at most 10,000) gives validation perplexity
per target token (end-of-sequence included) every ``valid_every`` updates; the best model is kept in
``model.pt``. Training stops at ``max_updates``, after ``max_time`` seconds of training in all
(resumed runs included), or when validation perplexity has not improved ``patience`` times in a row.
``last.pt`` is written every ``checkpoint_every`` updates, at the end and on interruption (Ctrl-C,
SIGTERM); rerunning the same command resumes from it and continues exactly as an uninterrupted run
would.

Before any work the folder gets a job record (``job.json``,
:func:`pysmt.plugin.neural.start_training_job`): the hyperparameters
(seed included) and a fingerprint of the phrase table. A rerun with another table (or a changed
one), preset or seed stops with an error naming the differences instead of resuming on the old
pairs; ``force`` discards the folder's earlier training (:data:`TRAINING_FILES`) and starts afresh.
The limits and the device are not recorded: they may change between runs.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import torch

from pysmt.plugin import PysmtError
from pysmt.plugin.neural import (
    LOG,
    TrainingLimits,
    TrainingTask,
    resume_or_start,
    start_training_job,
    train_loop,
)
from rnn_feature.adadelta import SparseAdadelta
from rnn_feature.batches import EpochBatches
from rnn_feature.data import EncodedPairs, count_words, encode_table
from rnn_feature.hyperparameters import Hyperparameters
from rnn_feature.model import EncoderDecoder, SampledWords
from rnn_feature.pairs_for import FILTERED, PairsFor
from rnn_feature.store import (
    LAST,
    MODEL,
    SOURCE_VOCAB,
    TARGET_VOCAB,
    build_model,
    load_checkpoint,
    save_checkpoint,
)
from rnn_feature.vocabulary import EOS_ID, Shortlist

PAIRS = "pairs.npz"
#: What a training run writes into its folder (besides job.json): all that ``force`` deletes.
TRAINING_FILES = (LAST, MODEL, PAIRS, SOURCE_VOCAB, TARGET_VOCAB, LOG, FILTERED)
JOB_COMMAND = "rnn train"
VALID_SHARE, VALID_MAX = 0.01, 10_000


def log(message: str) -> None:
    print(f"pysmt rnn train: {message}", file=sys.stderr, flush=True)


def prepare(table: Path, out: Path, hp: Hyperparameters) -> EncodedPairs:
    """Shortlists and encoded pairs in ``out`` (made once per job; a resumed run reads them back).

    They are reused only when the job record (:func:`pysmt.plugin.neural.start_training_job`) says the table
    is unchanged.
    """
    if (out / PAIRS).exists() and (out / SOURCE_VOCAB).exists() and (out / TARGET_VOCAB).exists():
        return EncodedPairs.load(out / PAIRS)
    log(f"counting words in {table}")
    source_counts, target_counts = count_words(table)
    source = Shortlist.most_frequent(source_counts, hp.source_shortlist)
    target = Shortlist.most_frequent(target_counts, hp.target_shortlist)
    log(
        f"encoding pairs ({len(source_counts):,} source and {len(target_counts):,} target words; "
        f"shortlists of {len(source):,} and {len(target):,})"
    )
    pairs = encode_table(table, source, target)
    source.save(out / SOURCE_VOCAB)
    target.save(out / TARGET_VOCAB)
    pairs.save(out / PAIRS)
    return pairs


def split(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(training, validation) pair indices: a seeded 1% (at most 10,000) held out."""
    order = np.random.default_rng(seed).permutation(n)
    n_valid = min(VALID_MAX, max(1, int(n * VALID_SHARE))) if n > 1 else 0
    return np.sort(order[n_valid:]), np.sort(order[:n_valid])


def perplexity(model: EncoderDecoder, pairs: EncodedPairs, index: np.ndarray, device: torch.device) -> float:
    """Per-token perplexity (target words plus end-of-sequence) of pairs ``index``."""
    from rnn_feature.scoring import score_encoded

    if not len(index):
        return float("nan")
    model.eval()
    total = float(score_encoded(model, pairs.source.take(index), pairs.target.take(index)).sum())
    model.train()
    tokens = int(pairs.target.lengths()[index].sum()) + len(index)
    return math.exp(-total / tokens)


def sample_words(
    target: torch.Tensor, lengths: torch.Tensor, vocabulary: int, drawn: int, rng: np.random.Generator
) -> SampledWords | None:
    """The minibatch's own target words (end-of-sequence included, padding not) and ``drawn`` others,
    uniformly without replacement; None when ``drawn`` is 0 (the exact softmax)."""
    if drawn <= 0:
        return None
    real = np.arange(target.shape[1])[None, :] < lengths.numpy()[:, None]
    gold = np.union1d(target.numpy()[real], [EOS_ID])
    rest = np.setdiff1d(np.arange(vocabulary), gold, assume_unique=True)
    drawn = min(drawn, len(rest))
    if not drawn:
        return None
    others = rng.choice(rest, drawn, replace=False) if drawn < len(rest) else rest
    words = torch.from_numpy(np.concatenate([gold, others]).astype(np.int64))
    return SampledWords(words, len(gold), math.log(len(rest) / drawn))


def model_state(model: EncoderDecoder, update: int) -> dict:
    """What every checkpoint holds: hyperparameters, weights, vocabulary sizes, the update count."""
    return {
        "hyperparameters": model.hp.to_dict(),
        "model": model.state_dict(),
        "update": update,
        "source_size": model.source_embedding.num_embeddings,
        "target_size": model.target_embedding.num_embeddings,
    }


def train(
    table: Path,
    out: Path,
    hp: Hyperparameters,
    device: torch.device,
    limits: TrainingLimits,
    force: bool = False,
    pairs_for: PairsFor | None = None,
) -> float:
    """Train (or resume) a model in ``out``; return the best validation perplexity.

    A rerun resumes only the same job (same table, unchanged, same hyperparameters); anything else
    is an error unless ``force``, which discards the folder's earlier training first. With ``pairs_for``
    only the table's pairs the decoder can use for those files are trained on (:mod:`rnn_feature.pairs_for`).
    """
    table, out = Path(table), Path(out)
    inputs = {"--phrase-table": table, **(pairs_for.job_inputs() if pairs_for else {})}
    start_training_job(out, JOB_COMMAND, hp, inputs, TRAINING_FILES, force)
    pairs = prepare(pairs_for.filtered_table(table, out) if pairs_for else table, out, hp)
    if not len(pairs):
        raise PysmtError(f"{table}: no phrase pairs to train on")
    return train_prepared(pairs, out, hp, device, limits)


def load_start(model: EncoderDecoder, start: dict[str, torch.Tensor], hp: Hyperparameters) -> None:
    """Load the weights to start from, or one line naming the first weight that does not fit."""
    for name, weight in model.state_dict().items():
        given = start.get(name)
        if given is None or given.shape != weight.shape:
            found = "missing" if given is None else f"{tuple(given.shape)} given"
            expected = f"{tuple(weight.shape)} expected"
            raise PysmtError(f"the weights to start from do not fit the {hp.preset} model: {name} {found}, {expected}")
    model.load_state_dict(start)


def train_prepared(
    pairs: EncodedPairs,
    out: Path,
    hp: Hyperparameters,
    device: torch.device,
    limits: TrainingLimits,
    start: dict[str, torch.Tensor] | None = None,
) -> float:
    """Train (or resume) on pairs already encoded with the shortlists in ``out``; the best validation perplexity.

    What :func:`train` runs once the job is recorded, and what a device run (:mod:`rnn_feature.device_run`)
    runs on a machine that has the encoded pairs but not the table. ``start``: weights to begin from instead
    of the initialisation (a device run continuing an earlier one's model, e.g. at a smaller minibatch);
    a resumed run ignores it, since its checkpoint already holds where it got to.
    """
    train_index, valid_index = split(len(pairs), hp.seed)
    torch.manual_seed(hp.seed)

    def fresh() -> EncoderDecoder:
        model = EncoderDecoder(hp, *(len(Shortlist.load(out / name)) for name in (SOURCE_VOCAB, TARGET_VOCAB)))
        if start is not None:
            load_start(model, start, hp)
            log("starting from the given weights")
        return model

    state, model = resume_or_start(out / LAST, hp, load_checkpoint, build_model, fresh, log)
    model.to(device).train()
    optimizer = SparseAdadelta(model.parameters(), lr=1.0, rho=hp.rho, eps=hp.epsilon, clip_norm=hp.clip_norm)
    batches = EpochBatches(
        train_index, pairs.source.lengths(), pairs.target.lengths(), hp.batch_size, hp.sort_batches, hp.seed
    )
    update = state["update"]
    log(f"{len(train_index):,} training pairs: {batches.per_epoch:,} updates an epoch")

    def step(rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """The mean negative log-likelihood of the next minibatch of the epoch (its softmax sampled or exact)."""
        nonlocal update
        batch = batches.batch(update)
        update += 1
        src, src_len = pairs.source.padded(batch)
        tgt, tgt_len = pairs.target.padded(batch)
        sampled = sample_words(tgt, tgt_len, model.target_embedding.num_embeddings, hp.sampled_words, rng)
        loss = -model.log_probs(
            src.to(device),
            src_len.to(device),
            tgt.to(device),
            tgt_len.to(device),
            sampled.to(device) if sampled else None,
        ).mean()
        return loss, loss

    task = TrainingTask(
        JOB_COMMAND,
        hp.batch_size,
        "pairs",
        "loss",
        step,
        validate=lambda: (perplexity(model, pairs, valid_index, device), {}),
        model_state=lambda update: model_state(model, update),
        save=save_checkpoint,
    )
    return train_loop(task, out, model, optimizer, state, hp.seed, limits)
