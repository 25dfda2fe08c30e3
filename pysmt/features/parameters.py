"""A feature's parameters, declared once, as a dataclass: each field a parameter of its config section.

The field's annotation is its kind (``int``, ``float``, ``bool``, ``str`` or :class:`~pathlib.Path`,
optionally ``| None``), its default the value a section that does not give it gets (no default: the
section must give it), and :func:`parameter`'s ``help`` what it is for::

    @dataclass(frozen=True, kw_only=True)  # kw_only: parameters with and without defaults in any order
    class CslmParameters:
        model: Path = parameter(Path("cslm"), help="the model folder")
        buffer_size: int = parameter(10_000, help="requests scored in one batch")

A field's key in a config section and in ``--param`` is its name with ``-`` for ``_``
(``buffer-size``, Moses' style). A ``Path`` is a file or folder, made absolute (relative to the config
file, or to the working folder for ``--param``) and checked to exist; a ``Path`` default is relative
to the system's folder (the RNN's ``rnn``, where ``pysmt rnn train --out SYSTEM/rnn`` puts it), and is
filled in when the config is read, so that a config ``tune`` or ``filter`` writes elsewhere still
points at the same files; when it does not exist, the section must give the parameter (or, for a
``Path | None``, the feature gets None). The feature's ``check_config`` and ``from_config`` receive an instance, so
a parameter is an attribute with its type, not a string key of a dict.

This replaces the dict of kinds, ``default_paths``, ``required_parameters`` and ``require_param``
that features declared before (four places for one parameter, defaults written twice or three times):
a feature class declaring those is refused with a message saying how to convert it
(:func:`old_declarations`).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import MISSING, dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pysmt.errors import PysmtError

#: The kinds a parameter may have (optionally ``| None``).
KINDS = (int, float, bool, str, Path)
#: Class attributes of the declarations this module replaces, with what replaces each.
OLD_DECLARATIONS = {
    "default_paths": 'a Path field\'s default (model: Path = parameter(Path("rnn")))',
    "required_parameters": "a field without a default",
    "context_free": "the hook it implements: evaluate_in_isolation(pairs) or evaluate_with_source_context(options)",
    "evaluate": "evaluate_in_isolation(pairs) for scores of a phrase pair alone (what context_free = True meant), "
    "or evaluate_with_source_context(options) for a sentence's options (context_free = False)",
}


def parameter(default: Any = MISSING, *, help: str = "") -> Any:
    """A parameter of a feature's config section (a dataclass field): ``default`` (none: the section must give
    it) and ``help`` (what it is for)."""
    return dataclasses.field(default=default, metadata={"help": help})


@dataclass(frozen=True)
class NoParameters:
    """The parameters of a feature that takes none (any key in its section is an error)."""


@dataclass(frozen=True, kw_only=True)
class ScoreCount:
    """The parameters of a Moses feature that takes none but Moses' ``num-features`` (accepted as Moses writes it)."""

    num_features: int | None = parameter(None, help="the number of scores (Moses' num-features)")


@dataclass(frozen=True)
class Declared:
    """One parameter as the config readers see it."""

    key: str  # in config sections and --param: the field's name with - for _
    field: str
    kind: type
    optional: bool  # ``kind | None``
    default: Any  # MISSING: the section must give it
    help: str

    @property
    def required(self) -> bool:
        return self.default is MISSING


def declarations_error(cls: type) -> str | None:
    """What is wrong with a class's ``parameters`` declaration, or None: a dataclass whose fields each have one
    of the :data:`KINDS` (optionally ``| None``); a ``Path`` default is relative (to the system's folder)."""
    declared = getattr(cls, "parameters", NoParameters)
    if isinstance(declared, dict):
        return (
            "declares its parameters as a dict of kinds; declare them as a dataclass instead "
            "(@dataclass(frozen=True, kw_only=True) class MyParameters: path: Path = parameter(help=...); "
            "size: int = parameter(1, help=...)) and "
            "set parameters = MyParameters (docs/writing-a-feature.md, Parameters)"
        )
    if not (isinstance(declared, type) and dataclasses.is_dataclass(declared)):
        return f"parameters is {declared!r}, not a dataclass (docs/writing-a-feature.md, Parameters)"
    try:
        declarations(declared)
    except TypeError as err:
        return str(err)
    return None


def old_declarations(cls: type) -> list[str]:
    """The old-style declarations a feature class still makes, each with what replaces it."""
    return [f"{name}: use {instead}" for name, instead in OLD_DECLARATIONS.items() if name in vars(cls)]


def values_of(parameters: type, feature: str, given: dict[str, Any], base: Path | None = None) -> Any:
    """The ``parameters`` instance of a config section (``given``: checked values by key, paths absolute, the
    defaults that exist filled in; ``base``: the system's folder); a parameter the section must give and does
    not is one line naming it, with its help."""
    values = {}
    for key, declared in declarations(parameters).items():
        if key in given:
            value = given[key]
            values[declared.field] = Path(value) if declared.kind is Path and value is not None else value
        elif declared.kind is Path and isinstance(declared.default, Path) and declared.optional:
            values[declared.field] = None  # an optional path whose default does not exist: not given
        elif declared.required or (declared.kind is Path and isinstance(declared.default, Path)):
            about = [declared.help] if declared.help else []
            if isinstance(declared.default, Path):
                about.append(f"its default, {(base or Path()) / declared.default}, does not exist")
            what = f" ({'; '.join(about)})" if about else ""
            raise PysmtError(
                f"feature {feature}: missing parameter {key!r}{what}; give it in the feature's section "
                f"or with --param {feature}.{key}=VALUE"
            )
    return parameters(**values)


@cache
def declarations(parameters: type) -> dict[str, Declared]:
    """A parameters dataclass's fields, by config key (a ``TypeError`` naming the first that is not a parameter)."""
    hints = typing.get_type_hints(parameters)
    found = {}
    for item in dataclasses.fields(parameters):
        kind, optional = hints[item.name], False
        if isinstance(kind, types.UnionType) and type(None) in typing.get_args(kind):
            rest = [arg for arg in typing.get_args(kind) if arg is not type(None)]
            kind, optional = (rest[0] if len(rest) == 1 else kind), True
        if kind not in KINDS:
            raise TypeError(
                f"parameter {item.name!r} has kind {hints[item.name]!r}; kinds are int, float, bool, str "
                "and Path (optionally | None)"
            )
        if kind is Path and isinstance(item.default, Path) and item.default.is_absolute():
            raise TypeError(
                f"parameter {item.name!r}: a Path default is relative to the system's folder, not {item.default}"
            )
        key = item.name.replace("_", "-")
        found[key] = Declared(key, item.name, kind, optional, item.default, str(item.metadata.get("help", "")))
    return found
