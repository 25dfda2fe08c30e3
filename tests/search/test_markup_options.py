"""Markup options (``--xml-input``, :mod:`pysmt.search.markup_options`): Moses' exclusive, inclusive and
constraint policies worked by hand on the toy system, the markup's scores in the n-best list, and the two
option builders and the two engines' n-best lists agreeing on random systems with random markup, plugin
features (context-free and per-sentence, from Python) scoring the markup's pairs as any other."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pysmt import _core
from pysmt.config_files import load_config
from pysmt.decoder import Decoder
from pysmt.files.markup import MarkupOption
from pysmt.phrases import Sentence
from pysmt.search.markup_options import WITH_OPTIONS, SentenceMarkup, violates
from pysmt.testing import registered, write_toy_system
from tests.search.test_compiled_options import (
    SpanPosition,
    StoredColumn,
    TargetLetters,
    same_options,
    systems,
    write_random_system,
)
from tests.search.test_compiled_search import nbest, same_lists

ENGINES = [("python", "normal"), ("python", "cube"), ("auto", "normal"), ("auto", "cube")]


def decoders(ini, mode: str) -> list[Decoder]:
    config = load_config(ini)
    return [Decoder(config, algorithm=a, engine=e, xml_input=mode) for e, a in ENGINES]  # type: ignore[arg-type]


def one_answer(
    ini, mode: str, line: str, size: int = 30, same_best: bool = True
) -> list[tuple[str, list[float], float]]:
    """Normal search's n-best list, checked to be the compiled engine's too, as cube pruning's lists are both
    engines' (and, with ``same_best``, both searches find the same best translation)."""
    python_normal, python_cube, compiled_normal, compiled_cube = (nbest(d, line, size) for d in decoders(ini, mode))
    same_lists(python_normal, compiled_normal)
    same_lists(python_cube, compiled_cube)
    assert not same_best or python_cube[0] == python_normal[0]
    return python_normal


def spans(decoder: Decoder, line: str) -> dict[tuple[int, int], list[tuple[str, bool]]]:
    """A line's options by span: (target, unknown) of each, best first, as the Python builder makes them."""
    words, markup, _ = decoder.read_markup(line, 0)
    options = decoder.options.build(Sentence(words), markup)
    decoder.model.end_sentence()
    return {span: [(" ".join(o.target), o.pair.unknown) for o in opts] for span, opts in options.by_span.items()}


#: The toy system's columns: KENLM0, Distortion0, LexicalReordering0 (6), WordPenalty0, UnknownWordPenalty0,
#: PhraseDictionaryMemory0 (2).
TM = slice(10, 12)
WP = 8


def test_exclusive_the_markup_translation_is_the_only_one_of_its_words(tiny_system):
    line = 'a <n translation="chat||dog" prob="0.5||0.1">b</n> c'
    found = one_answer(tiny_system, "exclusive", line)
    assert found[0][0] == "x chat z"
    by_words = {words: scores for words, scores, _ in reversed(found)}
    # Moses' SetXMLScore: the first table's columns each log(prob) / their count, beside a -> x's (0.5 0.5) and
    # c -> z's (0.9 0.9); the word penalty as for any pair
    tables = math.log(0.5) + math.log(0.9)
    assert by_words["x chat z"][TM] == pytest.approx([tables + math.log(0.5) / 2] * 2, abs=1e-6)  # float32 tables
    assert by_words["x dog z"][TM] == pytest.approx([tables + math.log(0.1) / 2] * 2, abs=1e-6)
    assert by_words["x chat z"][WP] == -3.0
    # no table option of b, a b or b c: every translation has chat or dog
    assert all(("chat" in words.split()) != ("dog" in words.split()) for words, _, _ in found)
    decoder = decoders(tiny_system, "exclusive")[2]
    best = decoder.translate(line).hypotheses[0]
    assert best.alignment == [(0, 0), (2, 2)] and not best.unknown  # no alignment inside, not an unknown word


