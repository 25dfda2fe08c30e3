"""A plugin's compiled scorer (``pysmt/compiled_scorer.h``) as the search calls it: the bigram bonus of
the test plugins written against the C interface (here through ctypes, as a C or C++ plugin would
fill the same struct), giving what its Python array interface gives; and its faults (an unusable
score, a negative state id, a failure with its message, another interface version) reported as one
line naming the feature.
"""

from __future__ import annotations

import ctypes
import math

import pytest

from pysmt.config_files import load_config
from pysmt.decoder import Decoder
from pysmt.errors import FeatureError
from tests.helpers import BigramBonus

VERSION = 1
CAPSULE = b"pysmt.compiled_scorer"
WORD = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_size_t))


class Options(ctypes.Structure):
    _fields_ = [
        ("count", ctypes.c_int32),
        ("offsets", ctypes.POINTER(ctypes.c_int64)),
        ("words", ctypes.POINTER(ctypes.c_int32)),
        ("word", WORD),
        ("vocabulary", ctypes.c_void_p),
    ]


START = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(Options), ctypes.POINTER(ctypes.c_int64))
SCORE = ctypes.CFUNCTYPE(
    ctypes.c_int,
    ctypes.c_void_p,
    ctypes.c_size_t,
    ctypes.POINTER(ctypes.c_int64),
    ctypes.POINTER(ctypes.c_int32),
    ctypes.POINTER(ctypes.c_uint8),
    ctypes.POINTER(ctypes.c_double),
    ctypes.POINTER(ctypes.c_int64),
)
ERROR = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)


class Scorer(ctypes.Structure):
    _fields_ = [
        ("version", ctypes.c_uint32),
        ("num_scores", ctypes.c_int32),
        ("self", ctypes.c_void_p),
        ("start", START),
        ("score", SCORE),
        ("error", ERROR),
    ]


class CompiledBigramBonus(BigramBonus):
    """BigramBonus (tests/helpers.py) with a compiled scorer: its start and score functions read the
    options' words through the interface's vocabulary accessor and number their own states."""

    fault = ""  # "nan", "state", "fail" or "version": what the scorer does wrong

    def __init__(self, name, num_scores):
        super().__init__(name, num_scores)
        self.calls = 0
        self.message = ctypes.create_string_buffer(b"the bigrams ran out")
        self.struct = Scorer(
            VERSION + (self.fault == "version"),
            1,
            None,
            START(self.c_start),
            SCORE(self.c_score),
            ERROR(lambda _: ctypes.addressof(self.message)),
        )
        new_capsule = ctypes.pythonapi.PyCapsule_New
        new_capsule.restype = ctypes.py_object
        new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        self.capsule = new_capsule(ctypes.addressof(self.struct), CAPSULE, None)

    def compiled_scorer(self):
        return self.capsule

    def c_start(self, _self, options, initial):
        o = options.contents
        length = ctypes.c_size_t()

        def word(number: int) -> str:
            address = o.word(o.vocabulary, number, ctypes.byref(length))
            return ctypes.string_at(address, length.value).decode()

        self.targets = [tuple(word(o.words[w]) for w in range(o.offsets[k], o.offsets[k + 1])) for k in range(o.count)]
        self.words, self.ids = ["<s>"], {"<s>": 0}
        initial[0] = 0
        return -1 if self.fault == "fail" else 0

    def c_score(self, _self, count, states, options, ends, scores, new_states):
        self.calls += 1
        for k in range(count):
            (bonus,), word = self.score(self.words[states[k]], self.targets[options[k]])
            scores[k] = math.nan if self.fault == "nan" else bonus + (self.final(word)[0] if ends[k] else 0.0)
            new_states[k] = -3 if self.fault == "state" else self.ids.setdefault(word, len(self.words))
            if new_states[k] == len(self.words):
                self.words.append(word)
        return 0


@pytest.fixture
def compiled_registry(fake_registry):
    from pysmt.testing import registered

    with registered(compiled_bigram=CompiledBigramBonus):
        yield


def nbest(decoder: Decoder, line: str) -> list:
    return [(c.words, c.scores.tolist(), c.total) for c in decoder.translate(line, nbest_size=20).hypotheses]


@pytest.mark.parametrize("search", ["normal", "cube"])
def test_a_compiled_scorer_gives_what_the_array_interface_gives(tiny_system, compiled_registry, search):
    config = load_config(tiny_system)
    compiled = Decoder(config, ["compiled-bigram"], algorithm=search, missing_weight=0.6)
    python = Decoder(config, ["batched-bigram"], algorithm=search, missing_weight=0.6)
    reference = Decoder(config, ["compiled-bigram"], algorithm=search, missing_weight=0.6, engine="python")
    assert compiled.compiled_options is not None and not compiled.compiled_options.objects  # no options as objects
    for line in ["a b c", "c b a q a", "a a b c c b"]:
        assert nbest(compiled, line) == nbest(python, line) == nbest(reference, line)
    assert compiled.features[-1].calls > 0


@pytest.mark.parametrize(
    "fault, says",
    [
        ("nan", "feature Bigram0: its compiled scorer returned nan as score 1 of request 1"),
        ("state", "feature Bigram0: its compiled scorer returned state id -3"),
        ("fail", "feature Bigram0: its compiled scorer failed to start a sentence: the bigrams ran out"),
    ],
)
def test_a_compiled_scorers_faults_name_the_feature(tiny_system, compiled_registry, fault, says, monkeypatch):
    monkeypatch.setattr(CompiledBigramBonus, "fault", fault)
    decoder = Decoder(load_config(tiny_system), ["compiled-bigram"], missing_weight=0.6)
    with pytest.raises(FeatureError) as raised:
        decoder.translate("a b c")
    assert says in str(raised.value) and "\n" not in str(raised.value)


def test_a_compiled_scorer_of_another_interface_version_is_refused(tiny_system, compiled_registry, monkeypatch):
    monkeypatch.setattr(CompiledBigramBonus, "fault", "version")
    with pytest.raises(ValueError, match="compiled scorer is not of this pysmt's version"):
        Decoder(load_config(tiny_system), ["compiled-bigram"], missing_weight=0.6)
