"""``pysmt rescore`` (pysmt/rescoring.py): the scores it adds to an n-best list are those of in-search
use; lists of another system, and outputs onto inputs, are refused."""

from __future__ import annotations

from dataclasses import replace

import pytest

from pysmt.config_files import configure_system, load_config
from pysmt.decoder import Decoder
from pysmt.errors import PysmtError
from pysmt.files.formats import nbest_line
from pysmt.rescoring import SourceText, rescore
from pysmt.testing import (
    TargetWordsFeature,
    one_line_error,
    registered,
    registered_for_commands,
    run_pysmt,
    toy_decoder,
    write_toy_system,
)
from tests.helpers import raw_text_system


def test_rescoring_an_nbest_list_gives_the_scores_of_in_search_use(tiny_system, fake_registry, tmp_path):
    from pysmt.config_files import configure_system
    from pysmt.files.formats import nbest_line
    from pysmt.rescoring import rescore

    config = configure_system(tiny_system, ["batched-bigram"])
    decoder = Decoder(config, missing_weight=0.7)
    with_feature, without = tmp_path / "with.txt", tmp_path / "without.txt"
    labels = decoder.nbest_labels()
    lines = [nbest_line(0, c, labels) for c in decoder.translate("a b c a", nbest_size=20).hypotheses]
    with_feature.write_text("\n".join(lines) + "\n")
    # the same list without the plugin's scores, and with totals that leave them out
    stripped = []
    for line in lines:
        index, words, scores, total = line.split(" ||| ")
        head, _, bonus = scores.partition(" Bigram0= ")
        stripped.append(f"{index} ||| {words} ||| {head} ||| {float(total) - 0.7 * float(bonus)}")
    without.write_text("\n".join(stripped) + "\n")
    out = tmp_path / "rescored.txt"
    weighted = config.with_weights({"Bigram0": [0.7]}, "test")
    assert rescore(weighted, ["batched-bigram"], without, out) == len(lines)
    expected = [(line.split(" ||| ")[1], line.split(" ||| ")[2]) for line in lines]
    got = [(line.split(" ||| ")[1], line.split(" ||| ")[2]) for line in out.read_text().splitlines()]
    assert got == expected  # the same scores, re-sorted into the same order
    totals = [float(line.split(" ||| ")[3]) for line in out.read_text().splitlines()]
    assert totals == pytest.approx([float(line.split(" ||| ")[3]) for line in lines], abs=2e-6)
    with pytest.raises(PysmtError, match="already have Bigram0= scores"):
        rescore(weighted, ["batched-bigram"], with_feature, tmp_path / "again.txt")


def test_rescore_command_errors(tiny_system, tmp_path):
    nbest = tmp_path / "n.txt"
    nbest.write_text("0 ||| x ||| KENLM0= -1 ||| -1\n")
    command = ["rescore", "-c", tiny_system, "--nbest", nbest]
    one_line_error(run_pysmt(*command, "--out", nbest, "--features", "kenlm"), "is also the input --nbest")
    assert nbest.read_text().startswith("0 |||")
    one_line_error(
        run_pysmt(*command, "--out", tmp_path / "o.txt", "--features", "word-penalty"), "rescore adds stateful features"
    )
    assert run_pysmt(*command, "--out", tmp_path / "o.txt").returncode == 2


def test_rescoring_a_list_of_another_system_is_refused(tmp_path):
    ini = write_toy_system(tmp_path / "system")
    nbest = tmp_path / "nbest.txt"
    nbest.write_text("0 ||| x ||| LM0= -1 WordPenalty0= -1 ||| -2\n")
    with pytest.raises(
        PysmtError,
        match=r"its features \(LM0 WordPenalty0\) are not the system.s "
        r".*it lacks Distortion0.*it has LM0: was it decoded with this -c config",
    ):
        rescore(load_config(ini), ["kenlm"], nbest, tmp_path / "out.txt")
    assert not (tmp_path / "out.txt").exists()


# -- features of complete translations (issue 51): --src, and the rescoring totals -------------------------------


