"""The decoder's rescoring pass (issue 51): features of complete translations (``TranslationFeature``) take no part in
the search, then re-rank each line's distinct translations by the rescoring totals. The toy feature is
``pysmt.testing.TargetWordsFeature`` (a translation's count of the words ``y``), whose effect on the toy system's
lists is worked out by hand: with weight 2, "y y z" (search total -1.288991, two y) overtakes "x y z" (0.588356,
one y) for "a b c", and "z y y" (-2.662415) overtakes "z y x" (-2.190148) for "c b a"."""

from __future__ import annotations

import pickle
from dataclasses import replace

import numpy as np
import pytest

from pysmt.config import FeatureSpec
from pysmt.config_files import load_config, write_toml
from pysmt.decoder import Decoder
from pysmt.decoding.mbr import MbrSettings
from pysmt.decoding.runner import translate_line
from pysmt.errors import FeatureError, PysmtError
from pysmt.features.base import StatefulFeature, TranslationFeature
from pysmt.testing import (
    TargetWordsFeature,
    one_line_error,
    registered,
    registered_for_commands,
    run_pysmt,
    toy_decoder,
    write_toy_system,
)

#: The toy system's distinct translations of "a b c" and their search totals, best first (pysmt.testing's scores).
ABC = [
    ("x y z", 0.588356),
    ("y y z", -1.288991),
    ("y z x", -1.699171),
    ("x z x", -1.840669),
    ("z x y", -3.071865),
    ("y z y", -3.582719),
    ("z x x", -3.90127),
    ("x z y", -4.169688),
    ("y x z", -4.610689),
    ("z y y", -4.954132),
    ("z y x", -5.613642),
]


@pytest.fixture
def toy(tmp_path):
    """The toy system and the feature registered in this process."""
    with registered(target_words=TargetWordsFeature):
        yield write_toy_system(tmp_path / "system")


def decoder_of(system, weight: float = 2.0, **kwargs) -> Decoder:
    return toy_decoder(system, ["target-words"], weights={"TargetWords0": [weight]}, **kwargs)


def listed(translation) -> list[tuple[str, float]]:
    return [(" ".join(c.words), round(c.total, 6)) for c in translation.hypotheses]


@pytest.mark.parametrize("engine", ["auto", "python"])
@pytest.mark.parametrize("search", ["normal", "cube"])
def test_the_rescoring_pass_re_ranks_the_search_s_distinct_list(toy, engine, search):
    plain = toy_decoder(toy, engine=engine, search=search)
    searched = plain.translate("a b c", 0, nbest_size=100, distinct=True)
    assert listed(searched) == ABC  # what the search gives, without the feature: it takes no part in the search
    decoder = decoder_of(toy, engine=engine, search=search)
    assert [name for name, _, _ in decoder.nbest_labels()][-1] == "TargetWords0"
    assert [type(f) for f in decoder.model.features] == [type(f) for f in plain.features]
    translation = decoder.translate("a b c", 0, nbest_size=3)
    assert listed(translation) == [("y y z", 2.711009), ("x y z", 2.588356), ("y z y", 0.417281)]
    assert translation.best == "y y z"
    # each candidate's vector: the search's scores, then the feature's column; its total the weighted sum
    by_words = {" ".join(c.words): c for c in searched.hypotheses}
    for candidate in translation.hypotheses:
        before = by_words[" ".join(candidate.words)]
        assert candidate.scores[:-1].tolist() == before.scores.tolist()
        assert candidate.scores[-1] == candidate.words.count("y")
        assert candidate.total == pytest.approx(before.total + 2.0 * candidate.words.count("y"), abs=1e-12)
        assert candidate.alignment == before.alignment and candidate.phrases == before.phrases
    # one call a line, with the sentence and every distinct translation the search gave, best first
    (feature,) = [f for f in decoder.features if isinstance(f, TargetWordsFeature)]
    assert feature.calls == [(("a", "b", "c"), 0, [tuple(words.split()) for words, _ in ABC])]


