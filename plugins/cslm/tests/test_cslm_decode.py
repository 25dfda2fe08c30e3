"""Decoding with the cslm feature: buffer sizes, recombination against exhaustive search, the command line.

The toy system of :mod:`pysmt.testing` translates ``a b c`` into ``x y z``; the tiny model is trained
on a toy language over those words, so the CSLM has opinions about their order.
"""

import os
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from pysmt.decoder import Decoder
from pysmt.testing import configure_system, exhaustive_best, one_line_error, registered, run_pysmt, write_toy_system
from pysmt_cslm.data import encode_text
from pysmt_cslm.features import CSLM_WEIGHT, CslmFeature
from pysmt_cslm.scoring import Scorer, score_text
from pysmt_cslm.store import load_model

LINES = ["a b c", "c b a", "a a b c c", "b c a b", "a d b"]  # d: an unknown word, passed through


def decoder_for(
    system: Path,
    *params: str,
    search: str = "normal",
    engine: str = "auto",
    weight: float = 0.7,
    stack: int | None = None,
) -> Decoder:
    config = configure_system(system, ["cslm"], list(params))
    config = config.with_weights({"CSLM0": [weight]}, "test")
    decoder = Decoder(config, algorithm=search, engine=engine)
    if stack is not None:
        decoder.search = replace(decoder.search, stack_size=stack)
    return decoder


@pytest.fixture
def system(tmp_path, tiny_model) -> Path:
    """The toy system with the tiny model in cslm/ beside its moses.ini (where --features cslm looks)."""
    ini = write_toy_system(tmp_path / "system")
    shutil.copytree(tiny_model, ini.parent / "cslm")
    return ini


def nbest(decoder: Decoder, line: str, size: int = 30) -> list[tuple[str, float, float]]:
    result = decoder.translate(line, nbest_size=size)
    k = [name for name, _, _ in decoder.nbest_labels()].index("CSLM0")
    lo = decoder.nbest_labels()[k][1]
    return [(" ".join(c.words), round(c.total, 9), round(float(c.scores[lo]), 9)) for c in result.hypotheses]


def test_default_path_finds_the_model_beside_the_config(system):
    decoder = decoder_for(system)
    feature = decoder.features[-1]
    assert isinstance(feature, CslmFeature) and feature.directory == system.parent / "cslm"
    assert feature.buffer_size == 10_000 and feature.normalization == "self"
    assert decoder_for(system, "cslm.buffer-size=7", "cslm.normalization=exact").features[-1].buffer_size == 7


@pytest.mark.parametrize("search", ["normal", "cube"])
@pytest.mark.parametrize("normalization", ["self", "exact"])
def test_nbest_lists_do_not_depend_on_the_buffer_size(system, search, normalization):
    lists = []
    for size in (1, 10_000):
        decoder = decoder_for(
            system,
            f"cslm.buffer-size={size}",
            f"cslm.normalization={normalization}",
            "cslm.cache-size=0",
            search=search,
        )
        assert decoder.features[-1].buffer_size == size
        lists.append([nbest(decoder, line) for line in LINES])
    assert lists[0] == lists[1]
    assert all(len(one) > 3 for one in lists[0])


@pytest.mark.parametrize("search", ["normal", "cube"])
def test_the_compiled_scorer_gives_what_the_array_interface_gives(system, search, monkeypatch):
    """Self-normalized, the search calls the feature's compiled scorer (no score_batch call from Python) and
    gets the n-best lists, scores and all, that score_batch gives it and that the Python search gets."""
    compiled, python = decoder_for(system, search=search), decoder_for(system, search=search, engine="python")
    with monkeypatch.context() as patched:  # the array interface, as for a plugin without a compiled scorer
        patched.setattr(CslmFeature, "compiled_scorer", lambda self: None)
        called = decoder_for(system, search=search)
    feature = compiled.features[-1]
    feature.score_batch = None  # never called: the compiled scorer answers
    through_python = [nbest(called, line) for line in LINES]
    assert [nbest(compiled, line) for line in LINES] == through_python
    assert through_python == [nbest(python, line) for line in LINES]
    assert feature.compiled.requests > 0 and feature.compiled.computed > 0 and called.features[-1].requests > 0
    exact = decoder_for(system, "cslm.normalization=exact", search=search)
    assert exact.features[-1].compiled_scorer() is None  # log Z needs torch: the array interface


