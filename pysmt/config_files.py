"""Reading and writing system configs: ``pysmt.toml`` and Moses' ``moses.ini`` both become one
:class:`~pysmt.config.SystemConfig`.

Reading a config checks every feature section against the feature's declared parameters, so it
needs the feature registry; the config dataclasses themselves (:mod:`pysmt.config`) do not.
``pysmt.toml`` looks like::

    [search]
    algorithm = "cube"          # or "normal" (Moses' default)
    stack-size = 200
    beam-threshold = 1e-5
    pop-limit = 1000
    distortion-limit = 6
    max-phrase-length = 20

    [[feature]]
    type = "phrase-table"       # a name registered under the entry-point group pysmt.features
    name = "TranslationModel0"  # label in weight files and n-best lists (default: type's label + index)
    path = "phrase-table.gz"    # paths are relative to this file
    num-features = 4
    table-limit = 20
    weights = [0.2, 0.2, 0.2, 0.2]

Features appear in decoding and n-best lists in the order they are listed.
"""

from __future__ import annotations

import os
import re
import sys
import tomllib
from collections.abc import Sequence
from dataclasses import fields, replace
from pathlib import Path
from typing import Any, cast

import tomli_w

from pysmt.config import (
    PROCESSING_PATHS,
    FeatureSpec,
    ProcessingConfig,
    SearchConfig,
    SearchOverrides,
    SystemConfig,
    finite_weights,
)
from pysmt.errors import PysmtError, at_line, did_you_mean
from pysmt.features.parameters import declarations
from pysmt.features.registry import (
    add_feature_types,
    apply_params,
    default_label,
    feature_class,
    feature_params,
    path_parameters,
    registered_names,
    unknown_feature,
)
from pysmt.files.markup import XML_INPUTS, XmlInput
from pysmt.files.textio import atomic_writer, read_lines, require_file, without_bom

#: Moses feature names and the pysmt feature types that read the same models.
MOSES_FEATURE_TYPES = {
    "KENLM": "kenlm",
    "Distortion": "distortion",
    "LexicalReordering": "lexical-reordering",
    "WordPenalty": "word-penalty",
    "PhrasePenalty": "phrase-penalty",
    "UnknownWordPenalty": "unknown-word-penalty",
    "PhraseDictionaryMemory": "phrase-table",
    "ConstrainedDecoding": "constrained-decoding",
}

#: moses.ini parameters that pysmt names differently (``type`` names the feature type in pysmt.toml).
MOSES_PARAM_RENAMES = {"LexicalReordering": {"type": "model"}}

#: moses.ini feature parameters that mean nothing for a single-factor system and are dropped.
MOSES_IGNORED_PARAMS = {"factor", "input-factor", "output-factor", "lazyken"}

#: moses.ini sections that mean nothing for a single-factor phrase-based system and are skipped.
MOSES_IGNORED_SECTIONS = {"input-factors", "mapping", "verbose", "v"}
#: moses.ini sections that set how a run is done, which pysmt takes from the command line (a warning says so).
MOSES_RUN_SECTIONS = {
    "threads": "give `pysmt decode --threads N`",
    "n-best-list": "give `pysmt decode --nbest FILE --nbest-size N [--distinct]`",
}


def load_config(path: str | Path) -> SystemConfig:
    """Read a ``pysmt.toml`` or a ``moses.ini`` (by extension: ``.toml`` is TOML, anything else Moses)."""
    path = require_file(path)
    return read_toml(path) if path.suffix == ".toml" else read_moses_ini(path)


def default_names(types: list[str], explicit: list[str | None], labels: dict[str, str]) -> list[str]:
    """Moses-style labels: the type's label plus a per-label counter (``LM0``, ``LM1``...)."""
    counters: dict[str, int] = {}
    names = []
    for ftype, name in zip(types, explicit):
        label = labels.get(ftype, ftype)
        index = counters.get(label, 0)
        counters[label] = index + 1
        names.append(name if name else f"{label}{index}")
    return names


def check_unique_names(features: list[FeatureSpec], path: Path) -> None:
    seen: set[str] = set()
    for spec in features:
        if spec.name in seen:
            raise PysmtError(f"{path}: two features are named {spec.name!r}")
        seen.add(spec.name)


#: The sections of a ``pysmt.toml``: what :func:`write_toml` writes and :func:`read_toml` reads.
TOML_SECTIONS = ("search", "processing", "feature")


