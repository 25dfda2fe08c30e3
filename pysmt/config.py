"""System configuration as data: the :class:`SystemConfig` that ``pysmt.toml`` and Moses' ``moses.ini``
both become (read and written by :mod:`pysmt.config_files`, which shows the TOML layout), and the
checks of its values. Nothing here needs to know which features exist.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal

from pysmt.errors import PysmtError
from pysmt.files.markup import XmlInput

#: A stack size no stack reaches (the compiled core's largest int): ``stack-size = 0``, Moses' no limit.
NO_STACK_LIMIT = 2**31 - 1


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
    #: The longest input line translated, in words: a longer one is written empty with a warning naming it (its
    #: search would need memory quadratic in its length; a 2 MB line ran out of memory and stopped the run).
    max_sentence_length: int = 1000
    #: The distinct translations of a line the rescoring pass re-ranks when the system has features of complete
    #: translations (:class:`~pysmt.features.base.TranslationFeature`); unused without one.
    rescore_size: int = 100

    @property
    def stack_limit(self) -> int:
        """The hypotheses a stack keeps: ``stack_size``, or for 0 (Moses' ``-stack 0``: no histogram pruning) more than
        any stack holds, which never prunes, exactly as Moses' unlimited stack (the beam threshold still applies)."""
        return self.stack_size or NO_STACK_LIMIT

    def validate(self, where: str, names: Mapping[str, str] | None = None) -> None:
        """Check (and type) every value; an error names ``where`` and the setting, as ``names`` calls each field
        (default: ``[search] stack-size``; a command line's: ``--stack``, where ``where`` is empty)."""

        def name(key: str) -> str:
            called = (names or {}).get(key) or f"[search] {key.replace('_', '-')}"
            return f"{where}: {called}" if where else called

        for f in fields(SearchConfig):
            kind = {"int": int, "float": float, "str": str}.get(str(f.type), str)
            setattr(self, f.name, typed_value(getattr(self, f.name), kind, name(f.name)))
        if self.algorithm not in ("normal", "cube"):
            raise PysmtError(f"{name('algorithm')} must be 'normal' or 'cube', not {self.algorithm!r}")
        for key in ("pop_limit", "max_phrase_length", "pops_per_round", "max_sentence_length", "rescore_size"):
            if getattr(self, key) < 1:
                raise PysmtError(f"{name(key)} must be positive, not {getattr(self, key)}")
        if self.stack_size < 0:
            raise PysmtError(f"{name('stack_size')} must be 0 (no limit) or more, not {self.stack_size}")
        if not 0.0 <= self.beam_threshold < 1.0:
            raise PysmtError(f"{name('beam_threshold')} must be in [0, 1), not {self.beam_threshold:g}")
        if self.distortion_limit < -1:
            raise PysmtError(f"{name('distortion_limit')} must be -1 (unlimited) or more, not {self.distortion_limit}")


#: The command-line option of each search setting a command may override, as Moses names it (``-stack``,
#: ``-cube-pruning-pop-limit``, ``-beam-threshold``, ``-distortion-limit``, ``-max-phrase-length``, ``-ttable-limit``).
SEARCH_OPTIONS = {
    "stack_size": "--stack",
    "pop_limit": "--pop-limit",
    "beam_threshold": "--beam-threshold",
    "distortion_limit": "--distortion-limit",
    "max_phrase_length": "--max-phrase-length",
    "table_limit": "--table-limit",
    "max_sentence_length": "--max-sentence-length",
    "rescore_size": "--rescore-size",
}


@dataclass(frozen=True)
class SearchOverrides:
    """Search settings given on a command line (None: not given), each overriding the config's, as Moses'
    ``-stack``, ``-cube-pruning-pop-limit``, ``-beam-threshold``, ``-distortion-limit``, ``-max-phrase-length``,
    ``-ttable-limit`` (one value: every phrase table's ``table-limit``) and ``-weight-overwrite`` do. Checked
    when made, with the config's own checks; plain data, so it travels with a recipe to actors and workers."""

    stack_size: int | None = None
    pop_limit: int | None = None
    beam_threshold: float | None = None
    distortion_limit: int | None = None
    max_phrase_length: int | None = None
    table_limit: int | None = None
    max_sentence_length: int | None = None
    rescore_size: int | None = None
    #: ``--weight-overwrite``: (feature name, its weights), in the order given.
    weights: tuple[tuple[str, tuple[float, ...]], ...] = ()

    def __post_init__(self) -> None:
        self.search(SearchConfig()).validate("", SEARCH_OPTIONS)
        if self.table_limit is not None and self.table_limit < 0:
            raise PysmtError(f"--table-limit must be 0 (keep all) or more, not {self.table_limit}")

    def given(self) -> dict[str, Any]:
        """The settings given, by field name."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) not in (None, ())}

    def search(self, search: SearchConfig) -> SearchConfig:
        """``search`` with the given search settings replacing its own."""
        changes = {key: value for key, value in self.given().items() if hasattr(search, key)}
        return replace(search, **changes)

    def weight_overwrite(self) -> str:
        """``--weight-overwrite``'s value, as Moses writes it: ``Name= w1 w2 Name2= w3``."""
        return " ".join(f"{name}= {' '.join(repr(w) for w in values)}" for name, values in self.weights)

    def recorded(self) -> dict[str, Any]:
        """What a job or a report records of them: each given setting by its option's name (``pop_limit`` for
        ``--pop-limit``), the weights by feature."""
        record: dict[str, Any] = {
            SEARCH_OPTIONS[key].removeprefix("--").replace("-", "_"): value
            for key, value in self.given().items()
            if key != "weights"
        }
        if self.weights:
            record["weight_overwrite"] = {name: list(values) for name, values in self.weights}
        return record

    def arguments(self, weights: bool = True) -> list[str]:
        """The command-line arguments that give these settings again (``weights``: ``--weight-overwrite`` too)."""
        args = [
            arg
            for key, value in self.given().items()
            if key != "weights"
            for arg in (SEARCH_OPTIONS[key], repr(value) if isinstance(value, float) else str(value))
        ]
        return [*args, "--weight-overwrite", self.weight_overwrite()] if weights and self.weights else args


def parse_weight_overwrite(text: str) -> tuple[tuple[str, tuple[float, ...]], ...]:
    """Moses' ``-weight-overwrite "Name= w1 w2 Name2= w3"``: a word ending in ``=`` names a feature, the numbers
    after it are its weights. A malformed value is an error naming the option and the word."""
    where = f"--weight-overwrite {text!r}"
    named: list[tuple[str, list[float]]] = []
    for word in text.split():
        if word.endswith("="):
            name = word[:-1]
            if not name or "=" in name:
                raise PysmtError(f"{where}: {word!r} is no feature name (expected 'Name= w1 w2 Name2= w3 ...')")
            if name in (known for known, _ in named):
                raise PysmtError(f"{where}: {name} is given twice")
            named.append((name, []))
        elif not named:
            raise PysmtError(f"{where}: expected a feature name first ('Name= w1 w2 Name2= w3 ...'), found {word!r}")
        else:
            named[-1][1].append(typed_value(word, float, f"{where}: {named[-1][0]}'s weight {len(named[-1][1]) + 1}"))
    if not named:
        raise PysmtError(f"{where}: expected 'Name= w1 w2 Name2= w3 ...'")
    for name, values in named:
        if not values:
            raise PysmtError(f"{where}: {name} has no weights")
    return tuple((name, tuple(values)) for name, values in named)


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
            integer = int(value)
            if not -(2**31) <= integer < 2**31:  # what the compiled core takes (a C++ int)
                raise PysmtError(f"{where} must be from {-(2**31)} to {2**31 - 1}, not {integer}")
            return integer
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
    #: The weights of its scores in the rescoring pass's totals (a system with features of complete translations,
    #: tuned by ``pysmt tune --rerank``); None: the same as ``weights``.
    rescoring_weights: list[float] | None = None

    def table_file(self, k: int, extension: str) -> str:
        """The name of a file made from this (k-th) feature's table by filter or binarize:
        ``<k>.<type>.<table name>.<extension>``, the table name without ``.gz`` or ``.bin`` and without the
        ``<k>.<type>.`` a made table's name already starts with (so a filtered table binarized is
        ``3.phrase-table.phrase-table.bin``, not ``3.phrase-table.3.phrase-table.phrase-table.bin``, and so
        is ``pysmt train``'s ``phrase-table.bin`` binarized again)."""
        name = Path(self.params["path"]).name
        table = re.sub(rf"^\d+\.{re.escape(self.type)}\.", "", name.removesuffix(".gz").removesuffix(".bin"))
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
    #: The features whose weights ``--weight-overwrite`` gave: named in messages.
    overwritten: tuple[str, ...] = ()
    #: How markup in the input is read as the file says (moses.ini's ``[xml-input]``); None where it says nothing.
    #: A command's ``--xml-input`` wins over it, as Moses' ``-xml-input`` wins over the file's.
    xml_input: XmlInput | None = None

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