def test_the_cslm_score_of_a_translation_is_its_perplexity_score(system, tmp_path):
    """CSLM0 in an n-best list = the sum of score_text over the translation's tokens (</s> included)."""
    decoder = decoder_for(system, "cslm.normalization=exact")
    loaded = load_model(system.parent / "cslm")
    scorer = Scorer(loaded.model)
    for line in LINES:
        for words, _, cslm in nbest(decoder, line, 5):
            (tmp_path / "one.txt").write_text(words + "\n")
            tokens, _ = score_text(
                scorer, encode_text(tmp_path / "one.txt", loaded.shortlist, 6, backoff=loaded.backoff), "exact"
            )
            assert cslm == pytest.approx(tokens.sum(), abs=1e-6), words


@pytest.mark.parametrize("engine", ["auto", "python"])
@pytest.mark.parametrize("search", ["normal", "cube"])
def test_recombination_with_cslm_states_finds_the_exhaustive_best(system, engine, search):
    for weight in (0.7, 3.0):  # a strong CSLM weight makes it decide the order
        decoder = decoder_for(system, search=search, engine=engine, weight=weight)
        decoder.search = replace(decoder.search, stack_size=10**9, beam_threshold=0.0, pop_limit=10**9)
        for line in ["a b c", "c a b", "b a c a"]:
            best = exhaustive_best(decoder, tuple(line.split()))
            assert decoder.translate(line).hypotheses[0].total == pytest.approx(best, abs=1e-9), line


