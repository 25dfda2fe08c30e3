"""Binarize a system's tables (``pysmt binarize``): memory-mapped phrase and reordering tables.

The binary format is described in :mod:`pysmt.models.binary_table`. ``binarize_system`` follows
``filter_system``: outputs are checked against every input before any work, each table becomes a
folder in the output folder, and a ``pysmt.toml`` there points at them (every other path of the
system, the language model included, relative to the new file), so the binarized system
translates exactly as the text one.
"""

from __future__ import annotations

from pathlib import Path

from pysmt.config import FeatureSpec, SystemConfig
from pysmt.config_files import write_toml
from pysmt.errors import PysmtError
from pysmt.features.registry import system_inputs
from pysmt.features.table_binarizing import BINARIZABLE, binarize_feature_table, table_options
from pysmt.files.outputs import check_outputs
from pysmt.models.binary_writer import check_replaceable, link_table
from pysmt.running.folder_lock import locked_folder


def binary_name(k: int, spec: FeatureSpec) -> str:
    """The folder a feature's table is binarized into: ``<index>.<type>.<table name without .gz>.bin``."""
    return spec.table_file(k, "bin")


def inside(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder.resolve())


def binarize_system(
    config: SystemConfig, out_dir: str | Path, memory: int = 1 << 30, temp_dir: Path | None = None
) -> Path:
    """Write binary copies of the system's phrase and reordering tables and a ``pysmt.toml`` using them,
    each sorted within ``memory`` bytes (runs spilled to ``temp_dir``, default beside the table).

    Tables that already are binary folders are linked (:func:`~pysmt.models.binary_writer.link_table`: hard
    links, no time, no room), so that ``out_dir`` is a system of its own whatever it was made from (``pysmt
    train`` writes binary tables; ``pysmt experiment`` stores the RNN's scores with its binarized system's
    tables); a table already in ``out_dir`` under its name stays as it is. Returns the new config's path.
    """
    out_dir = Path(out_dir)
    with_tables = {
        k: spec for k, spec in enumerate(config.features) if spec.type in BINARIZABLE and "path" in spec.params
    }
    tables = {k: spec for k, spec in with_tables.items() if not Path(spec.params["path"]).is_dir()}
    linked = {
        k: spec
        for k, spec in with_tables.items()
        if k not in tables and Path(spec.params["path"]).resolve() != (out_dir / binary_name(k, spec)).resolve()
    }
    settings = {k: table_options(spec) for k, spec in tables.items()}  # a bad model name fails before any work
    folders = {
        f"--out {out_dir} (its {binary_name(k, spec)})": out_dir / binary_name(k, spec)
        for k, spec in (tables | linked).items()
    }
    inputs = system_inputs(config)
    check_outputs(
        {f"--out {out_dir} (its pysmt.toml)": out_dir / "pysmt.toml"},
        inputs,
        folders={"--out": out_dir, **folders},
        create=True,
    )
    for label, folder in folders.items():
        for input_label, paths in inputs.items():
            for path in paths:
                if inside(path, folder):
                    raise PysmtError(
                        f"{label} would replace the folder holding the input {input_label} {path}: choose another --out"
                    )
        check_replaceable(folder)
    with locked_folder(out_dir):  # creates it; a second run into it is refused
        written = {k: out_dir / binary_name(k, spec) for k, spec in tables.items()}
        for k, spec in tables.items():
            header = binarize_feature_table(spec, written[k], memory, temp_dir, settings[k])
            counts = ", ".join(f"{value:,} {name}" for name, value in header["counts"].items())
            print(f"pysmt binarize: {spec.name}: {counts} -> {written[k]}")
        for k, spec in linked.items():
            written[k] = out_dir / binary_name(k, spec)
            link_table(Path(spec.params["path"]), written[k])
            print(f"pysmt binarize: {spec.name}: binary already, linked -> {written[k]}")
        out_config = out_dir / "pysmt.toml"
        write_toml(config.with_table_paths(written), out_config)
    return out_config
