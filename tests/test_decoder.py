"""The decoder (pysmt/decoder.py). Integration: the Moses regression-test system decodes to Moses' own
translations and model scores. A missing model is reported before the others load; warmed caches
change no translation."""

import numpy as np
import pytest

from pysmt.config_files import load_config
from pysmt.decoder import Decoder
from pysmt.features.base import Feature
from pysmt.files.formats import nbest_line
from pysmt.testing import one_line_error, registered, run_pysmt, toy_decoder

# moses-regression-tests, tests/phrase.lexicalized-reordering/truth/results.txt (Moses, normal search).
MOSES_TRANSLATIONS = [
    "mr president , what we devrons but also to to biarritz , this is regarder a little more loin .",
    "the élus that we are have the with difference the us of the encourager to progresser , in dépit of the "
    "adversité , that of relayer the messages that we recevons of the opinion all in each of our countries .",
    "the prerequisites for the événements of these derniers time , the issue of the sufficiently of the essence "
    "to it also in remarquable .",
    "in the , the council , it is train of examiner the inclusion of such mécanismes in article 7 .",
    "secondly , in the transparency for the citizens , which are now the droits which they disposent vis-à-vis "
    "of those appliquent and élaborent the european law and , to those , precisely appliquent and élaborent "
    "this european law .",
]
MOSES_SCORES = [-883.502, -1994.346, -898.780, -894.141, -1568.085]


@pytest.fixture(scope="module")
def fixture_dir(shared_data):
    return shared_data("fixtures", "moses", "lexicalized-reordering")


@pytest.fixture(scope="module")
def decoder(fixture_dir):
    return Decoder(load_config(fixture_dir / "moses.ini"))


@pytest.fixture(scope="module")
def sentences(fixture_dir):
    return (fixture_dir / "to-translate.txt").read_text(encoding="utf-8").splitlines()


def test_matches_moses_translations_and_scores(decoder, sentences):
    for k, line in enumerate(sentences):
        result = decoder.translate(line, k, nbest_size=20)
        assert result.best == MOSES_TRANSLATIONS[k]
        assert round(result.hypotheses[0].total, 3) == pytest.approx(MOSES_SCORES[k], abs=1e-3)
        for candidate in result.hypotheses:  # n-best totals are the weighted sums of the feature scores
            fields = nbest_line(k, candidate, decoder.nbest_labels()).split(" ||| ")
            values, weighted = fields[2].split(), 0.0
            weights = iter(decoder.model.weights)
            for token in values:
                if not token.endswith("="):
                    weighted += float(token) * next(weights)
            assert weighted == pytest.approx(float(fields[3]), abs=1e-4)


def test_cube_pruning_finds_translations_as_good(fixture_dir, sentences):
    cube = Decoder(load_config(fixture_dir / "moses.ini"), algorithm="cube")
    for k, line in enumerate(sentences):
        assert cube.translate(line).hypotheses[0].total >= MOSES_SCORES[k] - 1.0


# -- loading and caches ---------------------------------------------------------------------------


def test_a_missing_phrase_table_is_reported_before_the_lm_is_loaded(tiny_system, source):
    (tiny_system.parent / "phrases.txt").unlink()
    (tiny_system.parent / "lm.arpa").write_text("not an ARPA file\n")  # loading it first would fail on it
    one_line_error(run_pysmt("decode", "-c", tiny_system, "-i", source), "phrases.txt: no such file")


class CachedTargetLength(Feature):
    """Minus the target length, computed once per target phrase and kept across sentences (as the RNN does)."""

    default_label = "CachedLength"
    computed = []  # every phrase it scored, across instances: what a cache miss costs

    def __init__(self, name, num_scores):
        super().__init__(name, num_scores)
        self.cache = {}

    @classmethod
    def from_config(cls, name, params, system):
        return cls(name, 1)

    def default_weights(self):
        return [0.1]

    def evaluate_in_isolation(self, phrases):
        for phrase in phrases:
            if phrase.target not in self.cache:
                self.computed.append(phrase.target)
                self.cache[phrase.target] = -float(len(phrase.target))
        return np.array([[self.cache[phrase.target]] for phrase in phrases]), None


def test_warm_caches_leaves_only_the_features_caches_filled(tiny_system):
    """Tuning warms the features' caches before forking its workers: decoding the warmed lines asks
    the feature for nothing new, and gives what a cold decoder gives."""
    lines = ["a b c", "c b a", ""]
    with registered(cached_length=CachedTargetLength):
        cold = [toy_decoder(tiny_system, ["cached-length"]).translate(line).best for line in lines]
        decoder = toy_decoder(tiny_system, ["cached-length"])
        CachedTargetLength.computed.clear()
        decoder.warm_caches(lines)
        assert CachedTargetLength.computed and not decoder.options.cache
        warmed = len(CachedTargetLength.computed)
        assert [decoder.translate(line).best for line in lines] == cold
        assert len(CachedTargetLength.computed) == warmed


def test_warm_caches_skips_a_line_too_long_to_translate(tiny_system):
    """Tuning's warm-up built the options of every dev line, a 2 MB one too: it skips what translate skips."""
    with registered(cached_length=CachedTargetLength):
        decoder = toy_decoder(tiny_system, ["cached-length"])
        decoder.search.max_sentence_length = 2
        CachedTargetLength.computed.clear()
        decoder.warm_caches(["a b c", "c b"])
        assert ("x",) not in CachedTargetLength.computed and ("z",) in CachedTargetLength.computed