class RecordedTargetWords(TargetWordsFeature):
    """The toy feature of complete translations, recording every call in the class (rescore builds its own)."""

    seen: list = []

    def score_translations(self, sentence, translations):
        RecordedTargetWords.seen.append((sentence.words, sentence.index, list(translations)))
        return super().score_translations(sentence, translations)


@pytest.fixture
def recorded():
    RecordedTargetWords.seen = []
    with registered(target_words=RecordedTargetWords):
        yield RecordedTargetWords.seen


def decoded_list(system, path, lines, features=(), weights=None, nbest_size=100):
    """``lines`` decoded by ``system`` into the n-best list ``path`` (distinct); the decoder."""
    decoder = toy_decoder(system, features, weights=weights)
    with path.open("w") as out:
        for k, line in enumerate(lines):
            for candidate in decoder.translate(line, k, nbest_size=nbest_size, distinct=True).hypotheses:
                out.write(nbest_line(k, candidate, decoder.nbest_labels()) + "\n")
    return decoder


def fields(path):
    return [line.split(" ||| ") for line in path.read_text().splitlines()]


def test_rescoring_with_a_translation_feature_gives_the_decoder_s_rescored_lists(tmp_path, recorded):
    system = write_toy_system(tmp_path / "system")
    src = tmp_path / "in.txt"
    src.write_text("a b c\nc b a\n")
    plain, rescored = tmp_path / "plain.txt", tmp_path / "rescored.txt"
    decoded_list(system, plain, ["a b c", "c b a"])
    weights = {"TargetWords0": [2.0]}
    config = configure_system(system, ["target-words"]).with_weights(weights, "test")
    assert rescore(config, ["target-words"], plain, rescored, source=SourceText(src)) == 20
    # one call a sentence, with its source words and its distinct entries, in the list's order
    assert [(words, index, len(entries)) for words, index, entries in recorded] == [
        (("a", "b", "c"), 0, 11),
        (("c", "b", "a"), 1, 9),
    ]
    reference = tmp_path / "reference.txt"  # the decoder's own rescoring pass over the same distinct lists
    decoded_list(system, reference, ["a b c", "c b a"], ["target-words"], weights)
    got, expected = fields(rescored), fields(reference)
    assert [f[:3] for f in got] == [f[:3] for f in expected]  # same entries, same scores, same order
    assert [float(f[3]) for f in got] == pytest.approx([float(f[3]) for f in expected], abs=2e-6)
    assert got[0][:2] == ["0", "y y z"] and got[0][3] == "2.711009" and got[11][:2] == ["1", "z y y"]


def test_an_entry_repeated_in_the_list_is_scored_once(tmp_path, recorded):
    system = write_toy_system(tmp_path / "system")
    src, plain, out = tmp_path / "in.txt", tmp_path / "plain.txt", tmp_path / "out.txt"
    src.write_text("a b c\n")
    decoder = toy_decoder(system)
    lines = [nbest_line(0, c, decoder.nbest_labels()) for c in decoder.translate("a b c", nbest_size=12).hypotheses]
    plain.write_text("\n".join(lines) + "\n")
    config = configure_system(system, ["target-words"])
    assert rescore(config, ["target-words"], plain, out, source=SourceText(src)) == 12
    assert len(recorded[0][2]) == len(set(recorded[0][2])) == len({f[1] for f in fields(plain)}) < 12


def test_src_is_prepared_as_decode_prepares_it(tmp_path, recorded):
    system = raw_text_system(tmp_path / "raw")
    src, plain = tmp_path / "in.txt", tmp_path / "plain.txt"
    src.write_text("a, b.\n")
    decoded_list(system, plain, ["a , b ."])
    config = configure_system(system, ["target-words"])
    rescore(config, ["target-words"], plain, tmp_path / "1.txt", source=SourceText(src))
    rescore(config, ["target-words"], plain, tmp_path / "2.txt", source=SourceText(src, prepared=True))
    src.write_text('a, <x translation="z">b.</x>\n')
    rescore(config, ["target-words"], plain, tmp_path / "3.txt", source=SourceText(src, xml_input="exclusive"))
    src.write_text("a, <x>b.\n")  # malformed markup: read as text, tags as words, as decode reads it
    rescore(config, ["target-words"], plain, tmp_path / "4.txt", source=SourceText(src, xml_input="exclusive"))
    assert [words for words, _, _ in recorded] == [
        ("a", ",", "b", "."),
        ("a,", "b."),
        ("a", ",", "b", "."),
        ("a", ",", "<", "x", ">", "b", "."),
    ]


