"""Command-line options declared on the dataclasses that carry them, so that each option's name, default,
type, choices and help live in one place (as fairseq's dataclass configs make its command line).

A field says how it is given on the command line in its metadata, made by :func:`option`::

    @dataclass(kw_only=True)
    class TuningOptions:
        nbest_size: int = field(default=100, metadata=option(type=POSITIVE,
                                                             help="N-best entries per sentence and iteration."))

``@options_of(TuningOptions)`` then gives a click command ``--nbest-size INTEGER RANGE  N-best entries
per sentence and iteration.  [default: 100; x>=1]``, one option per field that declares one, in the
fields' order: its name is the field's (``nbest_size``: ``--nbest-size``) unless the declaration names
it, its default is the field's (a field without one makes a required option) unless the declaration
gives the command line its own (``default="1G"`` where the field holds bytes), and it is shown in
``--help`` unless it is None, a flag or repeatable. The command builds the dataclass by name,
``from_command(TuningOptions, given, ...)``, never by position: the options dataclasses are
keyword-only. An option that several commands give alike is one metadata object (:mod:`pysmt.shared_options`),
on a field or, for a command with no dataclass, through :func:`command_option`.

A field that holds a dataclass of options several commands share (the system a command decodes with,
:class:`~pysmt.decoding.options.SystemOptions`) says so in its metadata, made by :func:`nested`: its
dataclass's options are the command's, where the field sits, and :func:`from_command` builds it from them.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import MISSING, Field, dataclass, fields
from typing import TYPE_CHECKING, Any, TypeVar

import click

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

#: The key of a field's command-line declaration in its metadata.
OPTION = "pysmt.option"
#: The key, in a field's metadata, of the options dataclass the field holds (:func:`nested`).
NESTED = "pysmt.nested"

#: The largest integer the compiled core takes (a C++ ``int``): every count a user gives is bounded by it at the
#: edge, so that a larger one is a usage error naming its option, not a pybind11 ``TypeError`` deep inside.
MAX_INT = 2**31 - 1


class CoreInt(click.IntRange):
    """An integer within ``min``/``max`` (shown in ``--help`` as click shows a range) and within a C++ ``int``
    (not shown: no user means a count that large, but one typed by mistake is a usage error, exit 2)."""

    def __init__(self, min: int | None = None, max: int | None = None) -> None:
        super().__init__(min=min, max=max)
        if min is None and max is None:
            self.name = "integer"  # shown as INTEGER, as click's int

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not -MAX_INT - 1 <= number <= MAX_INT:
            self.fail(f"{number} is beyond what the compiled core takes (-{MAX_INT + 1} to {MAX_INT})", param, ctx)
        return number


#: A count of at least one.
POSITIVE = CoreInt(min=1)
#: An integer the core can take (its own checks say which ones make sense).
CORE_INT = CoreInt()

F = TypeVar("F", bound=Callable[..., Any])
D = TypeVar("D", bound="DataclassInstance")


@dataclass(frozen=True)
class Option:
    """How a value is given on the command line: ``click.option``'s declarations and settings, and how
    the value click gives becomes the field's."""

    declarations: tuple[str, ...]
    settings: Mapping[str, Any]
    convert: Callable[[Any], Any] | None = None

    def value(self, given: Any) -> Any:
        """The value click gave, as the field holds it: converted (None, an option not given, stays None),
        and each of a repeatable option's values converted, in a list."""
        convert = self.convert or (lambda value: value)
        if self.settings.get("multiple"):
            return [convert(value) for value in given]
        return None if given is None else convert(given)


def option(*declarations: str, convert: Callable[[Any], Any] | None = None, **settings: Any) -> Mapping[str, Option]:
    """A field's metadata saying it is a command-line option: ``click.option(*declarations, **settings)``.

    ``declarations`` are the option's names (``"-c", "--config"``; none: the field's, dashed); ``settings``
    are click's (``type``, ``help``, ``multiple``, ``is_flag``, ``metavar``, ``show_default``, and
    ``default`` where the command line's differs from the field's); ``convert`` makes the field's value
    from what click gives (a scale's name into the scale).
    """
    return {OPTION: Option(declarations, settings, convert)}


def nested(cls: type[DataclassInstance]) -> Mapping[str, type[DataclassInstance]]:
    """A field's metadata saying it holds a ``cls``, whose fields' options are the command's, in the field's
    place (:func:`options_of`; :func:`from_command` builds it)."""
    return {NESTED: cls}


