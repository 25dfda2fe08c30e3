"""Training, resuming, the two scoring paths, the features, and bad input."""

import gzip
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from pysmt.plugin import PhrasePair, PysmtError, SystemConfig
from pysmt.testing import parameters_of, run_pysmt
from rnn_feature.features import RNN_WEIGHT, WP_WEIGHT, RnnFeature, ShortlistPenaltyFeature
from rnn_feature.hyperparameters import preset
from rnn_feature.scoring import score_phrases
from rnn_feature.store import LAST, MODEL, load_checkpoint, load_model, resolve_device
from rnn_feature.training import TrainingLimits, train
from rnn_feature.vocabulary import Shortlist
from rnn_testing import ENGLISH, TINY, WORDS, toy_table


@pytest.mark.slow
def test_training_loss_falls_on_a_toy_task(tmp_path):
    table = toy_table(tmp_path / "pt.gz")
    best = train(table, tmp_path / "m", TINY, torch.device("cpu"), TrainingLimits(max_updates=400, valid_every=100))
    log = [line.split("\t") for line in (tmp_path / "m" / "log.tsv").read_text().splitlines()]
    perplexities = [float(row[2]) for row in log]
    assert perplexities[-1] < perplexities[0] < 30  # 30 = the shortlist size: a uniform guess
    assert best == pytest.approx(min(perplexities), abs=5e-4) and best < 4.5  # log.tsv keeps 3 decimals
    model, source, target = load_model(tmp_path / "m")
    assert len(target) <= 30 and "un" in target and "one" in source


@pytest.mark.slow
def test_resume_reproduces_an_uninterrupted_run(tmp_path):
    table = toy_table(tmp_path / "pt.gz")
    limits = dict(valid_every=20, checkpoint_every=20)
    train(table, tmp_path / "whole", TINY, torch.device("cpu"), TrainingLimits(max_updates=60, **limits))
    train(table, tmp_path / "parts", TINY, torch.device("cpu"), TrainingLimits(max_updates=30, **limits))
    train(table, tmp_path / "parts", TINY, torch.device("cpu"), TrainingLimits(max_updates=60, **limits))
    whole, parts = load_checkpoint(tmp_path / "whole" / LAST), load_checkpoint(tmp_path / "parts" / LAST)
    assert whole["update"] == parts["update"] == 60
    for name, value in whole["model"].items():
        assert torch.equal(value, parts["model"][name]), name


def test_rerunning_a_finished_training_leaves_its_folder_as_it_is(tmp_path):
    # a tune job records the model folder's content: rerunning the training command must not change it
    table = toy_table(tmp_path / "pt.gz")
    limits = TrainingLimits(max_updates=5, valid_every=5)
    train(table, tmp_path / "m", TINY, torch.device("cpu"), limits)
    before = {p.name: p.read_bytes() for p in (tmp_path / "m").iterdir() if p.is_file()}
    train(table, tmp_path / "m", TINY, torch.device("cpu"), limits)
    after = {p.name: p.read_bytes() for p in (tmp_path / "m").iterdir() if p.is_file()}
    assert after.keys() == before.keys() and all(
        after[name] == before[name] for name in before if name != ".pysmt.lock"
    )


def test_resuming_with_another_preset_is_an_error(tmp_path):
    table = toy_table(tmp_path / "pt.gz")
    train(table, tmp_path / "m", TINY, torch.device("cpu"), TrainingLimits(max_updates=5, valid_every=5))
    with pytest.raises(PysmtError, match=r"holds a rnn train job .*hidden: 16 -> 256.*rerun with --force"):
        train(table, tmp_path / "m", preset("default"), torch.device("cpu"), TrainingLimits(max_updates=10))


def system(tmp_path: Path) -> SystemConfig:
    return SystemConfig(path=tmp_path / "pysmt.toml", features=[])


def rnn_feature_of(model: Path) -> RnnFeature:
    """The rnn feature of a model folder, on the CPU, as a config section naming it builds one."""
    return RnnFeature.from_config(
        "RNN0", parameters_of(RnnFeature, {"model": str(model), "device": "cpu"}), system(model.parent)
    )