def test_rescore_size_is_how_many_translations_the_pass_sees(toy):
    decoder = decoder_of(toy)
    decoder.search = replace(decoder.search, rescore_size=2)
    assert listed(decoder.translate("a b c", 4, nbest_size=2)) == [("y y z", 2.711009), ("x y z", 2.588356)]
    assert decoder.features[-1].calls[-1][1:] == (4, [("x", "y", "z"), ("y", "y", "z")])  # type: ignore[attr-defined]
    decoder.search = replace(decoder.search, rescore_size=1)  # only the search's best: nothing to re-rank
    assert listed(decoder.translate("a b c")) == [("x y z", 2.588356)]
    decoder.search = replace(decoder.search, rescore_size=1)  # a longer n-best list asked: that many re-ranked
    assert listed(decoder.translate("a b c", nbest_size=2))[0] == ("y y z", 2.711009)
    decoder.search = replace(decoder.search, rescore_size=100)
    assert decoder.translate("c b a").best == "z y y"  # -2.662415 + 4 against z y x's -2.190148 + 2


def test_a_non_distinct_nbest_list_is_distinct_with_the_pass(toy):
    plain = toy_decoder(toy).translate("a b c", nbest_size=12)
    words = [" ".join(c.words) for c in plain.hypotheses]
    assert len(set(words)) < len(words)  # the search's list repeats strings (other segmentations)
    rescored = decoder_of(toy).translate("a b c", nbest_size=12)
    assert len(rescored.hypotheses) == 11 and len({tuple(c.words) for c in rescored.hypotheses}) == 11


def test_a_system_without_translation_features_is_unchanged(toy):
    decoder = toy_decoder(toy)
    assert decoder.rescorers == [] and decoder.model.features == decoder.features
    assert decoder.nbest_labels() == [
        (f.name, decoder.model.offsets[k], decoder.model.offsets[k + 1]) for k, f in enumerate(decoder.features)
    ]
    assert listed(decoder.translate("a b c", nbest_size=100, distinct=True)) == ABC


def test_a_forbidden_translation_is_dropped(toy):
    decoder = toy_decoder(toy, ["target-words"], params=["target-words.forbid=y"])
    translation = decoder.translate("a b c", nbest_size=3)
    assert listed(translation) == [("x z x", -1.840669), ("z x x", -3.90127)]  # the two without y, as searched
    assert [c.scores[-1] for c in translation.hypotheses] == [0.0, 0.0]


def test_every_translation_forbidden_is_an_error_naming_the_line_and_feature(toy):
    decoder = toy_decoder(toy, ["target-words"], params=["target-words.forbid=x y z"])
    with pytest.raises(FeatureError) as caught:
        decoder.translate("a b c", 6)
    assert str(caught.value) == (
        "input line 7: no translation is left: feature TargetWords0 forbade all 11 translations the search gave "
        "(score_translations scored them -inf)"
    )


class Returns(TranslationFeature):
    """Returns what ``answer(n)`` makes of ``n`` translations."""

    default_label = "Returns"
    answer = staticmethod(lambda n: np.zeros((n, 1)))

    @classmethod
    def from_config(cls, name, params, system):
        return cls(name, 1)

    def default_weights(self):
        return [1.0]

    def score_translations(self, sentence, translations):
        return self.answer(len(translations))


def nan_first(n):
    scores = np.zeros((n, 1))
    scores[0, 0] = np.nan
    return scores


@pytest.mark.parametrize(
    "answer, message",
    [
        (
            nan_first,
            "input line 2: feature Returns0: score_translations returned nan as score 1 of translation 'x y z' "
            "(scores must be finite, or -inf to forbid a translation)",
        ),
        (
            lambda n: np.full((n, 1), np.inf),
            "input line 2: feature Returns0: score_translations returned inf as score 1 of translation 'x y z' "
            "(scores must be finite, or -inf to forbid a translation)",
        ),
        (
            lambda n: np.zeros((n, 2)),
            "input line 2: feature Returns0: score_translations returned scores as an array of shape (11, 2) and "
            "dtype float64, expected a float array of shape (11, 1) (11 requests x 1 scores), for translation "
            "'x y z' and 10 more",
        ),
        (
            lambda n: [[0.0]] * n,
            "input line 2: feature Returns0: score_translations returned scores as a list of 11, expected a float "
            "array of shape (11, 1) (11 requests x 1 scores), for translation 'x y z' and 10 more",
        ),
    ],
)
def test_an_unusable_result_is_an_error_naming_the_feature(tmp_path, answer, message):
    system = write_toy_system(tmp_path / "system")
    with registered(returns=type("Bad", (Returns,), {"answer": staticmethod(answer)})):
        decoder = toy_decoder(system, ["returns"])
        with pytest.raises(FeatureError) as caught:
            decoder.translate("a b c", 1)
    assert str(caught.value) == message