def test_exclusive_words_inside_a_longer_span_are_passed_through_as_moses_does(tiny_system):
    decoder = decoders(tiny_system, "exclusive")[0]
    options = spans(decoder, '<np translation="w v">a b</np> c')
    assert options[(0, 2)] == [("w v", False)]
    assert options[(0, 1)] == [("a", True)] and options[(1, 2)] == [("b", True)]
    assert (1, 3) not in options and options[(2, 3)] == [("z", False)]
    assert one_answer(tiny_system, "exclusive", '<np translation="w v">a b</np> c')[0][0] == "w v z"


def test_inclusive_the_markup_translation_competes_with_the_tables(tiny_system):
    line = 'a <n translation="w">b</n> c'
    decoder = decoders(tiny_system, "inclusive")[0]
    assert spans(decoder, line)[(1, 2)] == [("y", False), ("w", False)]  # best first: the LM knows y
    found = one_answer(tiny_system, "inclusive", line, 100)
    assert found[0][0] == "x y z"
    markup = [scores for words, scores, _ in found if words == "x w z"]
    tables = [math.log(0.5) + math.log(0.9)] * 2  # a -> x and c -> z; the markup's prob 1 adds log 1
    assert markup and markup[0][TM] == pytest.approx(tables, abs=1e-6)  # the table keeps float32


def test_constraint_keeps_the_table_options_that_contain_the_markup_translation(tiny_system):
    decoder = decoders(tiny_system, "constraint")[0]
    options = spans(decoder, '<n translation="x y" prob="0.1">a b</n> c')
    assert options[(0, 2)] == [("x y", False), ("x y", False)]  # the table's and the markup's (ln 0.1 / 2 each)
    assert options[(0, 1)] == [("a", True)] and options[(1, 2)] == [("b", True)]  # pieces of the span: gone
    assert (1, 3) not in options  # partly over it: gone
    options = spans(decoder, 'a <n translation="y">b</n> c')
    assert options[(1, 2)] == [("y", False), ("y", False)]
    assert options[(0, 2)] == [("x y", False)]  # covers the span, its target contains y
    assert (1, 3) not in options  # covers it, but z x has no y


def test_constraint_the_first_markup_option_decides_as_in_moses():
    first, second = MarkupOption(1, 2, ("y",), 0.0), MarkupOption(1, 2, ("w",), 0.0)
    assert not violates([first, second], 0, 2, ("x", "y"))
    assert violates([second, first], 0, 2, ("x", "y"))
    assert not violates([first], 2, 3, ("z",))  # elsewhere: no say


def test_ignore_drops_the_tags_and_pass_through_reads_them_as_words(tiny_system):
    line = 'a <n translation="w">b</n> c'
    assert one_answer(tiny_system, "ignore", line, 1)[0][0] == "x y z"
    assert one_answer(tiny_system, "pass-through", line, 1)[0][0] == 'x <n translation="w">b</n> z'


def test_a_sentence_of_only_tags_is_an_empty_translation(tiny_system):
    assert decoders(tiny_system, "exclusive")[2].translate("<wall/>").best == ""


@st.composite
def markups(draw, length: int) -> list[MarkupOption]:
    options = []
    for _ in range(draw(st.integers(0, 3))):
        start = draw(st.integers(0, length - 1))
        end = draw(st.integers(start + 1, min(length, start + 3)))
        target = tuple(draw(st.lists(st.sampled_from(["x", "y", "z", "w", "new"]), min_size=1, max_size=3)))
        options.append(MarkupOption(start, end, target, draw(st.sampled_from([0.0, -0.7, -100.0]))))
    return options


def test_the_core_places_markup_under_every_policy_with_options_by_its_name():
    # compiled_options.py hands the builder the policy of --xml-input as the core's enum of that name
    assert sorted(_core.MarkupPolicy.__members__) == sorted(WITH_OPTIONS)


