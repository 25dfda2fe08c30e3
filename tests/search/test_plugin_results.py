"""A plugin cannot break the decoder: what it returns is checked where it enters the search.

Each mistake a feature can make (a NaN, a transposed array, a float state id, ...) ends within
seconds, in both engines and both searches, with the same one-line FeatureError naming the
feature, the method, what came, and the request; nothing comes out silently empty or scrambled. A
-inf score is a hard constraint, whatever the weight. And the search ends whatever a plugin
returns (a property test), with either translations of finite score or an error.
"""

from __future__ import annotations

import faulthandler
import math
import subprocess
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pysmt.errors import FeatureError, PysmtError
from pysmt.features.base import BatchedStatefulFeature, Feature, StatefulFeature
from pysmt.features.parameters import parameter
from pysmt.search.model import weighted_rows, weighted_sum
from pysmt.search.plugin_results import HUGE
from pysmt.testing import registered, toy_decoder

ENGINES = [("auto", "normal"), ("auto", "cube"), ("python", "normal"), ("python", "cube")]
#: How long a case may take before the test run is stopped with a traceback (a hang is a failure).
WATCHDOG_SECONDS = 300


@pytest.fixture(autouse=True)
def watchdog():
    """Stop the whole run, with every thread's traceback, if a search hangs (also inside the compiled core)."""
    faulthandler.dump_traceback_later(WATCHDOG_SECONDS, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


class OneScore:
    """A plugin with one score and a default weight (mixed into the test features)."""

    weight = 0.5

    @classmethod
    def from_config(cls, name, params, system):
        return cls(name, 1)

    def default_weights(self):
        return [self.weight]


class Phrases(OneScore, Feature):
    """A stateless plugin whose ``evaluate_in_isolation`` returns what ``returns(phrases)`` gives."""

    default_label = "Phrases"

    @staticmethod
    def returns(phrases):
        return np.zeros((len(phrases), 1)), None

    def evaluate_in_isolation(self, phrases):
        return type(self).returns(phrases)


class Sequences(BatchedStatefulFeature):
    """A stateful plugin (array interface): ``start`` gives ``initial``, ``score_batch`` what ``returns`` gives.

    Its state is the index of the option's last target word in ``WORDS`` (0: the sentence start).
    """

    default_label = "Sequences"
    initial = 0
    scores = 1

    @staticmethod
    def returns(feature, states, options, ends):
        return np.zeros((len(states), feature.num_scores)), feature.next_states(options)

    @classmethod
    def from_config(cls, name, params, system):
        return cls(name, cls.scores)

    def default_weights(self):
        return [0.5] * self.num_scores

    def start(self, sentence, options):
        self.options = options
        return type(self).initial

    def next_states(self, options):
        return np.array(
            [
                1 + "xyz".index(self.options[o].target[-1]) if self.options[o].target[-1] in "xyz" else 4
                for o in options.tolist()
            ],
            dtype=np.int64,
        )

    def score_batch(self, states, options, ends):
        return type(self).returns(self, states, options, ends)


def decoders(system, feature, **kwargs):
    """The decoder with ``feature`` added, for every engine and search."""
    return [toy_decoder(system, [feature], search=search, engine=engine, **kwargs) for engine, search in ENGINES]


def one_line_feature_error(decoder, line, *words):
    with pytest.raises(FeatureError) as caught:
        decoder.translate(line, nbest_size=10)
    message = str(caught.value)
    assert "\n" not in message
    for word in words:
        assert word in message, (word, message)
    return message


def nan_for(target):
    """Scores: nan for phrase pairs whose target is ``target``, 0 else."""
    return lambda phrases: (np.array([[math.nan if " ".join(p.target) == target else 0.0] for p in phrases]), None)


STATELESS_FAULTS = {
    "nan score": (nan_for("y"), ["evaluate_in_isolation returned nan as score 1 of 'a' -> 'y'", "finite, or -inf"]),
    "nan estimate": (lambda ps: (None, np.full((len(ps), 1), math.nan)), ["nan as estimate 1", "must be finite"]),
    "-inf estimate": (lambda ps: (None, np.full((len(ps), 1), -math.inf)), ["-inf as estimate 1"]),
    "+inf score": (lambda ps: (np.full((len(ps), 1), math.inf), None), ["inf as score 1"]),
    "all scores -inf": (
        lambda ps: (np.full((len(ps), 1), -math.inf), None),
        ["no translation is left: feature Phrases0 forbade", "evaluate_in_isolation scored them -inf"],
    ),
    "one array, not a pair": (
        lambda ps: np.zeros((len(ps), 1)),
        ["evaluate_in_isolation returned an array of shape", "a pair"],
    ),
    "transposed": (
        lambda ps: (np.zeros((1, len(ps))), None),
        ["scores as an array of shape (1, ", "expected a float array"],
    ),
    "flat": (lambda ps: (np.zeros(len(ps)), None), ["expected a float array of shape"]),
    "integers": (lambda ps: (np.zeros((len(ps), 1), dtype=np.int64), None), ["dtype int64"]),
    "a list": (lambda ps: ([[0.0]] * len(ps), None), ["scores as a list of"]),
}


def transposed(feature, states, options, ends):
    return np.zeros((feature.num_scores, len(states))), feature.next_states(options)


STATEFUL_FAULTS = {
    "nan score": (
        lambda f, s, o, e: (np.full((len(s), 1), math.nan), f.next_states(o)),
        ["score_batch returned nan as score 1 of option", "after state 0"],
    ),
    "+inf score": (lambda f, s, o, e: (np.full((len(s), 1), math.inf), f.next_states(o)), ["inf as score 1"]),
    "all scores -inf": (
        lambda f, s, o, e: (np.full((len(s), 1), -math.inf), f.next_states(o)),
        ["no translation is left: feature Sequences0 forbade", "score_batch scored them -inf"],
    ),
    "flat scores": (lambda f, s, o, e: (np.zeros(len(s)), f.next_states(o)), ["scores as an array of shape ("]),
    "integer scores": (lambda f, s, o, e: (np.zeros((len(s), 1), dtype=np.int32), f.next_states(o)), ["int32"]),
    "float state ids": (
        lambda f, s, o, e: (np.zeros((len(s), 1)), f.next_states(o).astype(float)),
        ["new state ids as an array of shape", "float64", "expected an integer array"],
    ),
    "too few state ids": (
        lambda f, s, o, e: (np.zeros((len(s), 1)), f.next_states(o)[:1]),
        ["new state ids as an array of shape (1,)"],
    ),
    "too many scores": (lambda f, s, o, e: (np.zeros((len(s) + 1, 1)), f.next_states(o)), ["expected a float array"]),
    "one array, not a pair": (lambda f, s, o, e: np.zeros((len(s), 1)), ["expected a pair (scores, new state ids)"]),
}


FAULTY = {"phrases": (Phrases, STATELESS_FAULTS), "sequences": (Sequences, STATEFUL_FAULTS)}


@pytest.mark.parametrize("feature, case", [(f, case) for f, (_, faults) in FAULTY.items() for case in faults])
def test_a_plugins_bad_result_is_one_line_naming_it(tiny_system, monkeypatch, feature, case):
    cls, faults = FAULTY[feature]
    returns, words = faults[case]
    monkeypatch.setattr(cls, "returns", staticmethod(returns))
    with registered(**{feature: cls}):
        messages = [
            one_line_feature_error(decoder, "c a b", "input line 1: ", f"{cls.__name__}0", *words)
            for decoder in decoders(tiny_system, feature)
        ]
    # compiled = Python reference; a stateless feature is called before the search, so both searches agree too
    assert messages[0] == messages[2] and messages[1] == messages[3]
    assert feature != "phrases" or len(set(messages)) == 1


def test_transposed_scores_of_a_two_score_feature_are_refused_not_scrambled(tiny_system, monkeypatch):
    monkeypatch.setattr(Sequences, "scores", 2)
    monkeypatch.setattr(Sequences, "returns", staticmethod(transposed))
    with registered(sequences=Sequences):
        for decoder in decoders(tiny_system, "sequences"):
            one_line_feature_error(
                decoder,
                "a b c",
                "Sequences0: score_batch returned scores as an array of shape (2, ",
                "expected a float array of shape (",
            )


@pytest.mark.parametrize("initial", [None, 0.0, "0", True])
def test_start_must_give_an_integer_state_id(tiny_system, monkeypatch, initial):
    monkeypatch.setattr(Sequences, "initial", initial)
    with registered(sequences=Sequences):
        for decoder in decoders(tiny_system, "sequences"):
            one_line_feature_error(
                decoder, "a b", "Sequences0: start returned", "expected the empty hypothesis' state id"
            )


class LastWord(OneScore, StatefulFeature):
    """A plain stateful plugin (``extend``); its ``extend`` returns ``step(state, option)``."""

    default_label = "LastWord"

    @staticmethod
    def step(state, option):
        return (0.0,), option.target[-1]

    def initial_state(self, sentence):
        return None

    def extend(self, state, option):
        return type(self).step(state, option)


@pytest.mark.parametrize(
    "step, words",
    [
        (
            lambda state, option: ((math.nan,), None),
            ["extend/final (through StatefulFeature.score_batch) returned nan"],
        ),
        (lambda state, option: (0.0, None), ["extend returned scores 0.0, expected 1 number(s)"]),
        (lambda state, option: ((0.0, 1.0), None), ["extend returned scores (0.0, 1.0)"]),
        (lambda state, option: ((0.0,), [option.target]), ["extend returned a state of type list", "hashable"]),
        (lambda state, option: (0.0,), ["extend returned a tuple, expected a pair (scores, new state)"]),
    ],
)
def test_a_plain_stateful_plugins_bad_extend_is_one_line_naming_it(tiny_system, monkeypatch, step, words):
    monkeypatch.setattr(LastWord, "step", staticmethod(step))
    with registered(last_word=LastWord):
        for decoder in decoders(tiny_system, "last-word"):
            one_line_feature_error(decoder, "a b", "input line 1: ", "LastWord0", *words)


def forbid_y_stateless(phrases):
    return np.array([[-math.inf if "y" in p.target else 0.0] for p in phrases]), None


def forbid_y_stateful(feature, states, options, ends):
    scores = [[-math.inf if "y" in feature.options[o].target else 0.0] for o in options.tolist()]
    return np.array(scores), feature.next_states(options)


@pytest.mark.parametrize("weight", [0.5, 0.0, -2.0])
@pytest.mark.parametrize("kind", ["stateless", "stateful"])
def test_minus_infinity_forbids_a_translation_whatever_the_weight(tiny_system, monkeypatch, weight, kind):
    monkeypatch.setattr(Phrases, "returns", staticmethod(forbid_y_stateless))
    monkeypatch.setattr(Sequences, "returns", staticmethod(forbid_y_stateful))
    feature, name = ("phrases", "Phrases0") if kind == "stateless" else ("sequences", "Sequences0")
    with registered(phrases=Phrases, sequences=Sequences):
        lists = []
        for decoder in decoders(tiny_system, feature, weights={name: [weight]}):
            nbest = decoder.translate("a b c", nbest_size=50).hypotheses
            assert nbest and all("y" not in c.words and math.isfinite(c.total) for c in nbest)
            totals = [c.total for c in nbest]  # sorted by the search's sums, which may differ in the last bit
            assert all(a >= b - 1e-9 * abs(b) for a, b in zip(totals, totals[1:]))
            lists.append([(c.words, c.total) for c in nbest])
        assert lists[0] == lists[1] and lists[2] == lists[3]
        assert [w for w, _ in lists[0]] == [w for w, _ in lists[2]]  # compiled = Python reference
        with pytest.raises(FeatureError, match=f"input line 1: no translation is left: feature {name} forbade"):
            decoder.translate("b")  # 'b' has only translations with y


# -- the search always ends, whatever a plugin returns ---------------------------------------------


def test_weighted_scores_do_not_depend_on_what_else_is_in_the_batch():
    """Isolation scores are added column by column from the left, as weighted_sum and the compiled core add:
    the same bits for a pair alone or among others (a BLAS product's order depends on both)."""
    rng = np.random.default_rng(1)
    scores = rng.normal(size=(101, 17)) * rng.choice([1e-3, 1.0, 30.0], size=(101, 17))
    estimates = rng.normal(size=(101, 17))
    weights = rng.normal(size=17)
    isolation, future = weighted_rows(scores, estimates, weights)
    for k in range(len(scores)):
        alone, alone_future = weighted_rows(scores[k : k + 1], estimates[k : k + 1], weights)
        assert alone[0] == isolation[k] and alone_future[0] == future[k]
        assert isolation[k] == weighted_sum(weights.tolist(), scores[k].tolist())


ODD_VALUES = [math.nan, math.inf, -math.inf, 1e308, -1e308, 1e300, 0.0, 0.0, 1.0, -2.5, 5e-324]


class Odd(OneScore, Feature):
    """Stateless: each pair's score and estimate picked from ``values`` by a hash of the pair."""

    default_label = "Odd"
    values = [0.0]
    weight = 1.0

    def evaluate_in_isolation(self, phrases):
        picks = [zlib.crc32(f"{p.source}|{' '.join(p.target)}".encode()) for p in phrases]
        values = type(self).values
        scores = np.array([[values[k % len(values)]] for k in picks])
        return scores, np.array([[values[(k // 7) % len(values)]] for k in picks])


class OddLM(Sequences):
    """Stateful: each request's score picked from ``values`` by its (state, option, end)."""

    default_label = "OddLM"
    values = [0.0]

    def score_batch(self, states, options, ends):
        values = type(self).values
        scores = [
            [values[(31 * s + 7 * o + e) % len(values)]]
            for s, o, e in zip(states.tolist(), options.tolist(), ends.tolist())
        ]
        return np.array(scores, dtype=np.float64), self.next_states(options)


@pytest.fixture(scope="module")
def odd_decoders(tmp_path_factory):
    """Decoders of the toy system with both odd plugins, for every engine and search (built once)."""
    from pysmt.testing import write_toy_system

    system = write_toy_system(tmp_path_factory.mktemp("odd"))
    with registered(odd=Odd, odd_lm=OddLM):
        return [toy_decoder(system, ["odd", "odd-lm"], search=search, engine=engine) for engine, search in ENGINES]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(ODD_VALUES), min_size=1, max_size=6),
    st.lists(st.sampled_from(ODD_VALUES), min_size=1, max_size=6),
    st.sampled_from(["a b c a", "c b a b c", "a q b"]),
)
def test_the_search_ends_with_translations_or_an_error_whatever_plugins_return(odd_decoders, stateless, stateful, line):
    Odd.values, OddLM.values = stateless, stateful
    outcomes = []
    for decoder in odd_decoders:
        decoder.forget_options()  # the pairs' scores change with the values
        try:
            nbest = decoder.translate(line, nbest_size=8).hypotheses
        except FeatureError as err:
            assert "\n" not in str(err) and (
                "Odd0" in str(err) or "OddLM0" in str(err) or "no translation with a finite model score" in str(err)
            )
            outcomes.append(str(err))
            continue
        assert nbest and all(math.isfinite(c.total) for c in nbest)
        totals = [c.total for c in nbest]  # sorted by the search's sums, which may differ in the last bit...
        if all(abs(v) < HUGE for v in stateless + stateful if math.isfinite(v)):  # ...or more, where sums of
            assert all(a >= b - 1e-9 * abs(b) for a, b in zip(totals, totals[1:]))  # 1e308s cancel out
        outcomes.append(nbest[0].words)
    assert outcomes[0] == outcomes[2] and outcomes[1] == outcomes[3]  # compiled = Python reference


REST = "Distortion0= 0 LexicalReordering0= 0 WordPenalty0= 0 UnknownWordPenalty0= 0 PhraseDictionaryMemory0= 0"


def test_rescoring_checks_a_plugins_scores_and_drops_what_it_forbids(tiny_system, monkeypatch, tmp_path):
    from pysmt.config_files import configure_system
    from pysmt.rescoring import rescore

    nbest = tmp_path / "nbest.txt"  # (the system's other features: an n-best list must have them all)
    nbest.write_text(
        f"0 ||| x y z ||| KENLM0= -1 {REST} ||| -1\n0 ||| x z ||| KENLM0= -2 {REST} ||| -2\n"
        f"1 ||| y ||| KENLM0= -3 {REST} ||| -3\n"
    )
    monkeypatch.setattr(Sequences, "returns", staticmethod(forbid_y_stateful))
    with registered(sequences=Sequences):
        config = configure_system(tiny_system, ["sequences"])
        with pytest.raises(FeatureError, match=f"{nbest}, sentence 1: every entry is forbidden .* Sequences0"):
            rescore(config, ["sequences"], nbest, tmp_path / "out.txt")
        nbest.write_text(f"0 ||| x y z ||| KENLM0= -1 {REST} ||| -1\n0 ||| x z ||| KENLM0= -2 {REST} ||| -2\n")
        assert rescore(config, ["sequences"], nbest, tmp_path / "out.txt") == 1
        assert (tmp_path / "out.txt").read_text() == f"0 ||| x z ||| KENLM0= -2 {REST} Sequences0= 0 ||| -2\n"
        monkeypatch.setattr(Sequences, "returns", STATEFUL_FAULTS["nan score"][0])
        with pytest.raises(FeatureError, match=f"{nbest}, sentence 0: feature Sequences0: score_batch returned nan"):
            rescore(config, ["sequences"], nbest, tmp_path / "out2.txt")


# -- errors before loading -----------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ListParameters:
    sizes: list = parameter(None)


@dataclass(frozen=True, kw_only=True)
class AbsoluteDefault:
    model: Path = parameter(Path("/models/m"))


def evaluate(self, phrases):
    return None, None


@pytest.mark.parametrize(
    "declarations, words",
    [
        ({"parameters": {"model": Path}}, "declares its parameters as a dict of kinds; declare them as a dataclass"),
        ({"parameters": 3}, "parameters is 3, not a dataclass"),
        ({"parameters": ListParameters}, "parameter 'sizes' has kind"),
        ({"parameters": AbsoluteDefault}, "parameter 'model': a Path default is relative to the system's folder"),
        ({"default_paths": {"model": "m"}}, "declares default_paths: use a Path field's default"),
        ({"required_parameters": ("model",)}, "declares required_parameters: use a field without a default"),
        ({"context_free": False}, "declares context_free: use the hook it implements"),
        ({"evaluate": evaluate}, "declares evaluate: use evaluate_in_isolation"),
        ({"evaluate_with_source_context": evaluate}, "implements both evaluate_in_isolation and evaluate_with_source"),
    ],
)
def test_old_and_inconsistent_declarations_are_refused_when_the_feature_is_registered(tiny_system, declarations, words):
    broken = type("Broken", (Phrases,), declarations)
    with registered(broken=broken), pytest.raises(PysmtError, match=f"^feature 'broken' .*{words}"):
        toy_decoder(tiny_system, ["broken"])


# -- the command line ------------------------------------------------------------------------------

FAULTY_COMMAND = """
import sys
import numpy as np
from pysmt.cli import main
from pysmt.features.base import Feature
from pysmt.testing import registered

class NanForC(Feature):
    default_label = "NanForC"
    @classmethod
    def from_config(cls, name, params, system):
        return cls(name, 1)
    def default_weights(self):
        return [1.0]
    def evaluate_in_isolation(self, phrases):
        return np.array([[float("nan") if "c" in p.source.split() else 0.0] for p in phrases]), None

with registered(nan_for_c=NanForC):
    main(sys.argv[1:])
"""


@pytest.mark.parametrize("threads", ["1", "2"])
def test_decode_stops_at_the_line_a_plugin_fails_on_with_one_line(tiny_system, tmp_path, threads):
    source = tmp_path / "in.txt"
    source.write_text("a b\nb c\na\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            FAULTY_COMMAND,
            "decode",
            "-c",
            str(tiny_system),
            "-i",
            str(source),
            "--features",
            "nan-for-c",
            "--threads",
            threads,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("Error")]
    assert errors == [
        "Error: input line 2: feature NanForC0: evaluate_in_isolation returned nan as score 1 of "
        "'b c' -> 'z x' (scores must be finite, or -inf to forbid a translation)"
    ]
    assert proc.stdout == "x y\n"  # what came before the failing line
