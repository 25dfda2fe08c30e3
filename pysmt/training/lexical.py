"""Word translation tables from a word alignment (Moses' ``get_lexical``) and Koehn's lexical weighting.

Every alignment point counts once for its word pair and for both words' totals; an unaligned
target word counts as translated from ``NULL``, an unaligned source word as translated into
``NULL``. Files are written as Moses writes them, source = f and target = e:

* ``lex.f2e``: ``e f p(e|f)``
* ``lex.e2f``: ``f e p(f|e)``

with 7 decimals, lines sorted byte-wise (Moses leaves them in hash order; sorted output is
reproducible). Lexical weights are computed from the rounded file values, as Moses' ``score``
reads them back.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pysmt.errors import at_line
from pysmt.files.textio import atomic_writer, read_lines
from pysmt.models.vocabulary import Vocabulary
from pysmt.training.corpus import AlignedCorpus
from pysmt.training.extraction import parse_points

NULL = "NULL"


@dataclass
class LexicalTables:
    """``f2e[(f, e)] = p(e|f)`` and ``e2f[(f, e)] = p(f|e)`` (``NULL`` for unaligned words)."""

    f2e: dict[tuple[str, str], float]
    e2f: dict[tuple[str, str], float]
    null: str = NULL

    def save(self, f2e_path: Path, e2f_path: Path) -> None:
        """Write ``lex.f2e`` and ``lex.e2f`` in Moses' format."""
        with atomic_writer(f2e_path) as out:
            out.writelines(sorted((f"{e} {f} {p:.7f}\n" for (f, e), p in self.f2e.items()), key=str.encode))
        with atomic_writer(e2f_path) as out:
            out.writelines(sorted((f"{f} {e} {p:.7f}\n" for (f, e), p in self.e2f.items()), key=str.encode))

    @classmethod
    def load(cls, f2e_path: Path, e2f_path: Path) -> LexicalTables:
        """Read Moses lexical tables (the values used for lexical weighting)."""
        return cls(_read_table(f2e_path, swap=True), _read_table(e2f_path, swap=False))

    def encode(self, src_vocab: Vocabulary, tgt_vocab: Vocabulary) -> Lexicon:
        """The same tables as a :class:`Lexicon` over the corpus's word ids (for scoring)."""
        return Lexicon.build(
            ((f, e, p) for (f, e), p in self.f2e.items()),
            ((f, e, p) for (f, e), p in self.e2f.items()),
            src_vocab,
            tgt_vocab,
        )

    def weights(self, src: Sequence[str], tgt: Sequence[str], points: Sequence[tuple[int, int]]) -> tuple[float, float]:
        """Koehn's lexical weights ``(lex(f|e), lex(e|f))`` of a phrase pair under its alignment: the
        definition, one pair at a time, that :meth:`Lexicon.weights` computes for many at once.

        Each word's probability is averaged over the words it is aligned to; an unaligned word
        takes its probability given NULL; missing entries count as 1 (Moses' permissive lookup).
        """
        to_src: list[list[int]] = [[] for _ in tgt]
        to_tgt: list[list[int]] = [[] for _ in src]
        for s, t in points:
            to_src[t].append(s)
            to_tgt[s].append(t)
        e_given_f = 1.0
        for t, word in enumerate(tgt):
            links = to_src[t]
            if links:
                e_given_f *= sum(self.f2e.get((src[s], word), 1.0) for s in links) / len(links)
            else:
                e_given_f *= self.f2e.get((self.null, word), 1.0)
        f_given_e = 1.0
        for s, word in enumerate(src):
            links = to_tgt[s]
            if links:
                f_given_e *= sum(self.e2f.get((word, tgt[t]), 1.0) for t in links) / len(links)
            else:
                f_given_e *= self.e2f.get((word, self.null), 1.0)
        return f_given_e, e_given_f


def _read_table(path: Path, swap: bool) -> dict[tuple[str, str], float]:
    return {(f, e): p for f, e, p in _entries(path, swap)}


def _entries(path: Path, swap: bool) -> Iterator[tuple[str, str, float]]:
    """``(f, e, p)`` for each line of a Moses lexical table (``lex.f2e`` lines are ``e f p``: ``swap``)."""
    for line_no, line in read_lines(path):
        fields = line.split()
        if len(fields) != 3:
            raise at_line(path, line_no, "expected 'word word probability'")
        first, second, value = fields
        yield (second, first, float(value)) if swap else (first, second, float(value))


def pair_keys(f: np.ndarray, e: np.ndarray) -> np.ndarray:
    """One int64 per (source id, target id) word pair, NULL being id -1: ``(f + 1) << 32 | (e + 1)``."""
    return (f.astype(np.int64) + 1) << 32 | (e.astype(np.int64) + 1)