def test_huge_scores_that_overflow_the_total_are_an_error(tmp_path):
    system = write_toy_system(tmp_path / "system")
    with registered(returns=type("Huge", (Returns,), {"answer": staticmethod(lambda n: np.full((n, 1), 1e308))})):
        decoder = toy_decoder(system, ["returns"], weights={"Returns0": [10.0]})
        with pytest.raises(FeatureError) as caught:
            decoder.translate("a b c")
    assert str(caught.value) == (
        "input line 1: no translation with a finite rescoring total: the scores of feature Returns0 (1e+308) are too "
        "large to add up"
    )


def test_set_weights_sets_the_rescorers_weights_and_the_rescoring_weights(toy):
    decoder = decoder_of(toy)
    weights = decoder.weights
    assert weights[-1] == [2.0] and decoder.rescoring_weights == weights
    weights[-1] = [0.0]
    decoder.set_weights(weights)  # the tuner's call: the rescoring pass totals with what it set
    assert decoder.rescoring_weights == weights and decoder.translate("a b c").best == "x y z"
    rescoring = [list(w) for w in weights]
    rescoring[-1] = [3.0]
    decoder.set_weights(weights, rescoring)
    assert decoder.weights == weights and decoder.rescoring_weights == rescoring
    assert listed(decoder.translate("a b c")) == [("y y z", round(-1.288991 + 6, 6))]
    again = pickle.loads(pickle.dumps(decoder))  # a spawned worker's decoder: both sets travel
    assert again.weights == weights and again.rescoring_weights == rescoring
    assert again.translate("c b a").best == "z y y"


def toml_system(toy, tmp_path, **rescoring: list[float]):
    """The toy system as pysmt.toml with the feature (weight 0), and ``rescoring-weights`` of the features named."""
    config = load_config(toy)
    specs = [*config.features, FeatureSpec("target-words", "TargetWords0", {}, [0.0])]
    path = tmp_path / "pysmt.toml"
    write_toml(replace(config, features=[replace(s, rescoring_weights=rescoring.get(s.name)) for s in specs]), path)
    return path


def test_rescoring_weights_from_the_config_total_the_pass_and_stay_when_the_tuner_sets_weights(toy, tmp_path):
    path = toml_system(toy, tmp_path, TargetWords0=[2.0])
    assert "rescoring-weights = [\n    2.0,\n]" in path.read_text()
    decoder = Decoder(load_config(path))
    assert decoder.weights[-1] == [0.0] and decoder.rescoring_weights[-1] == [2.0]
    assert listed(decoder.translate("a b c", nbest_size=2)) == [("y y z", 2.711009), ("x y z", 2.588356)]
    decoder.set_weights(decoder.weights)  # the config's own rescoring weights stay in force
    assert decoder.rescoring_weights[-1] == [2.0] and decoder.translate("a b c").best == "y y z"
    # a search feature's rescoring weights count in the totals too: WordPenalty0 (score -3) at 0, not -1, takes 3 off
    path = toml_system(toy, tmp_path, TargetWords0=[2.0], WordPenalty0=[0.0])
    assert listed(Decoder(load_config(path)).translate("a b c")) == [("y y z", round(-1.288991 + 4 - 3, 6))]


def test_rescoring_weights_of_the_wrong_count_are_refused(toy, tmp_path):
    path = toml_system(toy, tmp_path, TargetWords0=[2.0, 1.0])
    with pytest.raises(PysmtError, match=r"pysmt.toml: feature TargetWords0 has 1 scores but 2 rescoring-weights$"):
        Decoder(load_config(path))


