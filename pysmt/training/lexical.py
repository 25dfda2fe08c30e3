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

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pysmt.errors import at_line
from pysmt.models.vocabulary import Vocabulary
from pysmt.textio import atomic_writer, read_lines
from pysmt.training.corpus import AlignedCorpus
from pysmt.training.extraction import parse_points

NULL = "NULL"


@dataclass
class LexicalTables:
    """``f2e[(f, e)] = p(e|f)`` and ``e2f[(f, e)] = p(f|e)`` (``NULL`` for unaligned words)."""

    f2e: dict[tuple[Hashable, Hashable], float]
    e2f: dict[tuple[Hashable, Hashable], float]
    null: Hashable = NULL

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

    def encode(self, src_vocab: Vocabulary, tgt_vocab: Vocabulary) -> LexicalTables:
        """The same tables keyed by word ids (NULL = -1): hashing ints is what makes scoring millions of pairs fast.

        Entries whose words are not in the vocabularies are dropped: no phrase can ask for them.
        """
        f_ids, e_ids = dict(src_vocab.ids), dict(tgt_vocab.ids)
        f_ids[NULL] = e_ids[NULL] = -1

        def encoded(table: dict[tuple[Hashable, Hashable], float]) -> dict[tuple[Hashable, Hashable], float]:
            return {(f_ids[f], e_ids[e]): p for (f, e), p in table.items() if f in f_ids and e in e_ids}

        return LexicalTables(encoded(self.f2e), encoded(self.e2f), -1)

    def weights(self, src: Sequence[Hashable], tgt: Sequence[Hashable], points: Sequence[tuple[int, int]]
                ) -> tuple[float, float]:
        """Koehn's lexical weights ``(lex(f|e), lex(e|f))`` of a phrase pair under its alignment.

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
    table = {}
    for line_no, line in read_lines(path):
        fields = line.split()
        if len(fields) != 3:
            raise at_line(path, line_no, "expected 'word word probability'")
        first, second, value = fields
        table[(second, first) if swap else (first, second)] = float(value)
    return table


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
