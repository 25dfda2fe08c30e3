"""System configuration as data: the :class:`SystemConfig` that ``pysmt.toml`` and Moses' ``moses.ini``
both become (read and written by :mod:`pysmt.config_files`, which shows the TOML layout), and the
checks of its values. Nothing here needs to know which features exist.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal

from pysmt.errors import PysmtError


@dataclass
class SearchConfig:
    """Search parameters; the defaults are Moses' so that a ``moses.ini`` behaves as in Moses."""

    algorithm: Literal["normal", "cube"] = "normal"
    stack_size: int = 200
    beam_threshold: float = 1e-5
    pop_limit: int = 1000
    distortion_limit: int = 6
    max_phrase_length: int = 20
    #: Cube pruning with stateful plugin features: pops per round, whose new candidates are scored together.
    pops_per_round: int = 32

    def validate(self, where: str) -> None:
        for f in fields(SearchConfig):
            kind = {"int": int, "float": float, "str": str}.get(str(f.type), str)
            value = typed_value(getattr(self, f.name), kind, f"{where}: [search] {f.name.replace('_', '-')}")
            setattr(self, f.name, value)
        if self.algorithm not in ("normal", "cube"):
            raise PysmtError(f"{where}: search algorithm must be 'normal' or 'cube', not {self.algorithm!r}")
        if min(self.stack_size, self.pop_limit, self.max_phrase_length, self.pops_per_round) < 1:
            raise PysmtError(f"{where}: stack-size, pop-limit, max-phrase-length and pops-per-round must be positive")
        if not 0.0 <= self.beam_threshold < 1.0:
            raise PysmtError(f"{where}: beam-threshold must be in [0, 1)")
        if self.distortion_limit < -1:
            raise PysmtError(f"{where}: distortion-limit must be -1 (unlimited) or more")


def typed_value(value: Any, kind: type, where: str) -> Any:
    """``value`` as a config value of ``kind`` (int, float, bool or str), or an error naming ``where``.

    moses.ini gives every value as a string, TOML gives typed values; both are accepted, but a
    float is no int, a bool no number, and numbers must be finite.
    """
    try:
        if kind is bool:
            if isinstance(value, bool):
                return value
            if str(value).lower() in ("1", "true", "yes", "0", "false", "no"):
                return str(value).lower() in ("1", "true", "yes")
            raise ValueError
        if kind is int:
            if isinstance(value, bool) or isinstance(value, float):
                raise ValueError
            return int(value)
        if kind is float:
            if isinstance(value, bool):
                raise ValueError
            number = float(value)
            if not math.isfinite(number):
                raise ValueError
            return number
        if isinstance(value, (dict, list)):
            raise ValueError
        return str(value)
    except (TypeError, ValueError):
        article = {"int": "an integer", "float": "a finite number", "bool": "true or false"}.get(
            kind.__name__, "a string"
        )
        raise PysmtError(f"{where} must be {article}, not {value!r}") from None


def finite_weights(values: list[Any], where: str) -> list[float]:
    """Weights as floats; anything but a finite number (nan, inf, text) is an error naming ``where``."""
    return [typed_value(v, float, f"{where}: weight {k + 1}") for k, v in enumerate(values)]


@dataclass
class ProcessingConfig:
    """How raw text becomes model tokens (and back): what ``pysmt train`` did to its corpus.

    Written as ``[processing]`` in pysmt.toml; truecase model paths are relative to the file.
    """

    source_language: str
    target_language: str
    tokenize: bool = True
    truecase_source: str | None = None
    truecase_target: str | None = None


PROCESSING_PATHS = ("truecase_source", "truecase_target")


@dataclass
class FeatureSpec:
    """One feature of the log-linear model as configured: its type, label, parameters and weights."""

    type: str
    name: str
    params: dict[str, Any] = field(default_factory=dict)
    weights: list[float] | None = None

    def table_file(self, k: int, extension: str) -> str:
        """The name of a file made from this (k-th) feature's table by filter or binarize:
        ``<k>.<type>.<table name>.<extension>``, the table name without ``.gz`` and without the
        ``<k>.<type>.`` a made table's name already starts with (so a filtered table binarized is
        ``3.phrase-table.phrase-table.bin``, not ``3.phrase-table.3.phrase-table.phrase-table.bin``)."""
        table = re.sub(rf"^\d+\.{re.escape(self.type)}\.", "", Path(self.params["path"]).name.removesuffix(".gz"))
        return f"{k}.{self.type}.{table}.{extension}"


@dataclass
class SystemConfig:
    """Everything the decoder needs to build a system, independent of the file format it came from."""

    path: Path
    features: list[FeatureSpec]
    search: SearchConfig = field(default_factory=SearchConfig)
    processing: ProcessingConfig | None = None
    #: The weights file (``--weights``) whose weights replaced the config's, if any: named in messages.
    weights_file: str | None = None

    @property
    def directory(self) -> Path:
        return self.path.parent

    def feature(self, name: str) -> FeatureSpec:
        for spec in self.features:
            if spec.name == name:
                return spec
        raise PysmtError(f"{self.path}: no feature named {name!r}")

    def with_weights(self, weights: dict[str, list[float]], source: str) -> SystemConfig:
        """A copy whose features take the given weights (by feature name)."""
        names = {spec.name for spec in self.features}
        unknown = sorted(set(weights) - names)
        if unknown:
            raise PysmtError(
                f"{source}: weights for unknown feature(s) {', '.join(unknown)}; "
                f"the system has {', '.join(sorted(names))}"
            )
        features = [
            replace(spec, weights=finite_weights(weights[spec.name], f"{source}: {spec.name}"))
            if spec.name in weights
            else spec
            for spec in self.features
        ]
        return replace(self, features=features, weights_file=source)

    def with_table_paths(self, paths: dict[int, Path]) -> SystemConfig:
        """A copy whose feature number ``k`` reads its table (its ``path``) from ``paths[k]`` (filter, binarize)."""
        features = [
            replace(spec, params={**spec.params, "path": str(Path(paths[k]).resolve())}) if k in paths else spec
            for k, spec in enumerate(self.features)
        ]
        return replace(self, features=features)
