"""Cut a system's tables down to the phrases an input can use (Moses' ``filter-model-given-input.pl``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from pysmt.config import FeatureSpec, SystemConfig
from pysmt.config_files import write_toml
from pysmt.decoder import text_processors
from pysmt.features.registry import system_inputs
from pysmt.files.outputs import check_outputs
from pysmt.files.progress import progress_bar
from pysmt.files.textio import atomic_writer, read_lines
from pysmt.models.phrase_table import FIELD_SEPARATOR
from pysmt.running.folder_lock import locked_folder

#: Feature types whose table is keyed by source phrase and can be filtered.
FILTERABLE = ("phrase-table", "lexical-reordering")


def source_phrases(input_path: str | Path, max_length: int, prepare: Callable[[str], str] | None = None) -> set[str]:
    """Every word n-gram (n <= max_length) of the input, after ``prepare``, words joined by single spaces."""
    phrases: set[str] = set()
    for _, line in read_lines(input_path):
        words = (prepare(line) if prepare else line).split()
        for start in range(len(words)):
            for end in range(start + 1, min(len(words), start + max_length) + 1):
                phrases.add(" ".join(words[start:end]))
    return phrases


def input_phrases(config: SystemConfig, inputs: Iterable[str | Path], *, prepared: bool = False) -> set[str]:
    """The source phrases the decoder of ``config`` can look up for these inputs: what :func:`filter_system` keeps.

    Unless ``prepared``, each input goes through the system's [processing] first, as ``decode``
    would take it; phrases are at most the system's maximum phrase length.
    """
    source_text, _ = text_processors(None if prepared else config.processing)
    prepare = source_text.prepare if source_text else None
    keep: set[str] = set()
    for path in inputs:
        keep |= source_phrases(path, config.search.max_phrase_length, prepare)
    return keep


def filter_table(path: str | Path, keep: set[str], out_path: Path) -> tuple[int, int]:
    """Copy the lines of a table whose source phrase is in ``keep``; return (kept, read)."""
    kept = read = 0
    with atomic_writer(out_path) as out:
        for _, line in progress_bar(read_lines(path), desc=f"filter {Path(path).name}", unit=" lines", leave=False):
            read += 1
            if " ".join(line.split(FIELD_SEPARATOR, 1)[0].split()) in keep:
                out.write(line + "\n")
                kept += 1
    return kept, read


def filtered_name(k: int, spec: FeatureSpec) -> str:
    return spec.table_file(k, "gz")


def filter_system(config: SystemConfig, input_path: str | Path, out_dir: str | Path, *, prepared: bool = False) -> Path:
    """Write filtered copies of the tables and a ``pysmt.toml`` that uses them; return the config path.

    Unless ``prepared``, the input goes through the system's [processing] first, as ``decode``
    would take it. Every other path of the system (models, plugins' folders, truecasers) is
    written relative to the new config, so the filtered system translates the input as the full one.
    """
    out_dir = Path(out_dir)
    # binary tables (pysmt binarize) load in milliseconds whatever their size: they stay as they are
    tables = {
        k: spec
        for k, spec in enumerate(config.features)
        if spec.type in FILTERABLE and "path" in spec.params and not Path(spec.params["path"]).is_dir()
    }
    outputs = {f"--out {out_dir} (its pysmt.toml)": out_dir / "pysmt.toml"}
    outputs.update(
        {
            f"--out {out_dir} (its {filtered_name(k, spec)})": out_dir / filtered_name(k, spec)
            for k, spec in tables.items()
        }
    )
    check_outputs(outputs, {"--input": input_path, **system_inputs(config)}, folders={"--out": out_dir}, create=True)
    keep = input_phrases(config, [input_path], prepared=prepared)
    with locked_folder(out_dir):  # creates it; a second run into it is refused
        paths = {k: out_dir / filtered_name(k, spec) for k, spec in tables.items()}
        for k, spec in tables.items():
            kept, read = filter_table(spec.params["path"], keep, paths[k])
            print(f"pysmt filter: {spec.name}: kept {kept:,} of {read:,} lines -> {paths[k]}")
        out_config = out_dir / "pysmt.toml"
        write_toml(config.with_table_paths(paths), out_config)
    return out_config
