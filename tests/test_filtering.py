"""``pysmt filter`` (pysmt/filtering.py): the filtered system applies the full one's preprocessing and
translates exactly as it does, and is never written into the system's own folder."""

from __future__ import annotations

from pathlib import Path

from pysmt.config_files import load_config
from tests.helpers import fails, pysmt, raw_text_system


def filtered_system(tmp_path: Path, text: str) -> tuple[Path, Path, Path]:
    """A raw-text system, an input, and the system filtered to it: their paths (system and filtered configs)."""
    toml = raw_text_system(tmp_path / "system")
    source = tmp_path / "raw.txt"
    source.write_text(text)
    assert pysmt("filter", "-c", str(toml), "-i", str(source), "-o", str(tmp_path / "filtered")).returncode == 0
    return toml, source, tmp_path / "filtered" / "pysmt.toml"


def test_filter_applies_the_systems_preprocessing(tmp_path):
    toml, source, filtered = filtered_system(tmp_path, "a, b.\nb.\n")
    from pysmt.models.phrase_table import PhraseTable
    table = PhraseTable(load_config(filtered).feature("PhraseDictionaryMemory0").params["path"])
    assert sorted(table.sources) == [",", ".", "a", "a ,", "b", "b ."]  # tokenized n-grams, not "a,"
    full = pysmt("decode", "-c", str(toml), "-i", str(source))
    assert full.returncode == 0 and full.stdout == pysmt("decode", "-c", str(filtered), "-i", str(source)).stdout
    assert load_config(filtered).processing == load_config(toml).processing


def test_filter_into_the_systems_own_folder_is_refused(tmp_path):
    toml = raw_text_system(tmp_path / "system")
    before = toml.read_bytes()
    source = tmp_path / "raw.txt"
    source.write_text("a, b.\n")
    fails(pysmt("filter", "-c", str(toml), "-i", str(source), "-o", str(toml.parent)), 1, "is also the input --config")
    assert toml.read_bytes() == before


def test_a_filtered_system_binarized_keeps_its_tables_names_short(tmp_path):
    toml, source, filtered = filtered_system(tmp_path, "a, b.\n")
    assert pysmt("binarize", "-c", str(filtered), "-o", str(tmp_path / "bin")).returncode == 0
    spec = load_config(filtered).feature("PhraseDictionaryMemory0")
    k = load_config(filtered).features.index(spec)
    table = Path(load_config(toml).feature("PhraseDictionaryMemory0").params["path"]).name.removesuffix(".gz")
    assert Path(spec.params["path"]).name == f"{k}.phrase-table.{table}.gz"
    binary = load_config(tmp_path / "bin" / "pysmt.toml").feature("PhraseDictionaryMemory0").params["path"]
    assert Path(binary).name == f"{k}.phrase-table.{table}.bin"  # not {k}.phrase-table.{k}.phrase-table...
    assert pysmt("decode", "-c", str(tmp_path / "bin" / "pysmt.toml"), "-i", str(source)).stdout == \
        pysmt("decode", "-c", str(toml), "-i", str(source)).stdout
