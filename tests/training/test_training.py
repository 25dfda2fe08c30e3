"""Training pieces against hand-made cases and Moses' own outputs; one end-to-end run."""

from pathlib import Path

import pytest

from pysmt.testing import one_line_error, run_pysmt
from pysmt.training.corpus import AlignedCorpus
from pysmt.training.extraction import ORIENTATION_NAMES, extract_sentence, parse_points
from pysmt.training.lexical import LexicalTables, estimate_lexical_tables
from pysmt.training.preparation import keep_pair
from pysmt.training.symmetrize import symmetrize

DATA = Path(__file__).parent / "data"


def test_symmetrization_heuristics_on_a_hand_made_case():
    forward = {(0, 0), (1, 1), (2, 1)}  # each target word has one source word
    reverse = {(0, 0), (1, 1), (2, 2)}  # each source word has one target word
    assert symmetrize(forward, reverse, "intersection", 3, 3) == [(0, 0), (1, 1)]
    assert symmetrize(forward, reverse, "union", 3, 3) == [(0, 0), (1, 1), (2, 1), (2, 2)]
    # from (1,1): the straight neighbour (2,1) first (source 2 unaligned), then the diagonal (2,2) (target 2)
    assert symmetrize(forward, reverse, "grow-diag", 3, 3) == [(0, 0), (1, 1), (2, 1), (2, 2)]
    # grow: (2,1) is added while visiting (1,1) and visited in the same pass; its neighbour (2,2) follows
    assert symmetrize(forward, reverse, "grow", 3, 3) == [(0, 0), (1, 1), (2, 1), (2, 2)]
    # final-and adds a union point only when both its words are unaligned
    # (no straight neighbours to grow to; forward-only (1,1) first, then reverse-only (2,1) whose target is taken)
    assert symmetrize({(0, 0), (1, 1)}, {(0, 0), (2, 1)}, "grow-final-and", 3, 2) == [(0, 0), (1, 1)]
    assert symmetrize({(0, 0), (1, 1)}, {(0, 0), (2, 1)}, "grow-final", 3, 2) == [(0, 0), (1, 1), (2, 1)]
    assert symmetrize(forward, reverse, "grow-diag-final", 3, 3) == [(0, 0), (1, 1), (2, 1), (2, 2)]


def test_extraction_with_unaligned_words_at_edges():
    # source: a X b  (X unaligned), target: A B
    pairs = {(ss, se, ts, te) for ss, se, ts, te, _, _ in extract_sentence(3, 2, [(0, 0), (2, 1)], 7)}
    assert (0, 0, 0, 0) in pairs and (0, 1, 0, 0) in pairs  # "a" and "a X" -> "A"
    assert (2, 2, 1, 1) in pairs and (1, 2, 1, 1) in pairs  # "b" and "X b" -> "B"
    assert (0, 2, 0, 1) in pairs and (1, 1, 0, 0) not in pairs  # no pair of the unaligned word alone
    assert len(pairs) == 5


def test_orientations_monotone_swap_other():
    # a b -> B A (swapped)
    found = {
        (ss, ts): (ORIENTATION_NAMES[p], ORIENTATION_NAMES[n])
        for ss, se, ts, te, p, n in extract_sentence(2, 2, [(0, 1), (1, 0)], 7)
        if ss == se
    }
    assert found[(1, 0)] == ("other", "swap")  # first target phrase, not at source start
    assert found[(0, 1)] == ("swap", "other")  # last target phrase, not at source end


def test_extraction_matches_moses_extract_o(shared_data):
    base = shared_data("fixtures", "moses", "misc.lexical-weights")
    fr = [line.split() for line in (base / "fr").read_text(encoding="utf-8").splitlines()]
    en = [line.split() for line in (base / "en").read_text(encoding="utf-8").splitlines()]
    align = (base / "align.fr-en").read_text().splitlines()
    weights = ["0.3", "0.7"]  # the regression test's instance weights, echoed in its output
    lines = []
    for f, e, a, w in zip(fr, en, align, weights):
        for ss, se, ts, te, p, n in extract_sentence(len(f), len(e), parse_points(a), 7):
            lines.append(
                f"{' '.join(f[ss : se + 1])} ||| {' '.join(e[ts : te + 1])} ||| "
                f"{ORIENTATION_NAMES[p]} {ORIENTATION_NAMES[n]} ||| {w}"
            )
    assert lines == (DATA / "moses-extract.phrase-based-weighted.extract.o").read_text(encoding="utf-8").splitlines()


def test_lexical_tables_equal_moses(tmp_path, shared_data):
    base = shared_data("fixtures", "moses", "misc.lexical-weights")
    corpus = AlignedCorpus.load(base / "fr", base / "en", base / "align.fr-en")
    estimate_lexical_tables(corpus).save(tmp_path / "lex.f2e", tmp_path / "lex.e2f")
    ours = (tmp_path / "lex.f2e").read_text(encoding="utf-8").splitlines() + (tmp_path / "lex.e2f").read_text(
        encoding="utf-8"
    ).splitlines()
    expected = (DATA / "moses-misc.lexical-weights.results.txt").read_text(encoding="utf-8").splitlines()
    assert sorted(ours, key=str.encode) == expected


