"""``pysmt train``'s binarize step: the system it writes loads binary tables, keeps the text ones for
Moses, decodes as the text tables do, resumes (also a folder trained before the step existed), and
``tune`` keeps naming the binary tables.

On the hand-made five-line bitext of test_training_reliability.py (a whole training takes a second or two).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pysmt.config_files import load_config
from pysmt.testing import run_pysmt
from tests.helpers import tune_command
from tests.training.test_training_reliability import EN, FR, assert_one_line_error, train

TABLES = {
    "phrase-table": ("phrase-table.bin", "phrase-table.gz"),
    "lexical-reordering": (
        "reordering-table.wbe-msd-bidirectional-fe.bin",
        "reordering-table.wbe-msd-bidirectional-fe.gz",
    ),
}


def table_paths(config: Path) -> dict[str, Path]:
    """The tables the config names, by feature type."""
    return {spec.type: Path(spec.params["path"]) for spec in load_config(config).features if spec.type in TABLES}


def text_config(system: Path) -> Path:
    """The system's config made to name the text tables (as ``pysmt train`` wrote it before the binarize step)."""
    text = system / "pysmt.toml"
    toml = text.read_text(encoding="utf-8")
    for binary, gz in TABLES.values():
        toml = toml.replace(f'"{binary}"', f'"{gz}"')
    text.write_text(toml, encoding="utf-8")
    return text


def rerun(files: dict[str, Path], *extra: str):  # noqa: ANN201 - subprocess.CompletedProcess
    return train("--corpus", files["c"], "--alignment", files["al"], "--out", files["out"], *extra)


def test_the_config_names_the_binary_tables_and_the_text_ones_stay(trained):
    out = trained["out"]
    assert table_paths(out / "pysmt.toml") == {kind: out / binary for kind, (binary, _) in TABLES.items()}
    toml = (out / "pysmt.toml").read_text(encoding="utf-8")
    assert 'path = "phrase-table.bin"' in toml and 'path = "reordering-table.wbe-msd-bidirectional-fe.bin"' in toml
    for binary, gz in TABLES.values():
        assert (out / binary / "header.json").is_file() and (out / gz).is_file()
    assert (out / "steps" / "binarize.done").is_file()


def test_the_binary_system_decodes_as_the_text_one(system):
    source = "\n".join(EN + ["the small house runs", "a house dog"]) + "\n"
    binary = run_pysmt("decode", "-c", system["out"] / "pysmt.toml", "--nbest", system["out"] / "b.nbest", input=source)
    text = run_pysmt("decode", "-c", text_config(system["out"]), "--nbest", system["out"] / "t.nbest", input=source)
    assert binary.returncode == 0 and text.returncode == 0, binary.stderr + text.stderr
    assert binary.stdout == text.stdout and binary.stdout.splitlines()[:5] == FR
    assert (system["out"] / "b.nbest").read_text() == (system["out"] / "t.nbest").read_text()


def test_a_folder_trained_before_the_binarize_step_gets_it_from_a_plain_rerun(system):
    out = system["out"]
    for binary, _ in TABLES.values():
        shutil.rmtree(out / binary)
    (out / "steps" / "binarize.done").unlink()
    text_config(out)
    early = rerun(system, "--first-step", "config")
    assert_one_line_error(
        early,
        "step config needs phrase-table.bin, which step binarize makes: run pysmt train with --first-step binarize "
        "(or earlier)",
    )
    proc = rerun(system)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stderr.count("done already") == 6 and "step binarize ..." in proc.stderr
    assert "step config: redone, as step binarize ran again" in proc.stderr
    assert table_paths(out / "pysmt.toml") == {kind: out / binary for kind, (binary, _) in TABLES.items()}
    again = rerun(system)
    assert again.returncode == 0 and again.stderr.count("done already") == 8


def test_a_removed_binary_table_is_made_again(system):
    out = system["out"]
    shutil.rmtree(out / "reordering-table.wbe-msd-bidirectional-fe.bin")
    proc = rerun(system)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "step binarize ..." in proc.stderr and "step config: redone" in proc.stderr
    assert (out / "reordering-table.wbe-msd-bidirectional-fe.bin" / "header.json").is_file()


@pytest.mark.slow  # a tuning
def test_tune_keeps_the_binary_tables(system, tmp_path):
    src, ref = tmp_path / "dev.en", tmp_path / "dev.fr"
    src.write_text("\n".join(EN) + "\n")
    ref.write_text("\n".join(FR) + "\n")
    proc = run_pysmt(*tune_command(system["out"] / "pysmt.toml", src, ref, tmp_path / "tune"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert table_paths(tmp_path / "tune" / "pysmt.toml") == table_paths(system["out"] / "pysmt.toml")
