"""``pysmt tune --rerank`` (tuning/loop.py): one decode, the optimizer on its fixed pool, rescoring weights learned.

The system is test_tuning's misleading one (each source word has a right translation x<word> and a wrong one
y<word>, which its search weights prefer) with a feature of complete translations that counts the wrong words
(:class:`pysmt.testing.TargetWordsFeature`, declared weight 1): its starting rescoring weights re-rank the
wrong translations first, so the dev BLEU starts at 0 and only the learned rescoring weights reach 100.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from pysmt.config_files import load_config
from pysmt.decoder import Decoder
from pysmt.decoding.options import SystemOptions
from pysmt.errors import PysmtError
from pysmt.running.jobs import content_files
from pysmt.testing import TargetWordsFeature, one_line_error, registered, registered_for_commands, run_pysmt
from tests.helpers import slow_cases
from tests.tuning.test_tuning import SOURCE_WORDS, misleading_system
from tuning.loop import Tuner, tune
from tuning.optimizers import MertOptions
from tuning.options import TuningOptions

WRONG = " ".join(f"y{w}" for w in SOURCE_WORDS)


@pytest.fixture
def rerank_job(tmp_path):
    """The misleading system, an 8-line dev set, and the options of a rerank job adding TargetWords0."""
    ini = misleading_system(tmp_path / "system")
    rng = random.Random(3)
    sources = [" ".join(rng.sample(SOURCE_WORDS, 5)) for _ in range(8)]
    (tmp_path / "dev.src").write_text("\n".join(sources) + "\n")
    (tmp_path / "dev.ref").write_text("\n".join(" ".join(f"x{w}" for w in s.split()) for s in sources) + "\n")
    return TuningOptions(
        system=SystemOptions(
            config=ini, features=["target-words"], params=[f"target-words.words={WRONG}"], search="normal"
        ),
        source=tmp_path / "dev.src",
        references=[tmp_path / "dev.ref"],
        out=tmp_path / "tune",
        rerank=True,
        max_iterations=10,
        optimizer_settings={"mert": MertOptions(restarts=2)},
        quiet=True,
    )


def counted_tune(options: TuningOptions, monkeypatch) -> list[int]:
    """Run (or resume) the job with TargetWords registered; the iterations whose decode ran."""
    decoded: list[int] = []
    decode = Tuner.decode

    def counting(self, weights, run):
        decoded.append(int(run.name.removeprefix("run")))
        return decode(self, weights, run)

    monkeypatch.setattr(Tuner, "decode", counting)
    with registered(target_words=TargetWordsFeature):
        tune(options)
    return decoded


def rows(options: TuningOptions) -> list[list[str]]:
    return [line.split("\t") for line in (options.out / "summary.tsv").read_text().splitlines()]


@pytest.mark.parametrize("optimizer", ["kbmira", *slow_cases("mert", "pro")])
def test_rerank_decodes_once_and_learns_the_rescoring_weights(rerank_job, monkeypatch, optimizer):
    options = replace(rerank_job, optimizer=optimizer)
    assert counted_tune(options, monkeypatch) == [1]  # one decode, of iteration 1
    out = options.out
    runs = sorted(out.glob("run*"), key=lambda run: int(run.name[3:]))
    assert len(runs) > 1 and [run.name for run in runs if (run / "decode.done").exists()] == ["run1"]
    assert not any((run / "nbest.txt").exists() or (run / "output.txt").exists() for run in runs[1:])
    assert all((run / "optimize.done").exists() and (run / "weights.txt").exists() for run in runs)
    # the one decode holds the rescoring pass's lists: every line's rescore-size (100) distinct translations
    nbest = (runs[0] / "nbest.txt").read_text().splitlines()
    assert all("TargetWords0= " in line for line in nbest)
    by_line = [[line.split(" ||| ")[1] for line in nbest if line.startswith(f"{k} |||")] for k in range(8)]
    assert all(len(words) == 100 == len(set(words)) for words in by_line)
    # iteration 1 is the decode's own re-ranking: the wrong words first, BLEU 0; the learned weights reach 100
    table = rows(options)
    assert table[0][:5] == ["iteration", "dev_bleu", "new_candidates", "pool", "predicted_bleu"]
    assert float(table[1][1]) == 0.0 and max(float(row[1]) for row in table[1:]) == 100.0
    assert [row[2] for row in table[1:]] == [str(len(nbest))] + ["0"] * (len(table) - 2)  # new candidates: run1's
    for row, before in zip(table[2:], table[1:]):  # each iteration's BLEU is what the step before predicted
        assert float(row[1]) == pytest.approx(float(before[4]), abs=1e-9)
    # the tuned config: the search weights as they were, the learned ones as every feature's rescoring weights
    with registered(target_words=TargetWordsFeature):
        original, tuned = load_config(options.system.config), load_config(out / "pysmt.toml")
    learned = {line.split("=")[0]: [float(w) for w in line.split()[1:]] for line in
               (out / "rescoring-weights.txt").read_text().splitlines()}  # fmt: skip
    assert not (out / "weights.txt").exists()
    for spec in original.features:  # (the unknown-word penalty's: the default of an untunable feature, 1)
        assert tuned.feature(spec.name).weights == (spec.weights or [1.0]), spec.name
    assert learned["UnknownWordPenalty0"] == [1.0]  # fixed
    assert {spec.name: spec.rescoring_weights for spec in tuned.features} == learned
    words = tuned.feature("TargetWords0")
    assert words.weights == words.rescoring_weights and words.params["words"] == WRONG
    assert tuned.search == original.search
    # decoding with it searches as before and re-ranks as tuning predicted: the dev references, word for word
    with registered(target_words=TargetWordsFeature):
        decoder = Decoder.from_paths(out / "pysmt.toml")
        best = [
            " ".join(decoder.translate(line).hypotheses[0].words)
            for line in options.source.read_text().split("\n")[:-1]
        ]
    assert best == options.references[0].read_text().splitlines()


def test_a_finished_rerank_job_resumes_to_the_same_result_and_refuses_other_options(rerank_job, monkeypatch):
    options = rerank_job
    assert counted_tune(options, monkeypatch) == [1]
    files = {path: path.read_bytes() for path in content_files(options.out) if path.name != "job.json"}
    assert counted_tune(replace(options, quiet=False), monkeypatch) == []  # nothing decoded, nothing optimized again
    assert {path: path.read_bytes() for path in files} == files
    for other, change in [
        (replace(options, rerank=False), "rerank: True -> none"),
        (replace(options, nbest_size=50), "nbest_size: 100 -> 50"),
        (replace(options, interpolation=0.5), "interpolation: 1.0 -> 0.5"),
    ]:
        with pytest.raises(PysmtError, match=f"holds a tune job started with other inputs or options \\(.*{change}"):
            counted_tune(other, monkeypatch)
    assert {path: path.read_bytes() for path in files} == files


def test_rerank_without_a_feature_of_complete_translations_is_a_usage_error(tiny_system, dev, tmp_path):
    src, ref = dev
    proc = run_pysmt("tune", "-c", tiny_system, "--src", src, "--ref", ref, "--out", tmp_path / "tune", "--rerank")
    one_line_error(proc, "--rerank: the system has no feature of complete translations", status=2)
    assert not (tmp_path / "tune").exists()


@pytest.mark.parametrize("size", [120, 20])
def test_rerank_lists_of_another_size_than_rescore_size(rerank_job, monkeypatch, capsys, size):
    """--nbest-size above rescore-size: the decoder re-ranks max(both) translations while tuning, so the tuned
    config re-ranks as many, the lists the weights were tuned on; below it, the lists miss translations the
    decoder re-ranks, which is said."""
    options = replace(rerank_job, nbest_size=size, max_iterations=1)
    counted_tune(options, monkeypatch)
    with registered(target_words=TargetWordsFeature):
        assert load_config(options.out / "pysmt.toml").search.rescore_size == max(size, 100)
    warning = "warning: --nbest-size 20 is less than the system's rescore-size 100: the lists miss translations"
    assert (warning in capsys.readouterr().err) == (size < 100)


@pytest.mark.slow  # the command as users run it; the tests above run the same loop in this process
def test_tune_rerank_as_a_command(rerank_job, tmp_path):
    options = rerank_job
    env = registered_for_commands(tmp_path / "plugins", target_words=TargetWordsFeature)
    command = [
        "tune", "-c", options.system.config, "--src", options.source, "--ref", options.references[0],
        "--out", options.out, "--features", "target-words", "--param", options.system.params[0], "--rerank",
        "--max-iterations", "4", "--search", "normal",
    ]  # fmt: skip
    proc = run_pysmt(*command, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "pysmt tune: best dev BLEU 100.00" in proc.stderr and proc.stderr.count("decode dev") == 1
    assert (
        proc.stdout
        == f"pysmt tune: tuned config {options.out / 'pysmt.toml'} (per iteration: {options.out / 'summary.tsv'})\n"
    )
    without = [arg for arg in command if arg != "--rerank"]
    one_line_error(run_pysmt(*without, env=env), "rerank: True -> none")  # a rerank job, resumed without it