def command_option(name: str, metadata: Mapping[str, Any], **settings: Any) -> Callable[[F], F]:
    """The click option that ``metadata`` (made by :func:`option`) declares, for the command parameter ``name``.

    ``settings`` add to the declared ones: a field's default, or a command's own where no dataclass
    carries the option (``command_option("threads", DECODING_THREADS, default=1)``).
    """
    declared: Option = metadata[OPTION]
    settings = {**declared.settings, **settings}
    shown = settings.get("default") is not None and not settings.get("is_flag") and not settings.get("multiple")
    settings.setdefault("show_default", shown)
    return click.option(*(declared.declarations or (f"--{name.replace('_', '-')}",)), name, **settings)


def field_default(declared: Field[Any]) -> dict[str, Any]:
    """A field's default as its option's setting: none where the option declares its own, required
    where the field has none."""
    if "default" in declared.metadata[OPTION].settings:
        return {}
    if declared.default is not MISSING:
        return {"default": declared.default}
    if declared.default_factory is not MISSING:
        return {"default": declared.default_factory()}
    return {"required": True}


def field_options(chosen: Iterable[Field[Any]]) -> list[Callable[[F], F]]:
    """The click options of ``chosen`` fields, in their order: each field's that declares one, and in a
    :func:`nested` field's place its dataclass's."""
    decorators: list[Callable[[F], F]] = []
    for f in chosen:
        if NESTED in f.metadata:
            decorators += field_options(fields(f.metadata[NESTED]))
        elif OPTION in f.metadata:
            decorators.append(command_option(f.name, f.metadata, **field_default(f)))
    return decorators


def options_of(cls: type[DataclassInstance], start: str | None = None, stop: str | None = None) -> Callable[[F], F]:
    """A decorator that gives a click command the options of ``cls``'s fields, in their order (a
    :func:`nested` field's: its dataclass's, there).

    ``start`` and ``stop`` (field names; ``stop`` excluded) take a slice of the fields, for a command
    that lists options of its own among them.
    """
    every = fields(cls)
    names = [f.name for f in every]
    chosen = every[names.index(start) if start else 0 : names.index(stop) if stop else len(every)]
    decorators: list[Callable[[F], F]] = field_options(chosen)

    def decorate(function: F) -> F:
        for decorator in reversed(decorators):
            function = decorator(function)
        return function

    return decorate


def from_command(cls: type[D], given: Mapping[str, Any], **values: Any) -> D:
    """``cls`` built by name from a command's keyword arguments ``given``: each field with an option takes
    its value from there, as its option converts it, unless ``values`` give it; ``values`` give the
    fields that are no option of this command. A :func:`nested` field is built the same way, its fields that
    are no option given by a mapping in ``values`` (``system={"config": path}``), unless ``values`` give the
    dataclass itself."""
    for f in fields(cls):
        if NESTED in f.metadata and not isinstance(values.get(f.name), f.metadata[NESTED]):
            values[f.name] = from_command(f.metadata[NESTED], given, **values.get(f.name, {}))
        elif OPTION in f.metadata and f.name in given and f.name not in values:
            values[f.name] = f.metadata[OPTION].value(given[f.name])
    return cls(**values)


def flat_keywords(name: str) -> Callable[[type[D]], type[D]]:
    """A class decorator for an options dataclass whose field ``name`` is :func:`nested`: its constructor still
    takes the nested dataclass's fields as its own keywords (``TuningOptions(config=...)``, as it did before they
    moved into the nested one), with a ``DeprecationWarning`` naming the new spelling, so that callers written
    against the flat one (plugins, scripts) keep working."""

    def decorate(cls: type[D]) -> type[D]:
        inner = next(f.metadata[NESTED] for f in fields(cls) if f.name == name)
        moved = {f.name for f in fields(inner)}
        init = cls.__init__

        @functools.wraps(init)
        def __init__(self: D, **values: Any) -> None:
            flat = {key: values.pop(key) for key in list(values) if key in moved}
            if flat:
                warnings.warn(
                    f"{cls.__name__}({', '.join(f'{key}=' for key in flat)}...) is now "
                    f"{cls.__name__}({name}={inner.__name__}(...)); give them so",
                    DeprecationWarning,
                    2,
                )
                values[name] = inner(**flat)
            init(self, **values)

        setattr(cls, "__init__", __init__)
        return cls

    return decorate
