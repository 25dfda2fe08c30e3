"""Subword units: a sentencepiece unigram model learned on the training bitext's two sides together.

Every word of every hypothesis has an encoding (sentencepiece falls back to single characters and,
for a character it never saw, to its UTF-8 bytes), so no hypothesis word is unknown to the model, as
a word shortlist's [UNK] would be. The text is the system's prepared text (tokenized, truecased):
sentencepiece marks each space-separated token's start, so a hypothesis's words are recovered
exactly. Ids 0-2 are padding, end-of-sentence and unknown (never produced with byte fallback).
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from pathlib import Path

import sentencepiece

from pysmt.plugin import PysmtError
from pysmt.plugin.neural import first_line

SUBWORDS = "subwords.model"
PAD_ID, EOS_ID, UNK_ID = 0, 1, 2
#: Sentences sentencepiece learns from at most (sampled from the bitext with the model's seed).
LEARN_SENTENCES = 1_000_000


def learn(lines: Iterable[str], out: Path, size: int, seed: int) -> None:
    """Learn a ``size``-unit model from ``lines`` and write it to ``out`` (one file, read by :class:`Subwords`)."""
    model = io.BytesIO()
    sentencepiece.set_random_generator_seed(seed)
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_writer=model,
        vocab_size=size,
        model_type="unigram",
        character_coverage=1.0,
        normalization_rule_name="identity",  # the text as the decoder has it: no NFKC (ℵ stays ℵ)
        byte_fallback=True,
        pad_id=PAD_ID,
        eos_id=EOS_ID,
        unk_id=UNK_ID,
        bos_id=-1,
        input_sentence_size=LEARN_SENTENCES,
        shuffle_input_sentence=True,
        hard_vocab_limit=False,  # a tiny corpus gets the units it has
        num_threads=1,
        minloglevel=2,
    )
    out.write_bytes(model.getvalue())


class Subwords:
    """A learned model: words to subword ids, deterministically (the most probable segmentation)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.processor = sentencepiece.SentencePieceProcessor(model_file=str(path))
        except (OSError, RuntimeError) as err:
            raise PysmtError(f"{path}: not a readable subword model ({first_line(err)})") from None

    def __len__(self) -> int:
        return int(self.processor.get_piece_size())

    def encode(self, sentences: Sequence[str]) -> list[list[int]]:
        """Each sentence (space-separated words) as subword ids, without end-of-sentence."""
        return [list(ids) for ids in self.processor.encode(list(sentences))]

    def decode(self, ids: Sequence[int]) -> str:
        """The words a sequence of subword ids spells (space-separated)."""
        return str(self.processor.decode(list(ids)))
