"""``pysmt filter`` (pysmt/filtering.py): the filtered system applies the full one's preprocessing and
translates exactly as it does, and is never written into the system's own folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from pysmt.config_files import load_config
from pysmt.testing import one_line_error, run_pysmt
from tests.helpers import raw_text_system


def filtered_system(tmp_path: Path, text: str) -> tuple[Path, Path, Path]:
    """A raw-text system, an input, and the system filtered to it: their paths (system and filtered configs)."""
    toml = raw_text_system(tmp_path / "system")
    source = tmp_path / "raw.txt"
    source.write_text(text)
    assert run_pysmt("filter", "-c", toml, "-i", source, "-o", tmp_path / "filtered").returncode == 0
    return toml, source, tmp_path / "filtered" / "pysmt.toml"


def test_filter_applies_the_systems_preprocessing(tmp_path):
    toml, source, filtered = filtered_system(tmp_path, "a, b.\nb.\n")
    from pysmt.models.phrase_table import PhraseTable

    table = PhraseTable(load_config(filtered).feature("PhraseDictionaryMemory0").params["path"])
    assert sorted(table.sources) == [",", ".", "a", "a ,", "b", "b ."]  # tokenized n-grams, not "a,"
    full = run_pysmt("decode", "-c", toml, "-i", source)
    assert full.returncode == 0 and full.stdout == run_pysmt("decode", "-c", filtered, "-i", source).stdout
    assert load_config(filtered).processing == load_config(toml).processing


def test_filter_into_the_systems_own_folder_is_refused(tmp_path):
    toml = raw_text_system(tmp_path / "system")
    before = toml.read_bytes()
    source = tmp_path / "raw.txt"
    source.write_text("a, b.\n")
    one_line_error(run_pysmt("filter", "-c", toml, "-i", source, "-o", toml.parent), "is also the input --config")
    assert toml.read_bytes() == before


@pytest.mark.slow
def test_a_filtered_system_binarized_keeps_its_tables_names_short(tmp_path):
    toml, source, filtered = filtered_system(tmp_path, "a, b.\n")
    assert run_pysmt("binarize", "-c", filtered, "-o", tmp_path / "bin").returncode == 0
    spec = load_config(filtered).feature("PhraseDictionaryMemory0")
    k = load_config(filtered).features.index(spec)
    table = Path(load_config(toml).feature("PhraseDictionaryMemory0").params["path"]).name.removesuffix(".gz")
    assert Path(spec.params["path"]).name == f"{k}.phrase-table.{table}.gz"
    binary = load_config(tmp_path / "bin" / "pysmt.toml").feature("PhraseDictionaryMemory0").params["path"]
    assert Path(binary).name == f"{k}.phrase-table.{table}.bin"  # not {k}.phrase-table.{k}.phrase-table...
    assert (
        run_pysmt("decode", "-c", tmp_path / "bin" / "pysmt.toml", "-i", source).stdout
        == run_pysmt("decode", "-c", toml, "-i", source).stdout
    )
