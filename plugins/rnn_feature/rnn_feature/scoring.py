"""Batched scoring of phrase pairs: ``log p(target | source)``.

Pairs are sorted by length so each batch is padded as little as possible, scored under
``torch.inference_mode`` and put back in input order. The decoder feature and ``pysmt rnn score``
both go through :func:`score_encoded`, so they give the same numbers.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import torch

from pysmt.plugin.files import atomic_writer, progress_bar
from rnn_feature.data import Ragged, TableLine, read_table
from rnn_feature.model import EncoderDecoder
from rnn_feature.vocabulary import Shortlist

BATCH_SIZE = 512
CHUNK_LINES = 100_000  # phrase-table lines held at once by `pysmt rnn score`


def score_encoded(model: EncoderDecoder, source: Ragged, target: Ragged, batch_size: int = BATCH_SIZE) -> np.ndarray:
    """``log p(target_k | source_k)`` for every pair ``k``, float64, in input order."""
    device = next(model.parameters()).device
    order = np.lexsort((source.lengths(), target.lengths()))  # by target length first: the decoder dominates
    scores = np.empty(len(source))
    with torch.inference_mode():
        for lo in range(0, len(order), batch_size):
            index = order[lo : lo + batch_size]
            src, src_len = source.padded(index)
            tgt, tgt_len = target.padded(index)
            batch = model.log_probs(src.to(device), src_len.to(device), tgt.to(device), tgt_len.to(device))
            scores[index] = batch.double().cpu().numpy()
    return scores


def score_phrases(
    model: EncoderDecoder,
    source_vocab: Shortlist,
    target_vocab: Shortlist,
    pairs: Sequence[tuple[Sequence[str], Sequence[str]]],
    batch_size: int = BATCH_SIZE,
) -> np.ndarray:
    """Scores of (source words, target words) pairs."""
    source = Ragged.from_lists([source_vocab.encode(s) for s, _ in pairs])
    target = Ragged.from_lists([target_vocab.encode(t) for _, t in pairs])
    return score_encoded(model, source, target, batch_size)


def chunks(lines: Iterator[TableLine], size: int) -> Iterator[list[TableLine]]:
    chunk: list[TableLine] = []
    for line in lines:
        chunk.append(line)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def score_table(
    model: EncoderDecoder,
    source_vocab: Shortlist,
    target_vocab: Shortlist,
    table: Path,
    out: Path,
    batch_size: int = BATCH_SIZE,
) -> int:
    """Copy a phrase table, appending ``p(target | source)`` by the RNN to each line's scores.

    The column holds the probability (``exp`` of the log-probability, 17 significant digits),
    because Moses' phrase-table convention is probabilities that the decoder logs on loading; so
    the new table works as a 5-score table in pysmt and in Moses. The table streams through in
    chunks, so it may be larger than memory. Returns the number of lines.
    """
    done = 0
    progress = progress_bar(unit=" pairs", desc="rnn score", unit_scale=True)
    with atomic_writer(out) as handle:
        for chunk in chunks(read_table(table), CHUNK_LINES):
            scores = score_phrases(model, source_vocab, target_vocab, [(c.source, c.target) for c in chunk], batch_size)
            for line, score in zip(chunk, scores):
                fields = list(line.fields)
                fields[2] = f"{fields[2].strip()} {float(np.exp(score)):.17g}"
                handle.write(" ||| ".join(fields) + "\n")
            done += len(chunk)
            progress.update(len(chunk))
    progress.close()
    return done


def store_table_scores(
    model: EncoderDecoder,
    source_vocab: Shortlist,
    target_vocab: Shortlist,
    folder: Path,
    made_by: dict[str, str],
    batch_size: int = BATCH_SIZE,
    only: set[str] | None = None,
) -> Path:
    """Score every entry of a binary phrase table and store the log-probabilities in its folder
    (``stored/rnn.npy``, :class:`~pysmt.plugin.ScoreWriter`), where the ``rnn`` feature of the same model
    reads them. Chunk by chunk; a run stopped part way resumes where it stopped, and scores the same model
    stored already (its record's ``made_by``) are kept, not computed again. Returns the stored file.
    With ``only`` (source phrases, ``rnn score --pairs-for``), only the entries of those source phrases are
    scored; the others stay NaN, and the feature asks the network about them as about any pair without a
    stored score.

    The binary table's modules are imported here: training and scoring pairs need torch and numpy,
    not pysmt's compiled core (:mod:`rnn_feature.device_run`)."""
    from pysmt.plugin import ScoreWriter, stored_scores
    from pysmt.plugin.systems import STORED, PhraseTable

    done = stored_scores(folder).get("rnn")
    if done is not None and done[1].get("made_by") == made_by:
        print(f"pysmt rnn score: {folder}'s stored scores are this model's already", file=sys.stderr, flush=True)
        return folder / STORED / "rnn.npy"
    table = PhraseTable(folder)
    writer = ScoreWriter(folder, "rnn", 1, made_by)
    sources = len(table.block_start) - 1
    source_of = np.repeat(np.arange(sources), np.diff(table.block_start))
    wanted = None if only is None else np.array([table.sources[k] in only for k in range(sources)], dtype=bool)
    if wanted is not None:
        kept = int(np.diff(table.block_start)[wanted].sum())
        print(
            f"pysmt rnn score: {kept:,} of {len(table):,} entries have a --pairs-for source phrase (the others: NaN)",
            file=sys.stderr,
            flush=True,
        )
    words = table.vocabulary
    progress = progress_bar(total=len(table), initial=writer.done, unit=" pairs", desc="rnn score", unit_scale=True)
    for first in range(writer.done, len(table), CHUNK_LINES):
        rows = np.arange(first, min(first + CHUNK_LINES, len(table)))
        picked = rows if wanted is None else rows[wanted[source_of[rows]]]
        starts, lengths = table.target_start[picked].tolist(), table.target_len[picked].tolist()
        pairs = [
            (
                table.sources[int(source_of[k])].split(),
                [words[w] for w in table.target_ids[start : start + length].tolist()],
            )
            for k, start, length in zip(picked.tolist(), starts, lengths)
        ]
        values = np.full((len(rows), 1), np.nan, dtype=np.float32)
        if pairs:
            values[picked - first, 0] = score_phrases(model, source_vocab, target_vocab, pairs, batch_size)
        writer.write(values)
        progress.update(len(rows))
    progress.close()
    return writer.finish()
