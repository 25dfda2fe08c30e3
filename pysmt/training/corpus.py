"""A word-aligned parallel corpus held integer-encoded: the input of extraction and scoring."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pysmt.errors import PysmtError, at_line
from pysmt.models.vocabulary import Vocabulary
from pysmt.textio import read_lines


@dataclass
class AlignedCorpus:
    """Sentences as tuples of word ids per side, and each sentence's alignment as Pharaoh text."""

    sources: list[tuple[int, ...]]
    targets: list[tuple[int, ...]]
    alignments: list[str]
    src_vocab: Vocabulary
    tgt_vocab: Vocabulary

    def __len__(self) -> int:
        return len(self.sources)

    def source_words(self, k: int, start: int = 0, length: int | None = None) -> list[str]:
        ids = self.sources[k][start:None if length is None else start + length]
        return [self.src_vocab.words[i] for i in ids]

    def target_words(self, k: int, start: int = 0, length: int | None = None) -> list[str]:
        ids = self.targets[k][start:None if length is None else start + length]
        return [self.tgt_vocab.words[i] for i in ids]

    @classmethod
    def load(cls, source_path: Path, target_path: Path, alignment_path: Path) -> AlignedCorpus:
        """Read the three parallel files, checking line counts and alignment indices."""
        src_vocab, tgt_vocab = Vocabulary(), Vocabulary()
        sources = [tuple(src_vocab.add(w) for w in line.split()) for _, line in read_lines(source_path)]
        targets = [tuple(tgt_vocab.add(w) for w in line.split()) for _, line in read_lines(target_path)]
        alignments = [line for _, line in read_lines(alignment_path)]
        if not len(sources) == len(targets) == len(alignments):
            raise PysmtError(f"{source_path} has {len(sources):,} lines, {target_path} {len(targets):,} and "
                             f"{alignment_path} {len(alignments):,}: they must be parallel")
        for k, line in enumerate(alignments):
            for token in line.split():
                s, sep, t = token.partition("-")
                if not (sep and s.isdigit() and t.isdigit()):
                    raise at_line(alignment_path, k + 1, f"alignment point {token!r} is not 'i-j'")
                if int(s) >= len(sources[k]) or int(t) >= len(targets[k]):
                    raise at_line(alignment_path, k + 1, f"alignment point {token} is outside the sentence pair")
        return cls(sources, targets, alignments, src_vocab, tgt_vocab)