@pytest.mark.slow
def test_decode_command_with_features_cslm(system, tmp_path):
    """`pysmt decode --features cslm` through the entry point: CSLM0 in the n-best list, one-line errors."""
    (tmp_path / "in.txt").write_text("a b c\nc b\n")
    (tmp_path / "w.txt").write_text(f"CSLM0= {CSLM_WEIGHT}\n")  # the weight it declares
    command = ["decode", "-c", system, "-i", tmp_path / "in.txt", "--features", "cslm"]
    proc = run_pysmt(*command, "--weights", tmp_path / "w.txt", "--nbest", tmp_path / "nbest.txt")
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == 2
    given = (tmp_path / "nbest.txt").read_text()
    assert all("CSLM0=" in line for line in given.splitlines())
    by_default = run_pysmt(*command, "--nbest", tmp_path / "nbest.txt")  # no weight given: the declared one
    assert by_default.returncode == 0 and (tmp_path / "nbest.txt").read_text() == given, by_default.stderr
    bad = run_pysmt(*command, "--weights", tmp_path / "w.txt", "--param", "cslm.buffer-size=0")
    assert bad.returncode == 1 and "Traceback" not in bad.stderr
    errors = [line for line in bad.stderr.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and "feature CSLM0: buffer-size must be at least 1, not 0" in errors[0]


def test_registered_in_process_too(tmp_path, tiny_model):
    """pysmt.testing.registered works for the class as for any plugin (no installation needed)."""
    ini = write_toy_system(tmp_path / "sys")
    with registered(my_cslm=CslmFeature):
        config = configure_system(ini, ["my-cslm"], [f"my-cslm.model={tiny_model}"]).with_weights(
            {"CSLM0": [0.5]}, "test"
        )
        result = Decoder(config).translate("a b c")
    assert result.best and np.isfinite(result.hypotheses[0].total)


@pytest.mark.slow
def test_forked_decoding_workers_do_not_hang(tmp_path):
    """`--threads 2` forks decoding workers after the model is loaded. Loading a model of some size runs
    torch's thread pool in the parent (OpenMP), which does not survive a fork: the workers must not use it."""
    from collections import Counter

    from pysmt_cslm.hyperparameters import preset
    from pysmt_cslm.model import Cslm
    from pysmt_cslm.store import MODEL, save_checkpoint
    from pysmt_cslm.training import model_state
    from pysmt_cslm.vocabulary import Shortlist, save_counts

    ini = write_toy_system(tmp_path / "system")
    words = ["x", "y", "z"] + [f"w{k}" for k in range(3000)]
    hp = preset("default", embedding=64, hidden1=256, hidden2=64, shortlist=len(words) + 2)
    folder = ini.parent / "cslm"
    folder.mkdir()
    save_checkpoint(folder / MODEL, model_state(Cslm(hp, hp.shortlist), 0))
    Shortlist(["[EOS]", "[UNK]"] + words).save(folder / "target.vocab")
    save_counts(folder / "counts.tsv", Counter(dict.fromkeys(words, 2)), 10)
    (tmp_path / "in.txt").write_text("a b c\nc b\na\nb c\n")
    (tmp_path / "w.txt").write_text("CSLM0= 0.5\n")
    command = ["decode", "-c", ini, "-i", tmp_path / "in.txt", "--features", "cslm", "--weights", tmp_path / "w.txt"]
    env = {**os.environ, "OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"}
    one = run_pysmt(*command, timeout=60, env=env)
    assert one.returncode == 0, one.stderr
    two = run_pysmt(*command, "--threads", "2", timeout=60, env=env)
    assert two.returncode == 0, two.stderr
    assert two.stdout == one.stdout and len(one.stdout.splitlines()) == 4


def test_a_foreign_model_is_refused_before_any_table_loads(tmp_path, tiny_model):
    """A CSLM pointed at an RNN's folder was reported only after the text tables had loaded (169 s on news)."""
    import torch

    from pysmt.plugin import PysmtError
    from pysmt_cslm.store import MODEL

    ini = write_toy_system(tmp_path / "system", phrases="a ||| x ||| nan 0.5 ||| 0-0\n")  # fails if it is loaded
    rnn = tmp_path / "rnn"
    shutil.copytree(tiny_model, rnn)
    torch.save({"model_type": "pysmt-rnn", "hyperparameters": {}, "model": {}}, rnn / MODEL)
    with pytest.raises(PysmtError) as failure:
        decoder_for(ini, f"cslm.model={rnn}")
    assert str(failure.value) == (
        f"{ini}: feature CSLM0: {rnn / MODEL}: not a pysmt-cslm checkpoint (it is a pysmt-rnn model); "
        "train one with `pysmt cslm train`"
    )
    proc = run_pysmt("decode", "-c", ini, "--features", "cslm", "--param", f"cslm.model={rnn}")
    assert one_line_error(proc) == f"Error: {failure.value}"  # the command line: that one line


def test_a_model_of_other_words_is_said_before_any_table_loads(tmp_path, capsys):
    """A CSLM of the source language: its most frequent words are not the binary phrase table's target words."""
    import torch

    from pysmt.binarize import binarize_system
    from pysmt.plugin.systems import load_config
    from pysmt.testing import parameters_of
    from pysmt_cslm.store import MODEL, VOCAB

    phrases = "".join(f"a ||| mot{k} ||| 0.5 0.5 ||| 0-0\n" for k in range(60))
    ini = write_toy_system(tmp_path / "system", phrases=phrases)
    config = load_config(binarize_system(load_config(ini), tmp_path / "binary"))
    table = next(spec.params["path"] for spec in config.features if spec.type == "phrase-table")
    cslm = tmp_path / "cslm"
    cslm.mkdir()
    torch.save({"model_type": "pysmt-cslm", "hyperparameters": {}, "model": {}}, cslm / MODEL)  # what checks read
    (cslm / VOCAB).write_text("".join(w + "\n" for w in ["[EOS]", "[UNK]", *(f"mot{k}" for k in range(30))]))
    with open(cslm / VOCAB, "a") as out:
        out.write("".join(f"word{k}\n" for k in range(70)))
    CslmFeature.check_config("CSLM0", parameters_of(CslmFeature, {"model": str(cslm)}), config)
    assert capsys.readouterr().err == (
        f"pysmt: warning: feature CSLM0: only 30% of the 100 most frequent target words of {cslm} are in the "
        f"target vocabulary of {table}; was it trained on this system's languages, direction and tokenization?\n"
    )


def test_markup_translations_are_scored_by_the_cslm_alike_in_both_engines(system):
    """A markup translation (--xml-input) is an option like any other: the CSLM scores its words, through the
    compiled scorer and the Python search alike."""
    line = 'a <n translation="y z||x">b</n> c'
    for search in ("normal", "cube"):
        compiled, python = decoder_for(system, search=search), decoder_for(system, search=search, engine="python")
        compiled.xml_input = python.xml_input = "exclusive"
        found = nbest(compiled, line)
        assert found == nbest(python, line)
        assert {"x y z z", "x x z"} <= {words for words, _, _ in found}
        assert all(score != 0.0 for _, _, score in found)