def test_a_short_or_missing_src_is_one_error_naming_it(tmp_path, recorded):
    system = write_toy_system(tmp_path / "system")
    src, plain = tmp_path / "in.txt", tmp_path / "plain.txt"
    src.write_text("a b c\n")
    decoded_list(system, plain, ["a b c", "c b a"])
    config = configure_system(system, ["target-words"])
    with pytest.raises(PysmtError) as caught:
        rescore(config, ["target-words"], plain, tmp_path / "out.txt", source=SourceText(src))
    assert str(caught.value) == (
        f"--src {src} has 1 lines, but {plain} has sentence 1 (ids count the input's lines from 0): is it the input "
        "the list was decoded from?"
    )
    with pytest.raises(PysmtError, match="feature TargetWords0 scores complete translations of the input: give the"):
        rescore(config, ["target-words"], plain, tmp_path / "out.txt")
    assert not (tmp_path / "out.txt").exists()


def test_the_config_s_rescoring_weights_make_the_totals(tmp_path, recorded):
    """The list's total (decoded with the config's weights), plus the added feature at its rescoring weight 2 (its
    weight is 0), plus WordPenalty0's score (-3) times its rescoring weight 0 minus its weight -1: 3 words, -3."""
    system = write_toy_system(tmp_path / "system")
    src, plain, out = tmp_path / "in.txt", tmp_path / "plain.txt", tmp_path / "out.txt"
    src.write_text("a b c\n")
    decoded_list(system, plain, ["a b c"])
    config = configure_system(system, ["target-words"])
    rescoring = {"TargetWords0": [2.0], "WordPenalty0": [0.0]}
    specs = [replace(s, weights=s.weights or [0.0], rescoring_weights=rescoring.get(s.name)) for s in config.features]
    rescore(replace(config, features=specs), ["target-words"], plain, out, source=SourceText(src))
    listed = {f[1]: float(f[3]) for f in fields(plain)}
    totals = [(f[1], float(f[3])) for f in fields(out)]
    assert totals == sorted(totals, key=lambda item: -item[1])
    for words, total in totals:
        assert total == pytest.approx(listed[words] + 2 * words.split().count("y") - 3, abs=2e-6)
    assert totals[0] == ("y y z", pytest.approx(-0.288991, abs=2e-6))


def test_rescore_command_with_a_translation_feature(tmp_path):
    system = write_toy_system(tmp_path / "system")
    env = registered_for_commands(tmp_path / "plugins", target_words=TargetWordsFeature)
    src, plain, out, weights = (tmp_path / name for name in ("in.txt", "plain.txt", "out.txt", "w.txt"))
    src.write_text("a b c\nc b a\n")
    weights.write_text("TargetWords0= 2\n")
    decoded_list(system, plain, ["a b c", "c b a"], nbest_size=2)
    command = ["rescore", "-c", system, "--features", "target-words", "--nbest", plain, "--out", out]
    proc = run_pysmt(*command, "--weights", weights, "--src", src, env=env)
    assert proc.returncode == 0, proc.stderr
    assert [(f[0], f[1], f[2].split("TargetWords0=")[1], f[3]) for f in fields(out)] == [
        ("0", "y y z", " 2", "2.711009"),
        ("0", "x y z", " 1", "2.588356"),
        ("1", "z y y", " 2", "1.337585"),  # -2.662415 + 2 x 2
        ("1", "z y x", " 1", "-0.190148"),  # -2.190148 + 2
    ]
    one_line_error(
        run_pysmt(*command, env=env),
        "TargetWords0 scores complete translations of the input: give the input the list was decoded from with --src",
        status=2,
    )
    one_line_error(
        run_pysmt(*command[:4], "repeated-word", *command[5:], "--src", src),
        "--src is read by features of complete translations (sentence models): none is added",
        status=2,
    )
    one_line_error(run_pysmt(*command, "--src", tmp_path / "none.txt", env=env), "none.txt", status=2)
