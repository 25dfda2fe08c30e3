"""The shortlist, and the back-off distribution of the words outside it.

**Shortlist** (``target.vocab``): one word per line in id order, ``[EOS]`` = 0, ``[UNK]`` = 1, then
the most frequent words of the training text (ties by byte order). It is the same file format as
the RNN feature's ``target.vocab``, so a CSLM trained with ``--shortlist SYSTEM/rnn/target.vocab``
agrees with the RNN and the WP feature on which words are "unknown". The network's input and output
share these ids; as an *input* (a context position), id 0 stands for ``<s>``: contexts before the
sentence start are padded with it, and ``</s>`` never occurs in a context.

**Words outside the shortlist** get ``P([UNK] | context) * p(w | outside)``, where ``p(w | outside)``
is a unigram distribution over the out-of-shortlist words of the training text, add-one smoothed
over those words plus one bucket for every word never seen in training::

    p(w | outside) = (count(w) + 1) / (N_outside + |outside| + 1)     (count 0 for an unseen word)

so every word gets a proper probability and, for any context, the probabilities of ``</s>``, the
shortlist words, every out-of-shortlist training word and the unseen bucket sum to 1. The counts
come from ``counts.tsv`` (first line ``[EOS]`` with the number of sentences, then every training
word with its count, most frequent first).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from pysmt.plugin import PysmtError
from pysmt.plugin.files import atomic_writer

EOS, UNK = "[EOS]", "[UNK]"
EOS_ID, UNK_ID = 0, 1
#: As a context position, id 0 ([EOS]'s) is the sentence start ``<s>``.
BOS_ID = EOS_ID


class Shortlist:
    """Word <-> id."""

    def __init__(self, words: list[str]) -> None:
        if words[:2] != [EOS, UNK]:
            raise ValueError(f"a shortlist starts with {EOS} and {UNK}")
        self.words = words
        self.ids = {w: k for k, w in enumerate(words) if k > UNK_ID}  # the two symbols are no words

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: str) -> bool:
        return word in self.ids

    @classmethod
    def most_frequent(cls, counts: Counter[str], size: int) -> Shortlist:
        """The ``size - 2`` most frequent words (ties broken by byte order, for reproducibility)."""
        ranked = sorted(
            ((w, c) for w, c in counts.items() if w not in (EOS, UNK)), key=lambda item: (-item[1], item[0].encode())
        )
        return cls([EOS, UNK] + [w for w, _ in ranked[: max(size - 2, 0)]])

    def encode(self, words: Iterable[str]) -> list[int]:
        return [self.ids.get(w, UNK_ID) for w in words]

    def save(self, path: Path) -> None:
        with atomic_writer(path) as out:
            out.write("".join(w + "\n" for w in self.words))

    @classmethod
    def load(cls, path: Path, label: str | None = None) -> Shortlist:
        if not path.is_file():
            raise PysmtError(f"{label + ' ' if label else ''}{path}: no such shortlist file")
        words = path.read_text(encoding="utf-8").split("\n")
        if words and words[-1] == "":
            words.pop()
        if words[:2] != [EOS, UNK]:
            raise PysmtError(
                f"{label + ' ' if label else ''}{path}: not a shortlist (its first lines must be "
                f"{EOS} and {UNK}, one word a line)"
            )
        return cls(words)


def save_counts(path: Path, counts: Counter[str], sentences: int) -> None:
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0].encode()))
    with atomic_writer(path) as out:
        out.write(f"{EOS}\t{sentences}\n")
        out.writelines(f"{w}\t{c}\n" for w, c in ranked)


def load_counts(path: Path) -> tuple[Counter[str], int]:
    """(word counts, number of sentences) of ``counts.tsv``."""
    if not path.is_file():
        raise PysmtError(f"{path}: no such file (the model folder lacks the training text's word counts)")
    counts: Counter[str] = Counter()
    sentences = 0
    with open(path, encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, 1):
            word, tab, count = line.rstrip("\n").partition("\t")
            if not tab or not count.isdigit():
                raise PysmtError(f"{path}, line {line_no}: expected 'word<TAB>count'")
            if line_no == 1 and word == EOS:
                sentences = int(count)
            else:
                counts[word] = int(count)
    return counts, sentences


class Backoff:
    """``log p(w | outside)`` for the words outside the shortlist, and unigram estimates for every word."""

    def __init__(self, shortlist: Shortlist, counts: Counter[str], sentences: int) -> None:
        outside = {w: c for w, c in counts.items() if w not in shortlist}
        self.outside_tokens = sum(outside.values())
        denominator = self.outside_tokens + len(outside) + 1
        self.log_denominator = math.log(denominator)
        self.outside = {w: math.log(c + 1) - self.log_denominator for w, c in outside.items()}
        self.unseen = -self.log_denominator  # the bucket of every word never seen in training
        # Unigram log-probabilities over the softmax's ids (add-one), for future-cost estimates.
        by_id = [sentences, self.outside_tokens] + [counts.get(w, 0) for w in shortlist.words[2:]]
        total = sum(by_id) + len(by_id)
        self.unigram_ids = [math.log(c + 1) - math.log(total) for c in by_id]
        self.shortlist = shortlist

    def logp(self, word: str) -> float:
        """``log p(word | outside)``; 0 for a shortlist word (the network scores it alone)."""
        if word in self.shortlist:
            return 0.0
        return self.outside.get(word, self.unseen)

    def unigram(self, word: str) -> float:
        """A context-free estimate of ``log p(word)``: the training text's unigram, split as the model is."""
        return self.unigram_ids[self.shortlist.ids.get(word, UNK_ID)] + self.logp(word)