def test_mbr_chooses_among_the_rescored_list(toy):
    sharp = MbrSettings(size=200, scale=100.0)  # the posterior all but on the best total: MBR picks it
    assert translate_line(toy_decoder(toy), 0, "a b c", 1, False, False, sharp).best == "x y z"
    translation = translate_line(decoder_of(toy), 0, "a b c", 1, False, False, sharp)
    assert translation.best == "y y z" and translation.chosen == 0


class Stateful(TranslationFeature, StatefulFeature):
    pass


class InIsolation(TranslationFeature):
    def score_translations(self, sentence, translations):
        return np.zeros((len(translations), 1))

    def evaluate_in_isolation(self, pairs):
        return None, None


class Nothing(TranslationFeature):
    pass


@pytest.mark.parametrize(
    "cls, words",
    [
        (Stateful, "is a TranslationFeature and a StatefulFeature"),
        (InIsolation, "is a TranslationFeature and implements evaluate_in_isolation"),
        (Nothing, "is a TranslationFeature without score_translations"),
    ],
)
def test_the_registry_knows_a_translation_feature_before_loading_it(tmp_path, cls, words):
    system = write_toy_system(tmp_path / "system")
    with registered(odd=cls), pytest.raises(PysmtError, match=words):
        toy_decoder(system, ["odd"])


def test_rescore_size_below_one_is_refused(toy, tmp_path):
    path = toml_system(toy, tmp_path, TargetWords0=[2.0])
    path.write_text(path.read_text().replace("rescore-size = 100", "rescore-size = 0"))
    with pytest.raises(PysmtError, match=r"\[search\] rescore-size must be positive, not 0"):
        load_config(path)
    proc = run_pysmt("decode", "-c", toy, "--rescore-size", "0", input="a\n")
    one_line_error(proc, "--rescore-size must be positive, not 0", status=2)


@pytest.fixture
def command_system(tmp_path):
    """The toy moses.ini with the feature at weight 2, and the environment in which commands find it."""
    system = write_toy_system(tmp_path / "system", features=["target-words"], weights={"TargetWords0": "2"})
    return system, registered_for_commands(tmp_path / "plugins", target_words=TargetWordsFeature)


def test_decode_writes_the_rescored_translations_and_the_feature_s_column(command_system, tmp_path):
    system, env = command_system
    nbest = tmp_path / "nbest.txt"
    proc = run_pysmt(
        "decode", "-c", system, "-q", "--nbest", nbest, "--nbest-size", "2", input="a b c\nc b a\n", env=env
    )
    assert (proc.returncode, proc.stdout) == (0, "y y z\nz y y\n"), proc.stderr
    assert nbest.read_text() == (
        "0 ||| y y z ||| KENLM0= -5.641334 Distortion0= 0 LexicalReordering0= -1.139434 0 0 -0.693147 0 0 "
        "WordPenalty0= -3 UnknownWordPenalty0= 0 PhraseDictionaryMemory0= -2.184802 -2.407946 TargetWords0= 2 "
        "||| 2.711009\n"
        "0 ||| x y z ||| KENLM0= -2.647973 Distortion0= 0 LexicalReordering0= -0.916291 0 0 -0.693147 0 0 "
        "WordPenalty0= -3 UnknownWordPenalty0= 0 PhraseDictionaryMemory0= -1.309333 -1.714798 TargetWords0= 1 "
        "||| 2.588356\n"
        "1 ||| z y y ||| KENLM0= -8.174177 Distortion0= 0 LexicalReordering0= -1.139434 0 0 -1.049822 0 0 "
        "WordPenalty0= -3 UnknownWordPenalty0= 0 PhraseDictionaryMemory0= -2.184802 -2.407946 TargetWords0= 2 "
        "||| 1.337585\n"
        "1 ||| y y z ||| KENLM0= -5.641334 Distortion0= -4 LexicalReordering0= 0 0 -3.912023 -0.693147 0 0 "
        "WordPenalty0= -3 UnknownWordPenalty0= 0 PhraseDictionaryMemory0= -2.184802 -2.407946 TargetWords0= 2 "
        "||| 0.679233\n"
    )
    proc = run_pysmt("decode", "-c", system, "-q", "--rescore-size", "1", input="a b c\nc b a\n", env=env)
    assert (proc.returncode, proc.stdout) == (0, "x y z\nz y x\n"), proc.stderr
