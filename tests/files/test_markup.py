"""Reading Moses' XML input markup (:mod:`pysmt.files.markup`): spans, alternatives and probabilities, walls, zones,
the ``span`` attribute, and a malformed tag as a clear error."""

from __future__ import annotations

import math

import pytest

from pysmt.files.markup import LOWEST_LOG, MarkupError, MarkupOption, parse_markup


def test_a_tag_gives_its_words_translations_with_log_probabilities():
    markup = parse_markup('a <np translation="chat||le chat" prob="0.8||0.2">dog</np> runs')
    assert markup.words == ("a", "dog", "runs")
    assert markup.options == (
        MarkupOption(1, 2, ("chat",), math.log(0.8)),
        MarkupOption(1, 2, ("le", "chat"), math.log(0.2)),
    )


def test_defaults_and_moses_details():
    assert parse_markup('<n translation="x">a b</n>').options == (MarkupOption(0, 2, ("x",), 0.0),)  # prob 1
    assert parse_markup('<n translation="x" prob="0">a</n>').options[0].log_prob == LOWEST_LOG  # Moses' floor
    assert parse_markup('<n english="x">a</n>').options[0].target == ("x",)  # Moses' older name
    assert parse_markup("<n>a</n> b").options == ()  # no translation: nothing
    assert parse_markup('a <n translation="x"></n> b').options == ()  # no words: skipped, as Moses does
    assert parse_markup('a b <n translation="x" span="0-1"/>').options == (MarkupOption(0, 2, ("x",), 0.0),)
    assert parse_markup('<n translation="x">a<m translation="y">b</m></n>').options == (
        MarkupOption(1, 2, ("y",), 0.0),
        MarkupOption(0, 2, ("x",), 0.0),
    )
    assert parse_markup("3 < 4 > 2").words == ("3", "<", "4", ">", "2")  # not a tag: text
    assert parse_markup('a <n translation="x">b</n>c').words == ("a", "b", "c")  # a tag separates words


def test_walls_and_zones_where_moses_puts_them():
    assert parse_markup("a b <wall/> c").walls == (1,)  # after word 1
    assert parse_markup("<wall/> a b").walls == ()  # before the first word: nothing
    assert parse_markup("a b c <wall/>").walls == (2,)  # after the last: kept as Moses does, binding nothing
    assert parse_markup("a <wall>b c</wall> d").walls == (0, 1, 2)  # around and between its words
    assert parse_markup("a <zone>b c</zone> d").zones == ((1, 2),)  # first and last word
    assert parse_markup('a <zone><n translation="x">b</n> c</zone>').options == (MarkupOption(1, 2, ("x",), 0.0),)


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('a <np translation="x">b', "<np> is never closed"),
        ("a </np> b", "</np> closes no tag"),
        ('<np translation="x">a</n>', "<np> closed by </n>"),
        ("a <np translation=x>b</np>", "malformed attributes in <np>"),
        ('a <np translation="x>b</np>', "malformed attributes in <np>"),
        ('a <np translation="x" prob="high">b</np>', "prob 'high' is not a number"),
        ('a <np translation="x" prob="-1">b</np>', "is not a probability"),
        ('a <np translation="x||y" prob="0.5">b</np>', "2 translations but 1 probs"),
        ('a <np translation="x||">b</np>', "an empty translation"),
        ("a <zone></zone> b", "a zone must span at least one word"),
        ("a <np translation='x' b", "unclosed tag"),
        ('a <np translation="x" span="1-q"/> b', 'span must be "i-j" or "i"'),
        ('a <np translation="x" span="3"/> b', "a span (3-3) ends after the line's 2 words"),
        ('a <zone span="0-50"/> b', "a span (0-50) ends after the line's 2 words"),
        ('a <np translation="x" span="\u00b2"/> b', "(word positions from 0), not '\u00b2'"),
        ('a <np translation="x" span="1-0"/> b', 'span "1-0" ends before it starts'),
        ('a <np translation="x" span="1234567890"/> b', "not '1234567890'"),
        ('a <ne entity="x">b</ne>', "<ne> is a Moses tag pysmt does not offer"),
    ],
)
def test_a_malformed_tag_says_what_is_wrong(line, says):
    with pytest.raises(MarkupError, match=None) as raised:
        parse_markup(line)
    assert says in str(raised.value)