@dataclass
class Lexicon:
    """Both lexical tables over a corpus's word ids: sorted pair keys (:func:`pair_keys`) and
    ``p(e|f)``, ``p(f|e)`` per key (1.0 where a table lacks the pair, Moses' permissive lookup).

    24 bytes a word pair, where dicts keyed by tuples take about 170, and arrays that forked workers
    read without copying them (a dict lookup writes reference counts): on the 4x corpus 15 MB
    instead of about 400. Scoring looks up a whole run of pairs at once (:meth:`weights`).
    """

    keys: np.ndarray
    f2e: np.ndarray
    e2f: np.ndarray

    @classmethod
    def build(
        cls,
        f2e: Iterable[tuple[str, str, float]],
        e2f: Iterable[tuple[str, str, float]],
        src_vocab: Vocabulary,
        tgt_vocab: Vocabulary,
    ) -> Lexicon:
        """From ``(f, e, p)`` entries; those whose words are not in the vocabularies are dropped
        (no phrase can ask for them)."""
        f_ids, e_ids = dict(src_vocab.ids), dict(tgt_vocab.ids)
        f_ids[NULL] = e_ids[NULL] = -1
        columns = []
        for entries in (f2e, e2f):
            f, e, p = array("q"), array("q"), array("d")
            for f_word, e_word, value in entries:
                if f_word in f_ids and e_word in e_ids:
                    f.append(f_ids[f_word])
                    e.append(e_ids[e_word])
                    p.append(value)
            columns.append(
                (
                    pair_keys(
                        np.frombuffer(f, np.int64) if f else np.zeros(0, np.int64),
                        np.frombuffer(e, np.int64) if e else np.zeros(0, np.int64),
                    ),
                    np.frombuffer(p, np.float64) if p else np.zeros(0),
                )
            )
        keys = np.union1d(columns[0][0], columns[1][0])
        values = []
        for table_keys, table_values in columns:
            full = np.ones(len(keys))
            full[np.searchsorted(keys, table_keys)] = table_values
            values.append(full)
        return cls(keys, *values)

    @classmethod
    def load(cls, f2e_path: Path, e2f_path: Path, src_vocab: Vocabulary, tgt_vocab: Vocabulary) -> Lexicon:
        """Read Moses lexical tables line by line (no table of words is ever held)."""
        return cls.build(_entries(f2e_path, swap=True), _entries(e2f_path, swap=False), src_vocab, tgt_vocab)

    def lookup(self, values: np.ndarray, f: np.ndarray, e: np.ndarray) -> np.ndarray:
        """``values`` (:attr:`f2e` or :attr:`e2f`) of each pair ``(f[i], e[i])``; 1.0 for pairs not in the tables."""
        keys = pair_keys(f, e)
        at = np.minimum(np.searchsorted(self.keys, keys), max(len(self.keys) - 1, 0))
        found = self.keys[at] == keys if len(self.keys) else np.zeros(len(keys), bool)
        return np.where(found, values[at] if len(values) else 1.0, 1.0)

    def weights(
        self, src: np.ndarray, src_len: np.ndarray, tgt: np.ndarray, tgt_len: np.ndarray, points: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Koehn's lexical weights ``(lex(f|e), lex(e|f))`` of n phrase pairs, bit for bit those of
        :meth:`LexicalTables.weights`.

        ``src`` and ``tgt`` are (n, L) word ids (only the first ``src_len``/``tgt_len`` of a row
        count); ``points`` is (m, 3): pair, source position, target position, each pair's points in
        its alignment's (target-major) order. Sums over a word's links are accumulated in that order
        (``bincount``) and products are taken word by word, as the reference does, so the floating
        point results are identical.
        """
        n, width = src.shape
        pair, s, t = points[:, 0], points[:, 1], points[:, 2]
        f_of, e_of = src[pair, s], tgt[pair, t]
        null = np.full(n * width, -1)
        e_given_f = self._product(
            self.lookup(self.f2e, f_of, e_of),
            pair * width + t,
            self.lookup(self.f2e, null, tgt.ravel()),
            tgt_len,
            n,
            width,
        )
        f_given_e = self._product(
            self.lookup(self.e2f, f_of, e_of),
            pair * width + s,
            self.lookup(self.e2f, src.ravel(), null),
            src_len,
            n,
            width,
        )
        return f_given_e, e_given_f

    @staticmethod
    def _product(
        linked: np.ndarray, word: np.ndarray, unlinked: np.ndarray, lengths: np.ndarray, n: int, width: int
    ) -> np.ndarray:
        """Per pair, the product over its words of the mean of their links' probabilities (``linked``,
        grouped by ``word`` = pair * width + position) or, for a word without links, ``unlinked``."""
        sums = np.bincount(word, weights=linked, minlength=n * width)
        links = np.bincount(word, minlength=n * width)
        means = np.where(links > 0, sums / np.maximum(links, 1), unlinked).reshape(n, width)
        means[np.arange(width)[None, :] >= lengths[:, None]] = 1.0
        product = np.ones(n)
        for position in range(width):
            product *= means[:, position]
        return product


def estimate_lexical_tables(corpus: AlignedCorpus) -> LexicalTables:
    """Count word pairs over the aligned corpus and normalize both ways (rounded as Moses writes them)."""
    pairs: Counter[tuple[str, str]] = Counter()
    total_f: Counter[str] = Counter()
    total_e: Counter[str] = Counter()
    src_words, tgt_words = corpus.src_vocab.words, corpus.tgt_vocab.words
    for k in range(len(corpus)):
        src = [src_words[i] for i in corpus.sources[k]]
        tgt = [tgt_words[i] for i in corpus.targets[k]]
        src_aligned, tgt_aligned = set(), set()
        for s, t in parse_points(corpus.alignments[k]):
            src_aligned.add(s)
            tgt_aligned.add(t)
            pairs[(src[s], tgt[t])] += 1
            total_f[src[s]] += 1
            total_e[tgt[t]] += 1
        for t, word in enumerate(tgt):
            if t not in tgt_aligned:
                pairs[(NULL, word)] += 1
                total_e[word] += 1
                total_f[NULL] += 1
        for s, word in enumerate(src):
            if s not in src_aligned:
                pairs[(word, NULL)] += 1
                total_f[word] += 1
                total_e[NULL] += 1
    f2e = {(f, e): round(n / total_f[f], 7) for (f, e), n in pairs.items()}
    e2f = {(f, e): round(n / total_e[e], 7) for (f, e), n in pairs.items()}
    return LexicalTables(f2e, e2f)
