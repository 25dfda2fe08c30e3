"""Training the encoder-decoder on a phrase table's unique pairs (``pysmt rnn train``).

Minibatches of ``batch_size`` pairs are drawn uniformly (with replacement) from the training pairs
by a seeded numpy generator; Adadelta (rho 0.95, epsilon 1e-6) minimizes the mean negative log-
likelihood per pair. A held-out set (1% of the pairs, at most 10,000) gives validation perplexity
per target token (end-of-sequence included) every ``valid_every`` updates; the best model is kept in
``model.pt``. Training stops at ``max_updates``, after ``max_time`` seconds of training in all
(resumed runs included), or when validation perplexity has not improved ``patience`` times in a row.
``last.pt`` is written every ``checkpoint_every`` updates, at the end and on interruption (Ctrl-C,
SIGTERM); rerunning the same command resumes from it and continues exactly as an uninterrupted run
would.

Before any work the folder gets a job record (``job.json``, :mod:`pysmt.running.jobs`): the hyperparameters
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

from pysmt.errors import PysmtError
from pysmt.neural import (
    FRESH_STATE,
    LOG,
    TrainingLimits,
    TrainingTask,
    resumable_state,
    start_training_job,
    train_loop,
)
from rnn_feature.data import EncodedPairs, count_words, encode_table
from rnn_feature.hyperparameters import Hyperparameters
from rnn_feature.model import EncoderDecoder
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
from rnn_feature.vocabulary import Shortlist

PAIRS = "pairs.npz"
#: What a training run writes into its folder (besides job.json): all that ``force`` deletes.
TRAINING_FILES = (LAST, MODEL, PAIRS, SOURCE_VOCAB, TARGET_VOCAB, LOG, FILTERED)
JOB_COMMAND = "rnn train"
VALID_SHARE, VALID_MAX = 0.01, 10_000


def log(message: str) -> None:
    print(f"pysmt rnn train: {message}", file=sys.stderr, flush=True)


def prepare(table: Path, out: Path, hp: Hyperparameters) -> EncodedPairs:
    """Shortlists and encoded pairs in ``out`` (made once per job; a resumed run reads them back).

    They are reused only when the job record (:func:`pysmt.neural.start_training_job`) says the table is unchanged.
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
    train_index, valid_index = split(len(pairs), hp.seed)
    if not len(train_index):
        raise PysmtError(f"{table}: no phrase pairs to train on")
    torch.manual_seed(hp.seed)
    state = resumable_state(out / LAST, hp, load_checkpoint)
    if state is not None:
        model = build_model(state, out / LAST)
        log(f"resuming at update {state['update']:,}")
    else:
        state = dict(FRESH_STATE)
        model = EncoderDecoder(hp, *(len(Shortlist.load(out / name)) for name in (SOURCE_VOCAB, TARGET_VOCAB)))
    model.to(device).train()
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0, rho=hp.rho, eps=hp.epsilon)

    def step(rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """The mean negative log-likelihood of a minibatch of pairs drawn uniformly from the training pairs."""
        batch = train_index[rng.integers(0, len(train_index), hp.batch_size)]
        src, src_len = pairs.source.padded(batch)
        tgt, tgt_len = pairs.target.padded(batch)
        loss = -model.log_probs(src.to(device), src_len.to(device), tgt.to(device), tgt_len.to(device)).mean()
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
