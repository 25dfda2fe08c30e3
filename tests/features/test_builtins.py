"""Each built-in feature against values computed by hand from the tiny system in conftest."""

import itertools
import math

import pytest

from pysmt.config_files import load_config
from pysmt.decoder import Decoder
from pysmt.features.lexical_reordering import ReorderingModelType
from pysmt.phrases import Sentence
from tests.helpers import LN10

ln = math.log


@pytest.fixture
def decoder(tiny_system):
    return Decoder(load_config(tiny_system))


def option(options, start, end, target):
    return next(o for o in options.by_span[(start, end)] if o.target == tuple(target.split()))


def feature(decoder, name):
    return next(f for f in decoder.features if f.name == name)


def test_language_model_scores_states_and_estimates(decoder):
    lm = feature(decoder, "KENLM0")
    options = decoder.options.build(Sentence(("a", "b", "c")))
    state = lm.initial_state(None)
    (score,), state = lm.extend(state, option(options, 0, 2, "x y"))
    assert score == pytest.approx((-0.2 - 0.3) * LN10)
    assert lm.final(state) == pytest.approx(((-0.1 - 0.5) * LN10,))  # backoff(y) + p(</s>)
    (score,), _ = lm.extend(lm.initial_state(None), option(options, 1, 3, "z x"))
    assert score == pytest.approx((-0.3 - 0.9 - 0.25 - 0.6) * LN10)  # backoffs of <s> and z
    _, estimates = lm.evaluate_in_isolation([option(options, 1, 3, "z x").pair])
    assert estimates[0, 0] == pytest.approx((-0.9 - 0.25 - 0.6) * LN10)  # no left context


def test_unknown_word_option_and_penalties(decoder):
    options = decoder.options.build(Sentence(("a", "q")))
    (unknown,) = options.by_span[(1, 2)]
    assert unknown.target == ("q",) and unknown.pair.unknown
    model = decoder.model
    labels = {f.name: model.offsets[k] for k, f in enumerate(decoder.features)}
    assert unknown.scores[labels["UnknownWordPenalty0"]] == -100
    assert unknown.scores[labels["WordPenalty0"]] == -1
    assert unknown.scores[labels["PhraseDictionaryMemory0"]] == 0
    known = option(options, 0, 1, "x")
    assert known.scores[labels["UnknownWordPenalty0"]] == 0
    assert list(known.scores[labels["PhraseDictionaryMemory0"] :][:2]) == pytest.approx([ln(0.5), ln(0.5)])


def test_distortion_is_minus_the_jump(decoder):
    distortion = feature(decoder, "Distortion0")
    options = decoder.options.build(Sentence(("a", "b", "c")))
    (d1,), state = distortion.extend(distortion.initial_state(None), option(options, 2, 3, "z"))
    (d2,), state = distortion.extend(state, option(options, 0, 1, "x"))
    (d3,), _ = distortion.extend(state, option(options, 1, 2, "y"))
    assert (d1, d2, d3) == (-2.0, -3.0, 0.0)


def test_lexicalized_reordering_orientations_and_slots(decoder):
    lr = feature(decoder, "LexicalReordering0")
    options = decoder.options.build(Sentence(("a", "b", "c")))
    state = lr.initial_state(None)
    first, state = lr.extend(state, option(options, 0, 1, "x"))  # monotone start
    assert first == pytest.approx((ln(0.5), 0, 0, 0, 0, 0))
    second, state = lr.extend(state, option(options, 2, 3, "z"))  # discontinuous
    assert second == pytest.approx((0, 0, ln(0.1), 0, 0, ln(0.2)))
    third, state = lr.extend(state, option(options, 1, 2, "y"))  # swap
    assert third == pytest.approx((0, ln(0.4), 0, 0, ln(0.1), 0))
    missing, _ = lr.extend(state, option(options, 0, 1, "y"))  # pair not in the table: backward 0
    assert missing[0:3] == (0, 0, 0)


@pytest.mark.parametrize(
    "spec, scores, first_at_1",
    [
        ("msd-bidirectional-fe", 6, 2),
        ("msd-backward-fe", 3, 2),
        ("wbe-msd-bidirectional-fe-allff", 6, 2),
        ("monotonicity-bidirectional-f", 4, 1),
        ("mslr-bidirectional-fe", 8, 3),
        ("leftright-backward-fe", 2, 0),
        ("msd-bidirectional-fe-collapseff", 2, 2),
    ],
)
def test_reordering_type_names(spec, scores, first_at_1):
    kind = ReorderingModelType(spec)
    assert kind.num_scores == scores
    assert int(kind.first(0)) == 0 and int(kind.first(1)) == first_at_1


def test_hierarchical_reordering_is_refused():
    from pysmt.errors import PysmtError

    with pytest.raises(PysmtError, match="not supported"):
        ReorderingModelType("hier-mslr-bidirectional-fe")


@pytest.mark.parametrize("model", ["msd", "mslr", "monotonicity", "leftright"])
def test_the_compiled_twin_takes_the_orientations_the_python_feature_takes(model):
    """The twin's orientation rules (C++) against the Python feature's (the specification), on every pair of
    spans in a 7-word sentence and every first phrase."""
    from pysmt import _core

    kind = ReorderingModelType(f"{model}-bidirectional-fe")
    assert _core.orientation_count(kind.model) == kind.orientations
    spans = [(start, end) for start in range(7) for end in range(start + 1, 8)]
    for start, _ in spans:
        assert _core.first_orientation(kind.model, start) == kind.first(start)
    for (prev_start, prev_end), (start, end) in itertools.product(spans, spans):
        if end <= prev_start or start >= prev_end:  # phrases do not overlap
            expected = kind.orientation(prev_start, prev_end, start, end)
            assert _core.orientation(kind.model, prev_start, prev_end, start, end) == expected


def test_a_file_that_is_no_language_model_is_refused_before_any_table_loads(tmp_path):
    """A phrase table given as the LM was found only when KenLM read it, after the tables before it had loaded."""
    from pysmt.errors import PysmtError
    from tests.helpers import write_moses_system

    ini = write_moses_system(tmp_path / "system", phrases="a ||| x ||| nan 0.5 ||| 0-0\n")  # would fail to load
    ini.write_text(ini.read_text().replace("path=lm.arpa", "path=phrases.txt"))
    with pytest.raises(PysmtError) as failure:
        Decoder(load_config(ini))
    assert str(failure.value) == (  # the feature named, then the file
        f"{ini}: feature KENLM0: {tmp_path / 'system' / 'phrases.txt'}: not an ARPA file or a KenLM binary model "
        "(it begins with 'a ||| x ||| nan 0.5 ||| 0-0', not \\data\\ or KenLM's binary "
        "header)"
    )


def test_arpa_files_plain_compressed_and_after_blank_lines_pass_the_check(tmp_path):
    import gzip

    from pysmt.models.language_model import check_model_file
    from pysmt.testing import TOY_ARPA

    (tmp_path / "lm.arpa").write_text("\n\n" + TOY_ARPA)
    (tmp_path / "lm.arpa.gz").write_bytes(gzip.compress(TOY_ARPA.encode()))
    (tmp_path / "lm.bin").write_bytes(b"mmap lm http://kheafield.com/code format version 5\n\0\0")
    for name in ("lm.arpa", "lm.arpa.gz", "lm.bin"):
        check_model_file(tmp_path / name)
