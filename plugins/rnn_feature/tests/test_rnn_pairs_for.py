"""`pysmt rnn train --pairs-for FILE`: training on the phrase pairs `pysmt filter` keeps for those files."""

import gzip
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from pysmt.config import ProcessingConfig
from pysmt.config_files import load_config, write_toml
from pysmt.plugin import PysmtError
from pysmt.testing import one_line_error, run_pysmt, write_toy_system
from rnn_feature.data import read_table
from rnn_feature.pairs_for import FILTERED, PairsFor
from rnn_feature.store import LAST, SOURCE_VOCAB, load_checkpoint
from rnn_feature.training import PAIRS, TRAINING_FILES, TrainingLimits, train
from rnn_feature.vocabulary import Shortlist
from rnn_testing import TINY

CPU = torch.device("cpu")
#: A table for raw text: "a," is never a phrase of tokenized input ("a ," is); "c" and "d e" occur in no input.
PHRASES = (
    "a ||| x ||| 0.5 0.5 ||| 0-0\nb ||| y ||| 0.5 0.4 ||| 0-0\n, ||| , ||| 0.9 0.9 ||| 0-0\n"
    "a , ||| x , ||| 0.9 0.9 ||| 0-0 1-1\n. ||| . ||| 0.9 0.9 ||| 0-0\nb . ||| z . ||| 0.9 0.9 ||| 0-0 1-1\n"
    "a, ||| WRONG ||| 0.9 0.9 ||| 0-0\nc ||| z ||| 0.5 0.5 ||| 0-0\nd e ||| w v ||| 0.5 0.5 ||| 0-0 1-1\n"
    "b . a ||| y . x ||| 0.5 0.5 ||| 0-0 1-1 2-2\n"
)


def raw_text_system(folder: Path) -> Path:
    """A system that takes raw text and tokenizes it (its [processing]): its pysmt.toml beside its phrases.txt."""
    config = load_config(write_toy_system(folder, phrases=PHRASES, reordering=None))
    write_toml(replace(config, processing=ProcessingConfig("en", "fr", tokenize=True)), folder / "pysmt.toml")
    return folder / "phrases.txt"


def texts(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "dev.en").write_text("a, b.\n")
    (tmp_path / "test.en").write_text("b\n")
    return tmp_path / "dev.en", tmp_path / "test.en"