def test_lexical_weights_by_hand():
    tables = LexicalTables(
        f2e={("a", "A"): 0.5, ("b", "A"): 0.25, ("NULL", "B"): 0.1}, e2f={("a", "A"): 0.4, ("b", "A"): 0.8}
    )
    # target A aligned to a and b (average), target B unaligned (NULL)
    f_e, e_f = tables.weights(["a", "b"], ["A", "B"], ((0, 0), (1, 0)))
    assert e_f == pytest.approx((0.5 + 0.25) / 2 * 0.1)
    assert f_e == pytest.approx(0.4 * 0.8)


@pytest.mark.parametrize("processes, run_size", [(1, 500_000), (2, 2)])
def test_phrase_and_reordering_tables_by_hand(tmp_path, monkeypatch, processes, run_size):
    """Counts, both phrase probabilities, lexical weights (an unaligned word against NULL), alignments,
    smoothed orientations and Moses' byte order, whether written in one run or merged from many."""
    import pysmt.training.scoring as scoring
    from pysmt.training.extraction import extract_corpus
    from pysmt.training.scoring import count_pairs, write_tables

    monkeypatch.setattr(scoring, "RUN_SIZE", run_size)
    for name, text in (("f", "a b\na\na c\n"), ("e", "x y\nx\nz\n"), ("al", "0-0 1-1\n0-0\n0-0\n")):
        (tmp_path / name).write_text(text, encoding="utf-8")
    corpus = AlignedCorpus.load(tmp_path / "f", tmp_path / "e", tmp_path / "al")
    instances = extract_corpus(corpus.sources, corpus.targets, corpus.alignments, processes=1)
    pairs = count_pairs(instances, corpus)
    # lex.f2e p(e|f): a->x 2/3, a->z 1/3, c->NULL 1; lex.e2f p(f|e): a|x 1, a|z 1, c|NULL 1, b|y 1
    n = write_tables(
        instances, corpus, pairs, estimate_lexical_tables(corpus), tmp_path / "pt", tmp_path / "rt", processes=processes
    )
    pt = (tmp_path / "pt").read_text(encoding="utf-8").splitlines()
    rt = (tmp_path / "rt").read_text(encoding="utf-8").splitlines()
    assert n == len(pt) == len(rt) == 5
    assert pt == sorted(pt, key=str.encode)
    assert [line.split(" ||| ")[:2] for line in pt] == [line.split(" ||| ")[:2] for line in rt]
    # a ||| x: seen twice (sentences 1, 2); a occurs 3 times as a source phrase, x twice as a target
    assert "a ||| x ||| 1 1 0.666667 0.666667 ||| 0-0 ||| 2 3 2" in pt
    # a c ||| z: c unaligned, p(f|e) = 1/2 (z is also the target of a ||| z), lex(e|f) = p(z|a) = 1/3
    assert "a c ||| z ||| 0.5 1 1 0.333333 ||| 0-0 ||| 2 1 1" in pt
    # two monotone occurrences each side: (2 + 0.5) / (2 + 1.5) and 0.5 / 3.5
    assert "a ||| x ||| 0.714286 0.142857 0.142857 0.714286 0.142857 0.142857" in rt


@pytest.mark.parametrize(
    "src, tgt, reason",
    [
        ("", "a", "empty"),
        ("a " * 81, "a", "longer than 80 tokens"),
        ("a " * 10, "a", "length ratio over 9"),
        (", .", "x", "punctuation only"),
        ("a b", "c", None),
    ],
)
def test_cleaning_rules(src, tgt, reason):
    assert keep_pair(src, tgt) == reason


def test_end_to_end_train_and_decode(tmp_path, shared_data):
    base = shared_data("multi30k", "raw")
    for lang in ("en", "fr"):
        lines = (base / f"train.{lang}").read_text(encoding="utf-8").splitlines()[:300]
        (tmp_path / f"small.{lang}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    proc = run_pysmt("train", "--corpus", tmp_path / "small", "--out", tmp_path / "sys")
    assert proc.returncode == 0, proc.stderr[-2000:]
    for name in ("phrase-table.gz", "reordering-table.wbe-msd-bidirectional-fe.gz", "lm.bin", "lex.f2e", "pysmt.toml"):
        assert (tmp_path / "sys" / name).is_file()
    out = run_pysmt(
        "decode", "-c", tmp_path / "sys" / "pysmt.toml", input="A man in an orange hat.\n\nTwo dogs are playing!\n"
    )
    lines = out.stdout.split("\n")[:-1]
    assert out.returncode == 0 and len(lines) == 3 and lines[1] == ""
    assert lines[0][0].isupper() and "homme" in lines[0] and not lines[0].endswith(" .")
    again = run_pysmt("train", "--corpus", tmp_path / "small", "--out", tmp_path / "sys")
    assert "done already" in again.stderr  # resumes: nothing is redone


def test_mismatched_bitext_is_an_error_before_work(tmp_path):
    (tmp_path / "c.en").write_text("a\nb\n")
    (tmp_path / "c.fr").write_text("a\n")
    one_line_error(
        run_pysmt("train", "--corpus", tmp_path / "c", "--out", tmp_path / "sys"), "c.en has 2 lines but", "c.fr has 1"
    )
    assert not (tmp_path / "sys").exists()