@pytest.mark.slow
def test_the_table_column_and_the_decoder_feature_agree(tmp_path):
    table = toy_table(tmp_path / "pt.gz", n=120)
    train(table, tmp_path / "m", TINY, torch.device("cpu"), TrainingLimits(max_updates=50, valid_every=25))
    out = tmp_path / "scored.gz"
    proc = run_pysmt(
        "rnn",
        "score",
        "--model",
        tmp_path / "m",
        "--phrase-table",
        table,
        "--out",
        out,
        "--device",
        "cpu",
        "--batch-size",
        "7",
    )
    assert proc.returncode == 0, proc.stderr
    lines = gzip.open(out, "rt", encoding="utf-8").read().splitlines()
    assert len(lines) == 120
    feature = rnn_feature_of(tmp_path / "m")
    pairs = [
        PhrasePair(f[0], tuple(f[1].split()), table="TM0", table_scores=None)
        for f in (line.split(" ||| ") for line in lines)
    ]
    scores = feature.score_pairs(pairs)
    column = np.array([float(line.split(" ||| ")[2].split()[4]) for line in lines])
    assert [len(line.split(" ||| ")[2].split()) for line in lines] == [5] * 120  # appended, 4 -> 5 scores
    assert np.allclose(np.log(column), scores[:, 0], rtol=1e-6, atol=1e-6)
    again = feature.score_pairs(pairs[:3])  # from the cache
    assert np.array_equal(again[:, 0], scores[:3, 0])


def test_unknown_words_score_through_unk_and_wp_counts_them(tmp_path):
    table = toy_table(tmp_path / "pt.gz", n=60)
    train(table, tmp_path / "m", TINY, torch.device("cpu"), TrainingLimits(max_updates=5, valid_every=5))
    feature = rnn_feature_of(tmp_path / "m")
    pairs = [
        PhrasePair("zebra quagga", ("zèbre", "couagga"), table="TM0", table_scores=None),
        PhrasePair("one", ("un", "zèbre"), table="TM0", table_scores=None),
    ]
    scores = feature.score_pairs(pairs)
    assert np.isfinite(scores).all()
    wp_parameters = parameters_of(ShortlistPenaltyFeature, {"model": str(tmp_path / "m")})
    wp = ShortlistPenaltyFeature.from_config("WP0", wp_parameters, system(tmp_path))
    assert wp.evaluate_in_isolation(pairs)[0][:, 0].tolist() == [-2.0, -1.0]
    assert Shortlist.load(tmp_path / "m" / "target.vocab").words[:2] == ["[EOS]", "[UNK]"]


def test_a_model_of_the_other_direction_is_reported_once_with_its_coverage(tmp_path, capsys):
    """Trained English -> French, asked about French -> English pairs: nearly every word unknown."""
    table = toy_table(tmp_path / "pt.gz", n=60)
    train(table, tmp_path / "m", TINY, torch.device("cpu"), TrainingLimits(max_updates=5, valid_every=5))
    capsys.readouterr()
    feature = rnn_feature_of(tmp_path / "m")

    def pairs(source: list[str], target: list[str]) -> list[PhrasePair]:
        return [
            PhrasePair(" ".join(source[k : k + 2]), tuple(target[k : k + 2]), table="TM0", table_scores=None)
            for k in range(6)
        ]

    backwards = pairs(WORDS, ENGLISH)
    feature.score_pairs(backwards)
    err = capsys.readouterr().err
    assert re.search(
        r"warning: feature RNN0: only \d+% of the first phrase pairs' source words are in the "
        r"model's vocabulary \(.*m\); was it trained on this system's languages",
        err,
    ), err
    feature.score_pairs(backwards)
    assert "warning" not in capsys.readouterr().err  # said once
    right = rnn_feature_of(tmp_path / "m")
    right.score_pairs(pairs(ENGLISH, WORDS))
    assert "warning" not in capsys.readouterr().err
    # unknown words passed through are unknown to any model: they say nothing of its languages (with
    # mode = column they are nearly all the network is asked about)
    unknown = rnn_feature_of(tmp_path / "m")
    words = [f"zz{k}" for k in range(12)]
    unknown.score_pairs(
        [PhrasePair(w, (w,), table=None, table_scores=None, alignment="0-0", unknown=True) for w in words]
    )
    assert "warning" not in capsys.readouterr().err and not unknown.coverage_checked


def test_bad_inputs_give_clear_errors(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("one ||| un ||| 0.5\ntwo |||  ||| 0.5\n")
    with pytest.raises(PysmtError, match=r"bad.txt, line 2: empty target phrase"):
        train(bad, tmp_path / "m", TINY, torch.device("cpu"), TrainingLimits(max_updates=1))
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / MODEL).write_bytes(b"not a checkpoint")
    with pytest.raises(PysmtError, match="not a readable pysmt-rnn checkpoint"):
        load_model(tmp_path / "broken")
    with pytest.raises(PysmtError, match="no such checkpoint"):
        load_model(tmp_path / "nothing")
    if not torch.cuda.is_available():
        with pytest.raises(PysmtError, match="--device cpu"):
            resolve_device("cuda")