def lines(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return handle.read().splitlines()


def test_pairs_for_keeps_exactly_what_pysmt_filter_keeps_and_trains_on_them(tmp_path, capfd):
    table = raw_text_system(tmp_path / "system")
    dev, test = texts(tmp_path)
    both = tmp_path / "both.en"  # filter takes one input: the files one after the other (n-grams stay in a line)
    both.write_text(dev.read_text() + test.read_text())
    proc = run_pysmt("filter", "-c", table.parent / "pysmt.toml", "-i", both, "-o", tmp_path / "filtered")
    assert proc.returncode == 0, proc.stderr
    filtered = load_config(tmp_path / "filtered" / "pysmt.toml").feature("PhraseDictionaryMemory0").params["path"]
    expected = lines(Path(filtered))

    selection = PairsFor.of([test, dev], None, table=table)  # the config beside the table, as `pysmt train` writes it
    assert selection.config == (table.parent / "pysmt.toml").resolve()
    train(table, tmp_path / "m", TINY, CPU, TrainingLimits(max_updates=2, valid_every=2), pairs_for=selection)
    kept = lines(tmp_path / "m" / FILTERED)
    assert kept == expected
    assert [line.split(" ||| ")[0] for line in kept] == ["a", "b", ",", "a ,", ".", "b ."]  # not "a,", "c", "b . a"
    assert f"kept 6 of {len(PHRASES.splitlines())} pairs of {table}" in capfd.readouterr().err
    assert load_checkpoint(tmp_path / "m" / LAST)["update"] == 2
    assert "WRONG" not in (tmp_path / "m" / "target.vocab").read_text()  # trained on the kept pairs only
    assert "c" not in Shortlist.load(tmp_path / "m" / SOURCE_VOCAB)
    assert FILTERED in TRAINING_FILES and len(list(read_table(tmp_path / "m" / FILTERED))) == 6
    assert (tmp_path / "m" / PAIRS).is_file()


def test_a_rerun_with_other_files_is_refused_and_the_same_files_resume(tmp_path):
    table = raw_text_system(tmp_path / "system")
    dev, test = texts(tmp_path)
    model = tmp_path / "m"
    selection = PairsFor.of([dev, test], None, table=table)
    train(table, model, TINY, CPU, TrainingLimits(max_updates=2, valid_every=2), pairs_for=selection)
    # the same files in another order: the same job, resumed
    again = PairsFor.of([test, dev], None, table=table)
    train(table, model, TINY, CPU, TrainingLimits(max_updates=3, valid_every=3), pairs_for=again)
    assert load_checkpoint(model / LAST)["update"] == 3
    other = tmp_path / "other.en"
    other.write_text("c\n")
    with pytest.raises(PysmtError, match=r"--pairs-for \(2\): .*test.en.* -> none.*--force"):
        train(table, model, TINY, CPU, TrainingLimits(max_updates=4), pairs_for=PairsFor.of([dev], None, table=table))
    with pytest.raises(PysmtError, match=r"--pairs-for: .*dev.en.* -> .*other.en"):
        train(
            table,
            model,
            TINY,
            CPU,
            TrainingLimits(max_updates=4),
            pairs_for=PairsFor.of([other, test], None, table=table),
        )
    with pytest.raises(PysmtError, match=r"--pairs-for: .*dev.en.* -> none"):  # the whole table is another job
        train(table, model, TINY, CPU, TrainingLimits(max_updates=4))
    with pytest.raises(PysmtError, match=r"--pairs-for --prepared: none -> "):
        train(table, model, TINY, CPU, TrainingLimits(max_updates=4), pairs_for=replace(selection, prepared=True))
    assert load_checkpoint(model / LAST)["update"] == 3
    # --force: afresh on the other file's pairs
    train(
        table,
        model,
        TINY,
        CPU,
        TrainingLimits(max_updates=1, valid_every=1),
        force=True,
        pairs_for=PairsFor.of([other], None, table=table),
    )
    assert [line.split(" ||| ")[0] for line in lines(model / FILTERED)] == ["c"]


def test_pairs_for_mistakes_are_one_line_errors(tmp_path):
    table = raw_text_system(tmp_path / "system")
    dev, _ = texts(tmp_path)
    with pytest.raises(PysmtError, match=r"^--pairs-for .*missing.en: no such file$"):
        PairsFor.of([dev, tmp_path / "missing.en"], None, table=table)
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text(PHRASES)
    with pytest.raises(PysmtError, match=r"no pysmt.toml beside --phrase-table .*elsewhere.txt: give -c"):
        PairsFor.of([dev], None, table=elsewhere)
    (tmp_path / "nothing.en").write_text("q r s\n")
    with pytest.raises(PysmtError, match=r"none of the 10 pairs of .* has a source phrase in .*nothing.en"):
        selection = PairsFor.of([tmp_path / "nothing.en"], table.parent / "pysmt.toml", table=elsewhere)
        train(elsewhere, tmp_path / "m", TINY, CPU, TrainingLimits(max_updates=1), pairs_for=selection)
    assert not (tmp_path / "m" / FILTERED).exists()
    # through the command line (loads torch: one run)
    proc = run_pysmt(
        "rnn", "train", "--phrase-table", table, "--out", tmp_path / "cli", "--pairs-for", tmp_path / "missing.en"
    )
    one_line_error(proc, "--pairs-for", "missing.en: no such file")
    assert not (tmp_path / "cli").exists()


@pytest.mark.slow  # a whole tune, train or several decodes: seconds (the fast tier stays under 2 minutes)
def test_rnn_score_pairs_for_scores_only_the_pairs_of_those_files(tmp_path):
    """`pysmt rnn score --pairs-for` on a binary table: the entries of the files' source phrases get the scores
    an unrestricted run gives, the others NaN (the decoder asks the network about them); the record says so,
    and the `rnn` feature's column takes them as this model's."""
    import math

    import numpy as np

    from pysmt.binarize import binarize_system
    from pysmt.decoder import Decoder
    from pysmt.plugin import stored_scores
    from pysmt.plugin.systems import PhraseTable
    from pysmt.testing import configure_system
    from rnn_feature.scoring import store_table_scores
    from rnn_feature.store import load_model, stored_by

    table = raw_text_system(tmp_path / "system")
    dev, test = texts(tmp_path)
    train(table, tmp_path / "m", TINY, CPU, TrainingLimits(max_updates=2, valid_every=2))
    config = binarize_system(load_config(table.parent / "pysmt.toml"), tmp_path / "bin")
    folder = next((tmp_path / "bin").glob("*phrase-table*"))
    proc = run_pysmt(
        "rnn", "score", "--model", tmp_path / "m", "--phrase-table", folder, "--pairs-for", dev, "--pairs-for", test
    )
    assert proc.returncode == 0, proc.stderr
    assert f"6 of {len(PHRASES.splitlines())} entries have a --pairs-for source phrase" in proc.stderr
    ((restricted, record),) = stored_scores(folder).values()
    assert record["made_by"]["pairs_for"] and record["made_by"].items() >= stored_by(tmp_path / "m").items()
    restricted = np.array(restricted)
    phrases = PhraseTable(folder)
    sources = {entry.row: source for source in ("a", "b", ",", "a ,", ".", "b .") for entry in phrases.lookup(source)}
    assert [row for row in range(len(phrases)) if not math.isnan(restricted[row, 0])] == sorted(sources)
    # run again, the same model's scores are kept as they are
    stored_at = (folder / "stored" / "rnn.npy").stat().st_mtime_ns
    again = run_pysmt(
        "rnn", "score", "--model", tmp_path / "m", "--phrase-table", folder, "--pairs-for", dev, "--pairs-for", test
    )
    assert again.returncode == 0 and "stored scores are this model's already" in again.stderr, again.stderr
    assert (folder / "stored" / "rnn.npy").stat().st_mtime_ns == stored_at
    model, source_vocab, target_vocab = load_model(tmp_path / "m")
    store_table_scores(model, source_vocab, target_vocab, folder, stored_by(tmp_path / "m"))  # every entry
    ((whole, _),) = stored_scores(folder).values()
    assert np.array_equal(np.array(whole)[sorted(sources)], restricted[sorted(sources)])
    assert not np.isnan(np.array(whole)).any()
    # the restricted scores are this model's column
    store_table_scores(model, source_vocab, target_vocab, folder, record["made_by"], only={"a", "b"})
    params = [f"rnn.model={tmp_path / 'm'}", "rnn.device=cpu", "rnn.mode=column"]
    rnn = Decoder(configure_system(config, ["rnn"], params)).features[-1]
    assert np.isnan(rnn.stored_columns("PhraseDictionaryMemory0")).sum() == len(phrases) - 2
    # a text table's lines all get a score: --pairs-for is refused there
    one_line_error(
        run_pysmt(
            "rnn",
            "score",
            "--model",
            tmp_path / "m",
            "--phrase-table",
            table,
            "--out",
            tmp_path / "s.gz",
            "--pairs-for",
            dev,
        ),
        "--pairs-for: only for a binary table",
    )
