"""The feature registry: every feature type, built-in or third-party, is an entry point.

A distribution registers features in its ``pyproject.toml``::

    [project.entry-points."pysmt.features"]
    my-feature = "my_package.module:MyFeature"

and ``pysmt decode --features my-feature`` (or a ``[[feature]] type = "my-feature"`` section)
uses it. The core never imports a plugin by name.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from pysmt.config import PROCESSING_PATHS, FeatureSpec, SystemConfig, typed_value
from pysmt.errors import PysmtError, did_you_mean
from pysmt.features.base import (
    Feature,
    StatefulFeature,
    TranslationFeature,
    in_isolation,
    scores_translations,
    with_source_context,
)
from pysmt.features.parameters import declarations, declarations_error, old_declarations, values_of
from pysmt.files.textio import require_file

ENTRY_POINT_GROUP = "pysmt.features"

#: Feature classes registered in this process only (by :func:`pysmt.testing.registered`, for tests).
IN_PROCESS: dict[str, type[Feature]] = {}


@cache
def available() -> dict[str, EntryPoint]:
    """Feature types registered as entry points, by name."""
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def registered_names() -> set[str]:
    """Every feature type: the entry points and those registered in this process."""
    return set(available()) | set(IN_PROCESS)


def feature_class(type_name: str) -> type[Feature]:
    """The class registered as ``type_name``, its declarations checked; an unknown name lists the available ones."""
    if type_name in IN_PROCESS:
        return checked_declarations(IN_PROCESS[type_name], type_name, "registered in this process")
    registered = available()
    if type_name not in registered:
        raise PysmtError(unknown_feature(type_name))
    try:
        cls = registered[type_name].load()
    except Exception as err:  # a broken plugin must not look like a pysmt bug
        raise PysmtError(f"feature {type_name!r} could not be loaded ({type(err).__name__}: {err})") from None
    if not (isinstance(cls, type) and issubclass(cls, Feature)):
        raise PysmtError(f"feature {type_name!r} ({registered[type_name].value}) is not a pysmt Feature")
    return checked_declarations(cls, type_name, registered[type_name].value)


def unknown_feature(type_name: str) -> str:
    """What to say of a feature type nobody registered: the nearest registered name (a typo) and all of them."""
    names = registered_names()
    return f"unknown feature {type_name!r}{did_you_mean(type_name, names)}; available: {', '.join(sorted(names))}"


def checked_declarations(cls: type[Feature], type_name: str, where: str) -> type[Feature]:
    """``cls``, once its class-level declarations are usable: its ``parameters`` a dataclass of parameters, at most
    one of the two evaluation hooks, none of the declarations they replaced. A mistake there would otherwise
    surface far away (a config that ``tune`` writes and cannot read back), and an old-style plugin would
    silently lose its parameters or its scores."""
    about = f"feature {type_name!r} ({where})"
    problem = declarations_error(cls)
    if problem is not None:
        raise PysmtError(f"{about}: {problem}")
    for old in old_declarations(cls):
        raise PysmtError(f"{about} declares {old} (docs/writing-a-feature.md)")
    if in_isolation(cls) and with_source_context(cls):
        raise PysmtError(
            f"{about} implements both evaluate_in_isolation and evaluate_with_source_context: a feature "
            "scores phrase pairs alone or a sentence's options, not both (make it two features)"
        )
    if scores_translations(cls):
        problem = translation_feature_error(cls)
        if problem:
            raise PysmtError(f"{about} {problem} (docs/writing-a-feature.md, A feature of complete translations)")
    return cls


def translation_feature_error(cls: type[Feature]) -> str:
    """What keeps a :class:`~pysmt.features.base.TranslationFeature` class from scoring complete translations only
    ("" when nothing does): it takes no part in the search, so a search hook of its own would silently never be
    called, and without ``score_translations`` it scores nothing."""
    if issubclass(cls, StatefulFeature):
        return (
            "is a TranslationFeature and a StatefulFeature: a feature of complete translations takes no part in the "
            "search"
        )
    for hook, found in (
        ("evaluate_in_isolation", in_isolation(cls)),
        ("evaluate_with_source_context", with_source_context(cls)),
    ):
        if found:
            return (
                f"is a TranslationFeature and implements {hook}: a feature of complete translations takes no part in "
                "the search (make it two features)"
            )
    if cls.score_translations is TranslationFeature.score_translations:  # type: ignore[attr-defined]
        return "is a TranslationFeature without score_translations"
    return ""


def default_label(type_name: str) -> str:
    """The label a feature of this type gets when the config names none (``LM`` for ``kenlm``)."""
    known = type_name in registered_names()
    return feature_class(type_name).default_label if known else type_name


def feature_params(
    type_name: str, name: str, given: dict[str, Any], base: Path, where: str, *, defaults: bool = True
) -> dict[str, Any]:
    """A feature section's parameters checked against the feature's declared ``parameters``.

    This is the one schema check of feature sections, for pysmt.toml, moses.ini and ``--param``
    alike: an unknown key (a misspelling) or a value of the wrong kind is an error naming
    ``where`` (the file or option), the feature and the key. ``Path`` parameters are made absolute
    relative to ``base`` (the config's folder) and must exist; with ``defaults`` the feature's
    ``Path`` defaults that exist are filled in the same way, so that a config written elsewhere
    later still points at them (a default that does not exist is left to :func:`values_of` to report).
    """
    return checked_params(feature_class(type_name), type_name, name, given, base, where, defaults=defaults)


def checked_params(
    cls: type[Feature],
    type_name: str,
    name: str,
    given: dict[str, Any],
    base: Path,
    where: str,
    *,
    defaults: bool = True,
) -> dict[str, Any]:
    """:func:`feature_params` of a feature class (registered or not: :func:`pysmt.testing.parameters_of`)."""
    known = declarations(cls.parameters)
    params: dict[str, Any] = {}
    for key, value in given.items():
        if key not in known:
            hint = did_you_mean(key, known)
            takes = ", ".join(sorted(known)) or "no parameters"
            raise PysmtError(f"{where}: feature {name}: unknown parameter {key!r}{hint}; {type_name} takes {takes}")
        if known[key].kind is Path:
            resolved = (base / os.path.expandvars(str(value))).resolve()
            require_file(resolved, f"{where}: feature {name}: {key}", folder_ok=True)
            params[key] = str(resolved)
        else:
            params[key] = typed_value(value, known[key].kind, f"{where}: feature {name}: {key}")
    if defaults:
        for key, declared in known.items():
            default = declared.default
            if key not in params and declared.kind is Path and isinstance(default, Path) and (base / default).exists():
                params[key] = str((base / default).resolve())
    return params


def path_parameters(type_name: str) -> set[str]:
    """The keys of a feature type's ``Path`` parameters (files and folders: inputs, written relative to a config)."""
    return {key for key, declared in declarations(feature_class(type_name).parameters).items() if declared.kind is Path}


def add_feature_types(config: SystemConfig, type_names: list[str]) -> list[FeatureSpec]:
    """The config's features plus one of each requested type the config does not already have."""
    specs = list(config.features)
    present = {spec.type for spec in specs}
    labels = [spec.name for spec in specs]
    for type_name in type_names:
        if type_name in present:
            continue
        label = default_label(type_name)
        index = sum(1 for name in labels if name.startswith(label) and name[len(label) :].isdigit())
        name = f"{label}{index}"
        specs.append(FeatureSpec(type_name, name, feature_params(type_name, name, {}, config.directory, "--features")))
        labels.append(specs[-1].name)
        present.add(type_name)
    return specs


def has_default_weights(cls: type[Feature]) -> bool:
    """Whether a feature of this class gets weights when the config gives none (known before loading it)."""
    return not cls.tunable or cls.default_weights is not Feature.default_weights


@contextmanager
def naming_feature(name: str) -> Iterator[None]:
    """A feature's check that names only a file (``model.pt: not a pysmt-cslm checkpoint``: a model's kind,
    found by the models' own code) also names the feature, so a system of several models says whose file it is."""
    try:
        yield
    except PysmtError as err:
        if not str(err).startswith(f"feature {name}:"):
            raise PysmtError(f"feature {name}: {err}") from None
        raise


@contextmanager
def naming_config(config: SystemConfig, name: str) -> Iterator[None]:
    """A feature's own ``feature NAME: ...`` error, prefixed with the config it came from."""
    try:
        yield
    except PysmtError as err:
        if str(err).startswith(f"feature {name}:"):
            raise PysmtError(f"{config.path}: {err}") from None
        raise


def no_weights(config: SystemConfig, name: str, needed: str = "") -> PysmtError:
    """A feature has no weights: where they were looked for (the config, and the ``--weights`` file if one
    was given), and how to give them."""
    if config.weights_file is None:
        return PysmtError(
            f"{config.path}: no weights for feature {name}{needed}; give them with --weights FILE "
            f"('{name}= w ...') or learn them with pysmt tune"
        )
    return PysmtError(
        f"--weights {config.weights_file}: no weights for feature {name}{needed} (nor has "
        f"{config.path}); add a line '{name}= w ...' to it, or learn them with pysmt tune"
    )


def check_features(config: SystemConfig, specs: list[FeatureSpec], missing_weight: float | None = None) -> None:
    """Check every feature's section and weights before any model is loaded (:meth:`Feature.check_config`):
    each model's kind too, as far as it is known in milliseconds (an LM's or a checkpoint's first bytes, a binary
    table's header), so that a wrong model is one line naming the feature and the file, before the first table
    loads (minutes, for text tables)."""
    for spec in specs:
        cls = feature_class(spec.type)
        with naming_config(config, spec.name), naming_feature(spec.name):
            cls.check_config(spec.name, values_of(cls.parameters, spec.name, spec.params, config.directory), config)
        if spec.weights is None and missing_weight is None and not has_default_weights(cls):
            raise no_weights(config, spec.name)


def build_features(
    config: SystemConfig, specs: list[FeatureSpec], missing_weight: float | None = None
) -> tuple[list[Feature], list[list[float]]]:
    """Check all features (:func:`check_features`), then instantiate them and check their weights' counts.

    A feature without weights in the config and without defaults is an error, unless
    ``missing_weight`` is given (the tuner starts new features there).
    """
    check_features(config, specs, missing_weight)
    features, weights = [], []
    for spec in specs:
        cls = feature_class(spec.type)
        with naming_config(config, spec.name):
            feature = cls.from_config(
                spec.name, values_of(cls.parameters, spec.name, spec.params, config.directory), config
            )
        w = spec.weights if spec.weights is not None else feature.default_weights()
        if w is None and missing_weight is not None:
            w = [missing_weight] * feature.num_scores
        if w is None:
            raise no_weights(config, spec.name, f" ({feature.num_scores} needed)")
        if len(w) != feature.num_scores:
            where = "--weight-overwrite" if spec.name in config.overwritten else config.path
            raise PysmtError(f"{where}: feature {spec.name} has {feature.num_scores} scores but {len(w)} weights")
        features.append(feature)
        weights.append(list(w))
    return features, weights


def translation_feature_names(specs: Sequence[FeatureSpec]) -> list[str]:
    """The names of the features of ``specs`` that score complete translations (a
    :class:`~pysmt.features.base.TranslationFeature`): known from their classes, before any model loads, so that
    a command that needs one (``rescore --src``, ``tune --rerank``) says so at once."""
    return [spec.name for spec in specs if scores_translations(feature_class(spec.type))]


def given_rescoring_weights(
    config: SystemConfig, specs: list[FeatureSpec], features: list[Feature]
) -> list[list[float] | None]:
    """Each feature's rescoring weights as the config gives them (``rescoring-weights``; None where it gives none: the
    rescoring pass then totals with its weights), each checked to have one weight per score."""
    given: list[list[float] | None] = []
    for spec, feature in zip(specs, features):
        r = spec.rescoring_weights
        if r is not None and len(r) != feature.num_scores:
            raise PysmtError(
                f"{config.path}: feature {spec.name} has {feature.num_scores} scores but {len(r)} rescoring-weights"
            )
        given.append(None if r is None else list(r))
    return given


def apply_params(specs: list[FeatureSpec], assignments: Sequence[str], base: Path) -> list[FeatureSpec]:
    """The specs with ``--param FEATURE.key=value`` assignments applied (FEATURE: a feature's name or type).

    Values go through the same schema check as config files; paths are relative to ``base`` (the
    working directory, for the command line).
    """
    specs = list(specs)
    for text in assignments:
        target, dot, rest = text.partition(".")
        key, equals, value = rest.partition("=")
        if not (target and dot and key and equals):
            raise PysmtError(
                f"--param {text!r}: expected FEATURE.key=value (FEATURE: a feature's name or type), "
                "e.g. --param rnn.model=systems/news/rnn"
            )
        chosen = [k for k, s in enumerate(specs) if s.name == target] or [
            k for k, s in enumerate(specs) if s.type == target
        ]
        if not chosen:
            raise PysmtError(
                f"--param {text}: the system has no feature named or of type {target!r}; it has "
                f"{', '.join(s.name for s in specs)}"
            )
        for k in chosen:
            spec = specs[k]
            given = feature_params(spec.type, spec.name, {key: value}, base, "--param", defaults=False)
            specs[k] = replace(spec, params={**spec.params, **given})
    return specs


def system_inputs(config: SystemConfig) -> dict[str, list[Path]]:
    """Every file a system reads, labelled for error messages: the config and its models."""
    inputs: dict[str, list[Path]] = {"--config": [config.path]}
    for spec in config.features:
        paths = path_parameters(spec.type)
        for key, value in spec.params.items():
            if key in paths:
                inputs[f"{spec.name} {key}"] = [Path(value)]
    if config.processing is not None:
        inputs["[processing]"] = [Path(p) for p in (getattr(config.processing, name) for name in PROCESSING_PATHS) if p]
    return inputs