def settings_keys(cls: type[SearchConfig] | type[ProcessingConfig]) -> dict[str, str]:
    """A settings section's keys as written (``stack-size``) and the dataclass fields they set (``stack_size``)."""
    return {f.name.replace("_", "-"): f.name for f in fields(cls)}


def check_known(given: dict[str, Any], known: Sequence[str], path: Path, what: str) -> None:
    """Refuse the first key of ``given`` that is not ``known``, with the nearest known one: a misspelt
    setting would otherwise never apply, and the run would go on with the default (exit 0, wrong results)."""
    for key in given:
        if key not in known:
            hint = did_you_mean(key, known)
            raise PysmtError(f"{path}: unknown {what} key {key!r}{hint}; known: {', '.join(sorted(known))}")


def check_sections(data: dict[str, Any], path: Path) -> None:
    """Refuse a top-level name that is no section of a ``pysmt.toml`` (``[serach]``) or a section of the wrong
    shape (``[feature]`` for ``[[feature]]``), naming the nearest section or the section a stray key belongs in."""
    for name, value in data.items():
        if name in TOML_SECTIONS:
            continue
        if not isinstance(value, dict | list):  # a key above every section header
            owners = [
                f"[{section}]"
                for section, cls in (("search", SearchConfig), ("processing", ProcessingConfig))
                if name in settings_keys(cls)
            ]
            where = f" (it belongs in {owners[0]})" if owners else ""
            raise PysmtError(f"{path}: key {name!r} is outside every section{where}")
        shown = "[[{}]]" if isinstance(value, list) else "[{}]"
        hint = did_you_mean(name, TOML_SECTIONS, shown)
        raise PysmtError(
            f"{path}: unknown section {shown.format(name)}{hint}; a pysmt.toml has [search], [processing], [[feature]]"
        )
    for name in ("search", "processing"):
        if name in data and not isinstance(data[name], dict):
            raise PysmtError(f"{path}: [{name}] must be a table of settings")
    if "feature" in data and not isinstance(data["feature"], list):
        raise PysmtError(f"{path}: [feature] must be written [[feature]], one such section per feature")