@pytest.mark.slow
def test_decode_with_rnn_and_wp_features(tmp_path):
    """`pysmt decode --features rnn,wp` on a system with a model in SYSTEM/rnn: the n-best lists carry
    RNN0 (log p(target | source) of the phrases used) and WP0 (minus the words outside the shortlist)."""
    system = tmp_path / "system"
    system.mkdir()
    pairs = [(e, f) for e, f in zip(ENGLISH, WORDS)] + [("one two", "un deux")]
    (system / "phrases.txt").write_text("".join(f"{e} ||| {f} ||| 0.5 0.5\n" for e, f in pairs))
    (system / "lm.arpa").write_text(
        "\\data\\\nngram 1=9\nngram 2=1\n\n\\1-grams:\n-99\t<s>\t0\n-1\t</s>\n-1\t<unk>\n"
        + "".join(f"-1\t{f}\n" for f in WORDS)
        + "\n\\2-grams:\n-1\t<s> un\n\n\\end\\\n"
    )
    (system / "moses.ini").write_text(
        "[feature]\nKENLM order=2 path=lm.arpa\nWordPenalty\nUnknownWordPenalty\n"
        "PhraseDictionaryMemory path=phrases.txt num-features=2\n\n[weight]\n"
        "KENLM0= 0.5\nWordPenalty0= -1\nPhraseDictionaryMemory0= 0.2 0.2\n"
    )
    five = [(a, b) for a in range(5) for b in range(5)]  # no "six": it stays outside the shortlists
    with gzip.open(tmp_path / "pt.gz", "wt", encoding="utf-8") as out:
        out.writelines(f"{ENGLISH[a]} {ENGLISH[b]} ||| {WORDS[a]} {WORDS[b]} ||| 1 1 1 1\n" for a, b in five)
    train(tmp_path / "pt.gz", system / "rnn", TINY, torch.device("cpu"), TrainingLimits(max_updates=5, valid_every=5))
    target = Shortlist.load(system / "rnn" / "target.vocab")
    (tmp_path / "w.txt").write_text(f"RNN0= {RNN_WEIGHT}\nWP0= {WP_WEIGHT}\n")  # the weights they declare
    (tmp_path / "in.txt").write_text("three\nsix\n")
    command = [
        "decode",
        "-c",
        system / "moses.ini",
        "-i",
        tmp_path / "in.txt",
        "--features",
        "rnn,wp",
        "--nbest",
        tmp_path / "nbest.txt",
    ]
    defaults = run_pysmt(*command)  # no weights given: the features' declared defaults, not an error
    assert defaults.returncode == 0, defaults.stderr
    by_default = (tmp_path / "nbest.txt").read_text()
    proc = run_pysmt(*command, "--weights", tmp_path / "w.txt")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "nbest.txt").read_text() == by_default and proc.stdout == defaults.stdout
    assert proc.stdout.split("\n")[:2] == ["trois", "six"]
    model, source, _ = load_model(system / "rnn")
    expected = score_phrases(model, source, target, [(["three"], ["trois"]), (["six"], ["six"])])
    for line, rnn, outside in zip(open(tmp_path / "nbest.txt"), expected, [0, 1]):
        fields = line.split(" ||| ")
        scores = fields[2].split()
        assert float(scores[scores.index("RNN0=") + 1]) == pytest.approx(rnn, abs=1e-3)
        assert float(scores[scores.index("WP0=") + 1]) == -outside
    assert "six" not in target and "trois" in target