@settings(max_examples=60, deadline=None)
@given(systems(), st.data())
def test_both_builders_make_the_same_markup_options(tmp_path_factory, system, data):
    tables, limits, plugins, forbid, sentences = system
    ini = write_random_system(tmp_path_factory.mktemp("sys"), tables, limits, plugins)
    TargetLetters.forbid = forbid
    with registered(letters=TargetLetters, position=SpanPosition, column=StoredColumn):
        python, compiled = (Decoder(load_config(ini), engine=engine) for engine in ("python", "auto"))
        assert compiled.compiled_options is not None
        for index, line in enumerate(sentences):
            words = tuple(line.split())
            policy = data.draw(st.sampled_from(["exclusive", "inclusive", "constraint"]))
            markup = SentenceMarkup(policy, tuple(data.draw(markups(len(words)))), python.markup_table, words)
            sentence = Sentence(words, index)
            expected = python.options.build(sentence, markup)
            built, objects = compiled.compiled_options.build(sentence, markup)
            same_options(expected, objects or compiled.compiled_options.materialize(built, sentence))
            python.model.end_sentence()
            compiled.model.end_sentence()


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_both_engines_give_the_same_nbest_lists_with_markup_walls_and_zones(tmp_path_factory, data):
    ini = write_toy_system(tmp_path_factory.mktemp("sys"))
    words = data.draw(st.lists(st.sampled_from(["a", "b", "c", "q"]), min_size=1, max_size=6))
    pieces = []
    opened = 0
    for k, word in enumerate(words):
        tag = data.draw(st.sampled_from(["", "", "wall", "zone", "n"]))
        if tag == "wall":
            pieces.append("<wall/>")
        elif tag and not opened:
            attributes = ' translation="w||x y" prob="0.4||0.6"' if tag == "n" else ""
            pieces.append(f"<{tag}{attributes}>")
            opened = k + 1
            closing = tag
        pieces.append(word)
        if opened and data.draw(st.booleans()):
            pieces.append(f"</{closing}>")
            opened = 0
    if opened:
        pieces.append(f"</{closing}>")
    line = " ".join(pieces)
    for mode in ("exclusive", "inclusive", "constraint", "ignore"):
        one_answer(ini, mode, line, 20, same_best=False)


@pytest.mark.parametrize("plugin", ["bigram", "batched-bigram"])
def test_a_plugins_stateful_feature_scores_markup_options_alike_in_both_engines(tiny_system, fake_registry, plugin):
    config = load_config(tiny_system)
    lines = ['a <n translation="y z||x">b</n> c', '<n translation="x y">a b</n> <wall/> c', "<zone>c b</zone> a"]
    for mode in ("exclusive", "inclusive", "constraint"):
        for algorithm in ("normal", "cube"):
            python, compiled = (
                Decoder(config, [plugin], algorithm=algorithm, engine=engine, missing_weight=0.6, xml_input=mode)
                for engine in ("python", "auto")
            )
            for line in lines:
                same_lists(nbest(python, line), nbest(compiled, line))
    exclusive = Decoder(config, [plugin], engine="python", missing_weight=0.6, xml_input="exclusive")
    best = exclusive.translate(lines[0]).hypotheses[0]
    assert best.words == ["x", "y", "z", "z"] and best.scores[-1] == 2.5  # x y, y z (the markup's words), z at the end


def test_a_sentence_whose_building_failed_leaves_neither_its_markup_nor_its_lookups(tiny_system):
    decoder = Decoder(load_config(tiny_system), xml_input="exclusive")
    assert decoder.compiled_options is not None
    core = decoder.compiled_options.core
    core.set_markup(policy=_core.MarkupPolicy.exclusive, starts=[1], ends=[2], targets=[["w"]], values=[0.0])
    core.lookup(["a", "b", "c", "q"])  # never finished: as when a plugin's feature fails between the two steps
    assert nbest(decoder, "a b c q") == nbest(Decoder(load_config(tiny_system)), "a b c q")