def parse_toml(path: Path) -> dict[str, Any]:
    """The document in ``path``; invalid TOML, or nesting too deep for the parser, is one line naming the file."""
    try:
        return tomllib.loads(without_bom(path.read_bytes(), path).decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise PysmtError(f"{path}: not valid TOML ({err})") from None
    except RecursionError:  # tomllib recurses once per level of nested arrays or inline tables
        raise PysmtError(f"{path}: not valid TOML (nested too deeply for pysmt to read)") from None


def read_toml(path: Path) -> SystemConfig:
    """Read a ``pysmt.toml`` system config: every section and key is checked, none ignored."""
    data = parse_toml(path)
    check_sections(data, path)
    search_keys = settings_keys(SearchConfig)
    search_data = data.get("search", {})
    check_known(search_data, list(search_keys), path, "[search]")
    search = SearchConfig(**{search_keys[key]: value for key, value in search_data.items()})
    search.validate(str(path))
    processing = read_processing(data.get("processing"), path)
    raw_features = data.get("feature", [])
    if not raw_features:
        raise PysmtError(f"{path}: no [[feature]] sections")
    types, explicit, params, weights, rescoring = [], [], [], [], []
    for number, entry in enumerate(raw_features, start=1):
        if not isinstance(entry, dict):
            raise PysmtError(f"{path}: feature number {number} must be a [[feature]] table")
        entry = dict(entry)
        if "type" not in entry:
            raise PysmtError(f"{path}: [[feature]] number {number} has no 'type'")
        types.append(str(entry.pop("type")))
        if types[-1] not in registered_names():
            raise PysmtError(f"{path}: [[feature]] number {number}: {unknown_feature(types[-1])}")
        explicit.append(entry.pop("name", None))
        w = entry.pop("weights", None)
        if w is not None and not isinstance(w, list):
            raise PysmtError(f"{path}: feature {types[-1]!r}: weights must be a list of numbers")
        weights.append(None if w is None else finite_weights(w, f"{path}: feature {types[-1]!r}"))
        r = entry.pop("rescoring-weights", None)
        if r is not None and not isinstance(r, list):
            raise PysmtError(f"{path}: feature {types[-1]!r}: rescoring-weights must be a list of numbers")
        rescoring.append(None if r is None else finite_weights(r, f"{path}: feature {types[-1]!r}: rescoring-weights"))
        params.append(entry)
    names = default_names(types, explicit, {t: default_label(t) for t in types})
    features = [
        FeatureSpec(t, n, feature_params(t, n, p, path.parent, str(path)), w, r)
        for t, n, p, w, r in zip(types, names, params, weights, rescoring)
    ]
    check_unique_names(features, path)
    return SystemConfig(path=path.resolve(), features=features, search=search, processing=processing)


def read_processing(data: dict[str, Any] | None, path: Path) -> ProcessingConfig | None:
    """The ``[processing]`` section, with truecase model paths made absolute."""
    if data is None:
        return None
    keys = settings_keys(ProcessingConfig)
    check_known(data, list(keys), path, "[processing]")
    values = {keys[key]: value for key, value in data.items()}
    for name in PROCESSING_PATHS:
        if values.get(name):
            values[name] = str((path.parent / values[name]).resolve())
    try:
        return ProcessingConfig(**values)
    except TypeError as err:
        raise PysmtError(f"{path}: [processing] needs source-language and target-language ({err})") from None


_VAR = re.compile(r"\$\{(\w+)\}")


def expand_variables(text: str, path: Path, line_no: int) -> str:
    """Moses' ``${VAR}`` expansion from the environment; an unset variable is an error."""

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise at_line(path, line_no, f"environment variable ${{{name}}} is not set")
        return os.environ[name]

    return _VAR.sub(substitute, text)


def parse_weight_line(line: str, path: Path, line_no: int) -> tuple[str, list[float]]:
    """Parse a Moses weight line ``Name= w1 w2 ...``."""
    name, sep, values = line.partition("=")
    if not sep or not name.strip() or " " in name.strip():
        raise at_line(path, line_no, f"expected 'FeatureName= w1 w2 ...', found {line!r}")
    try:
        return name.strip(), [float(v) for v in values.split()]
    except ValueError:
        raise at_line(path, line_no, f"weights must be numbers: {line!r}") from None


def read_weights_file(path: str | Path) -> dict[str, list[float]]:
    """Read weights in moses.ini's ``[weight]`` syntax (``Name= w1 w2 ...``, one feature a line)."""
    path = Path(path)
    lines = [
        (line_no, text)
        for line_no, line in read_lines(path)
        if (text := line.split("#", 1)[0].strip()) and not text.startswith("[")
    ]
    return weight_lines(lines, path)


def weight_lines(lines: list[tuple[int, str]], path: Path) -> dict[str, list[float]]:
    """The weights of ``Name= w1 w2 ...`` lines; a feature named twice is an error (which line should win?)."""
    weights: dict[str, list[float]] = {}
    first: dict[str, int] = {}
    for line_no, line in lines:
        name, values = parse_weight_line(line, path, line_no)
        if name in first:
            raise at_line(path, line_no, f"{name} has weights already (line {first[name]}): give each feature once")
        first[name] = line_no
        weights[name] = finite_weights(values, f"{path}, line {line_no}: {name}")
    return weights


def read_moses_ini(path: Path) -> SystemConfig:
    """Read a phrase-based ``moses.ini`` (new-style ``[feature]``/``[weight]`` sections)."""
    sections: dict[str, list[tuple[int, str]]] = {}
    current: str | None = None
    for line_no, line in read_lines(path):
        line = expand_variables(line.split("#", 1)[0].strip(), path, line_no)
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            current = line[1:-1].strip()
            sections.setdefault(current, [])
        elif current is None:
            raise at_line(path, line_no, "text before the first [section]")
        else:
            sections[current].append((line_no, line))
    if "feature" not in sections:
        if "ttable-file" in sections:
            raise PysmtError(
                f"{path}: old-style moses.ini (no [feature] section); convert it with Moses' "
                "scripts/training/convert-moses-ini-to-v2.perl"
            )
        raise PysmtError(f"{path}: no [feature] section")

    types, explicit, params, labels = [], [], [], {}
    for line_no, line in sections["feature"]:
        tokens = line.split()
        moses_type, args = tokens[0], {}
        for token in tokens[1:]:
            key, sep, value = token.partition("=")
            if not sep:
                raise at_line(path, line_no, f"expected key=value, found {token!r}")
            args[key] = value
        if moses_type in MOSES_FEATURE_TYPES:  # Moses' names, labelled as Moses labels them (KENLM0)
            labels[MOSES_FEATURE_TYPES[moses_type]] = moses_type
        elif moses_type in registered_names():  # a pysmt feature type: a plugin
            labels[moses_type] = default_label(moses_type)
        else:
            raise at_line(
                path,
                line_no,
                f"feature {moses_type} is not supported; supported: "
                f"{', '.join(MOSES_FEATURE_TYPES)} and registered pysmt features "
                f"({', '.join(sorted(registered_names()))})",
            )
        for old, new in MOSES_PARAM_RENAMES.get(moses_type, {}).items():
            if old in args:
                args[new] = args.pop(old)
        types.append(MOSES_FEATURE_TYPES.get(moses_type, moses_type))
        explicit.append(args.pop("name", None))
        params.append({key: value for key, value in args.items() if key not in MOSES_IGNORED_PARAMS})
    names = default_names(types, explicit, labels)
    weights = weight_lines(sections.get("weight", []), path)
    unknown = sorted(set(weights) - set(names))
    if unknown:
        raise PysmtError(f"{path}: [weight] names unknown feature(s) {', '.join(unknown)}")
    features = [
        FeatureSpec(t, n, feature_params(t, n, p, path.parent, str(path)), weights.get(n))
        for t, n, p in zip(types, names, params)
    ]
    check_unique_names(features, path)
    search, xml_input = moses_search_config(sections, path), moses_xml_input(sections, path)
    return SystemConfig(path=path.resolve(), features=features, search=search, xml_input=xml_input)


def moses_xml_input(sections: dict[str, list[tuple[int, str]]], path: Path) -> XmlInput | None:
    """moses.ini's ``[xml-input]`` (Moses' ``-xml-input``): how markup in the input is read; None when the file has
    no such section (the command line's ``--xml-input`` decides, else pass-through)."""
    if "xml-input" not in sections:
        return None
    if not sections["xml-input"]:
        raise PysmtError(f"{path}: [xml-input] gives no mode; give one of {', '.join(XML_INPUTS)}")
    line_no, text = sections["xml-input"][0]
    if text not in XML_INPUTS:
        raise at_line(path, line_no, f"[xml-input] must be one of {', '.join(XML_INPUTS)}, not {text!r}")
    return cast(XmlInput, text)


def moses_search_config(sections: dict[str, list[tuple[int, str]]], path: Path) -> SearchConfig:
    """The search parameters of a moses.ini; sections it does not set keep Moses' defaults."""
    aliases = {
        "distortion-limit": ("distortion_limit", int),
        "stack": ("stack_size", int),
        "s": ("stack_size", int),
        "beam-threshold": ("beam_threshold", float),
        "b": ("beam_threshold", float),
        "cube-pruning-pop-limit": ("pop_limit", int),
        "max-phrase-length": ("max_phrase_length", int),
    }
    values: dict[str, Any] = {}
    for name, lines in sections.items():
        if name in ("feature", "weight", "xml-input") or name in MOSES_IGNORED_SECTIONS:
            continue
        if name == "search-algorithm":
            line_no, text = lines[0]
            algorithms = {"0": "normal", "1": "cube"}
            if text not in algorithms:
                raise at_line(path, line_no, "search-algorithm must be 0 (normal) or 1 (cube pruning)")
            values["algorithm"] = algorithms[text]
        elif name in aliases:
            key, kind = aliases[name]
            line_no, text = lines[0]
            try:
                values[key] = kind(text)
            except ValueError:
                raise at_line(path, line_no, f"[{name}] must be a number, found {text!r}") from None
        elif name in MOSES_RUN_SECTIONS:
            print(f"pysmt: {path}: [{name}] is not read: {MOSES_RUN_SECTIONS[name]}", file=sys.stderr)
        elif name.startswith("weight-"):
            raise PysmtError(
                f"{path}: [{name}] is an old-style weight section, which a moses.ini with [feature] "
                "sections does not use: give its weights in [weight] (Name= w1 w2 ...)"
            )
        else:
            read = ["feature", "weight", "xml-input", "search-algorithm", *aliases, *MOSES_RUN_SECTIONS]
            hint = did_you_mean(name, read, "[{}]")  # a misspelt section pysmt reads: its setting is not applied
            print(f"pysmt: {path}: ignoring section [{name}]{hint}", file=sys.stderr)
    search = SearchConfig(**values)
    search.validate(str(path))
    return search


def write_toml(config: SystemConfig, path: str | Path) -> None:
    """Write ``config`` as ``pysmt.toml``; model paths are made relative to the new file."""
    path = Path(path)
    base = path.parent.resolve()
    search = {key: getattr(config.search, name) for key, name in settings_keys(SearchConfig).items()}
    features = []
    for spec in config.features:
        entry: dict[str, Any] = {"type": spec.type, "name": spec.name}
        paths = path_parameters(spec.type)
        for key, value in spec.params.items():
            if key in paths:
                value = os.path.relpath(Path(value).resolve(), base)
            entry[key] = value
        if spec.weights is not None:
            entry["weights"] = [float(w) for w in spec.weights]
        if spec.rescoring_weights is not None:
            entry["rescoring-weights"] = [float(w) for w in spec.rescoring_weights]
        features.append(entry)
    document: dict[str, Any] = {"search": search}
    if config.processing is not None:
        processing = {}
        for f in fields(ProcessingConfig):
            value = getattr(config.processing, f.name)
            if value is not None:
                if f.name in PROCESSING_PATHS:
                    value = os.path.relpath(Path(value).resolve(), base)
                processing[f.name.replace("_", "-")] = value
        document["processing"] = processing
    document["feature"] = features
    with atomic_writer(path) as out:
        out.write(tomli_w.dumps(document))


def configure_system(
    config_path: str | Path,
    features: Sequence[str] = (),
    params: Sequence[str] = (),
    weights_path: str | Path | None = None,
    overrides: SearchOverrides | None = None,
    *,
    params_base: Path | None = None,
) -> SystemConfig:
    """A system config as a command is told: the file, plus ``--features``, ``--param``, ``--weights`` and the
    search settings (``--stack``, ..., ``--weight-overwrite``: :class:`~pysmt.config.SearchOverrides`).

    Features added with ``--features`` join the config first, so ``--param``, ``--weights`` and
    ``--weight-overwrite`` can address them too; ``--weight-overwrite`` comes last (as in Moses, it wins over
    every other weight). Nothing is loaded yet: every model file has only been checked to exist. A ``--param`` path
    (a key its feature declares a ``Path``) is relative to ``params_base``, by default the working folder.
    """
    config = load_config(config_path)
    specs = apply_params(add_feature_types(config, list(features)), params, params_base or Path.cwd())
    config = replace(config, features=specs)
    if weights_path:
        config = config.with_weights(read_weights_file(weights_path), str(weights_path))
    return apply_overrides(config, overrides) if overrides is not None else config


def apply_overrides(config: SystemConfig, overrides: SearchOverrides) -> SystemConfig:
    """``config`` with the command line's search settings: ``[search]``'s replaced, ``--table-limit`` as every
    phrase table's ``table-limit`` (every feature that declares one), ``--weight-overwrite``'s weights for the
    features it names (which must exist, each with as many weights as it has)."""
    features = list(config.features)
    if overrides.table_limit is not None:
        tables = [
            k for k, spec in enumerate(features) if "table-limit" in declarations(feature_class(spec.type).parameters)
        ]
        if not tables:
            raise PysmtError(f"--table-limit: {config.path} has no phrase table")
        for k in tables:
            spec = features[k]
            limit = {"table-limit": overrides.table_limit}
            given = feature_params(spec.type, spec.name, limit, config.directory, "--table-limit", defaults=False)
            features[k] = replace(spec, params={**spec.params, **given})
    names = [spec.name for spec in features]
    for name, weights in overrides.weights:
        if name not in names:
            raise PysmtError(f"--weight-overwrite: the system has no feature {name}; it has {', '.join(names)}")
        k = names.index(name)
        have = features[k].weights
        if have is not None and len(have) != len(weights):
            raise PysmtError(
                f"--weight-overwrite: {name} has {len(have)} weight{'s' if len(have) != 1 else ''}, not {len(weights)}"
            )
        features[k] = replace(features[k], weights=list(weights))
    overwritten = tuple(name for name, _ in overrides.weights)
    return replace(config, features=features, search=overrides.search(config.search), overwritten=overwritten)