@pytest.mark.slow
def test_scores_stored_in_a_binary_table_are_what_the_search_reads(tmp_path):
    """`pysmt rnn score` on a binary table stores the model's scores of every entry there; `decode --features
    rnn` then reads them (the network asked only about unknown words), both engines alike, and gives what
    scoring in the search gives; another model's stored scores are not used, and said so."""
    from pysmt.decoder import Decoder
    from pysmt.plugin import stored_scores
    from pysmt.testing import configure_system, write_toy_system

    table = toy_table(tmp_path / "pt.gz", n=80)
    lines = gzip.open(table, "rt", encoding="utf-8").read()
    system = write_toy_system(tmp_path / "system", phrases=lines.replace(" ||| ||| 1 1 1", ""), reordering=None)
    train(table, system.parent / "rnn", TINY, torch.device("cpu"), TrainingLimits(max_updates=20, valid_every=10))
    binary = tmp_path / "bin"
    assert run_pysmt("binarize", "-c", system, "-o", binary).returncode == 0
    folder = next(binary.glob("*phrase-table*"))
    score = [
        "rnn",
        "score",
        "--model",
        system.parent / "rnn",
        "--phrase-table",
        folder,
        "--device",
        "cpu",
        "--batch-size",
        "7",
    ]
    proc = run_pysmt(*score)
    assert proc.returncode == 0, proc.stderr
    ((values, record),) = stored_scores(folder).values()
    assert values.shape == (80, 1) and record["entries"] == 80 and record["made_by"]["feature"] == "rnn"
    config = binary / "pysmt.toml"
    model = [f"rnn.model={system.parent / 'rnn'}"]
    weight = {"RNN0": [0.4]}
    decoders = {
        engine: Decoder(configure_system(config, ["rnn"], model).with_weights(weight, "test"), engine=engine)
        for engine in ("auto", "python")
    }
    plain = Decoder(configure_system(system, ["rnn"]).with_weights(weight, "test"))  # text table: scored in the search
    rnn = decoders["auto"].features[-1]
    assert rnn.stored_scores("PhraseDictionaryMemory0") is not None and not plain.features[-1].stored
    asked: list[int] = []
    evaluate = rnn.evaluate_with_source_context

    def counting(options):
        asked.append(len(options))
        return evaluate(options)

    rnn.evaluate_with_source_context = counting
    for line in ["one two three", "four five zebra six one"]:
        auto, python, scored = (d.translate(line, nbest_size=5).hypotheses for d in (*decoders.values(), plain))
        assert [(c.words, c.scores.tolist(), c.total) for c in auto] == [
            (c.words, c.scores.tolist(), c.total) for c in python
        ]
        assert [c.words for c in auto] == [c.words for c in scored]
        assert [c.total for c in auto] == pytest.approx([c.total for c in scored], abs=1e-5)
    assert asked == [1]  # the compiled builder asked the network about "zebra" (unknown) only
    # another model's scores: not used, and said so
    train(table, tmp_path / "other", TINY, torch.device("cpu"), TrainingLimits(max_updates=5, valid_every=5))
    (tmp_path / "w.txt").write_text("RNN0= 0.4\n")
    other = run_pysmt(
        "decode",
        "-c",
        config,
        "--features",
        "rnn",
        "--param",
        f"rnn.model={tmp_path / 'other'}",
        "--weights",
        tmp_path / "w.txt",
        input="one two\n",
    )
    assert "were made by another model" in other.stderr
    # a binary table's scores are stored in it: no --out; a text table needs one
    assert "give no --out" in run_pysmt(*score, "--out", tmp_path / "x.gz").stderr
    assert (
        "--out is needed" in run_pysmt("rnn", "score", "--model", system.parent / "rnn", "--phrase-table", table).stderr
    )


def test_tune_starts_wp_at_the_weight_it_declares(tmp_path):
    """`pysmt tune --features wp`: WP0's first weight is the one the feature declares (L1-normalized with the
    others, as tuning's first decode takes them all), not 0."""
    from pysmt.testing import write_toy_system
    from tuning.loop import tune
    from tuning.options import TuningOptions

    ini = write_toy_system(tmp_path / "system")
    (tmp_path / "shortlist").write_text("[EOS]\n[UNK]\nx\ny\n")  # z lies outside it
    (tmp_path / "dev.src").write_text("a b c\nc b a\n")
    (tmp_path / "dev.ref").write_text("x y z\nz y x\n")
    options = TuningOptions(
        config=ini,
        features=["wp"],
        params=[f"wp.shortlist={tmp_path / 'shortlist'}"],
        source=tmp_path / "dev.src",
        references=[tmp_path / "dev.ref"],
        out=tmp_path / "tune",
        max_iterations=1,
        quiet=True,
    )
    tune(options)
    lines = (tmp_path / "tune" / "run1" / "weights.txt").read_text().splitlines()
    first = {name.rstrip("="): [float(w) for w in ws] for name, *ws in map(str.split, lines)}
    assert first["WP0"][0] / first["KENLM0"][0] == pytest.approx(WP_WEIGHT / 0.5)  # the toy system's LM: 0.5
    assert first["WP0"][0] > 0
