"""``pysmt rescore`` (pysmt/rescoring.py): the scores it adds to an n-best list are those of in-search
use; lists of another system, and outputs onto inputs, are refused."""

from __future__ import annotations

import pytest

from pysmt.config_files import load_config
from pysmt.decoder import Decoder
from pysmt.errors import PysmtError
from pysmt.rescoring import rescore
from pysmt.testing import one_line_error, run_pysmt, write_toy_system


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
