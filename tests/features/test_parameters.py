"""A feature's parameters as a dataclass (pysmt/features/parameters.py): keys, kinds, defaults, help, and the
one-line errors of a section that lacks a parameter or a class that declares them the old way."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from pysmt.errors import PysmtError
from pysmt.features.base import Feature
from pysmt.features.parameters import (
    NoParameters,
    declarations,
    declarations_error,
    old_declarations,
    parameter,
    values_of,
)
from pysmt.testing import parameters_of


@dataclass(frozen=True, kw_only=True)
class Example:
    model: Path = parameter(Path("net"), help="the network's folder")
    batch_size: int = parameter(64, help="pairs at once")
    shortlist: Path | None = parameter(Path("words.txt"))
    rate: float | None = parameter(None)
    name: str = parameter(help="what to call it")


class ExampleFeature(Feature):
    default_label = "Example"
    parameters = Example


def test_fields_are_parameters_with_moses_style_keys():
    found = declarations(Example)
    assert list(found) == ["model", "batch-size", "shortlist", "rate", "name"]
    assert (found["batch-size"].field, found["batch-size"].kind, found["batch-size"].default) == ("batch_size", int, 64)
    assert found["shortlist"].kind is Path and found["shortlist"].optional
    assert found["rate"].kind is float and found["rate"].optional and not found["rate"].required
    assert found["name"].required and found["name"].help == "what to call it"
    assert declarations(NoParameters) == {}


def test_a_section_becomes_an_instance_with_defaults_and_paths(tmp_path):
    (tmp_path / "net").mkdir()
    (tmp_path / "words.txt").write_text("a\n")
    params = parameters_of(ExampleFeature, {"batch-size": "8", "name": "x"}, tmp_path)
    assert params == Example(model=tmp_path / "net", batch_size=8, shortlist=tmp_path / "words.txt", name="x")
    (tmp_path / "words.txt").unlink()
    assert parameters_of(ExampleFeature, {"name": "x"}, tmp_path).shortlist is None  # optional: its default is gone


def test_a_missing_parameter_names_its_help_and_its_default(tmp_path):
    with pytest.raises(PysmtError) as failure:
        parameters_of(ExampleFeature, {"name": "x"}, tmp_path)
    assert str(failure.value) == (
        f"feature Example0: missing parameter 'model' (the network's folder; its default, "
        f"{tmp_path / 'net'}, does not exist); give it in the feature's section or with "
        "--param Example0.model=VALUE"
    )
    (tmp_path / "net").mkdir()
    with pytest.raises(PysmtError, match=r"^feature Example0: missing parameter 'name' \(what to call it\); give it"):
        parameters_of(ExampleFeature, {}, tmp_path)


def test_unknown_keys_and_wrong_kinds_name_the_key(tmp_path):
    (tmp_path / "net").mkdir()
    with pytest.raises(PysmtError, match=r"unknown parameter 'batch_size' \(did you mean 'batch-size'\?\)"):
        parameters_of(ExampleFeature, {"name": "x", "batch_size": 3}, tmp_path)
    with pytest.raises(PysmtError, match="batch-size"):
        parameters_of(ExampleFeature, {"name": "x", "batch-size": 2.5}, tmp_path)
    with pytest.raises(PysmtError, match="model .*no such file or folder"):
        parameters_of(ExampleFeature, {"name": "x", "model": "elsewhere"}, tmp_path)


def test_old_declarations_and_bad_dataclasses_are_named():
    class Old(Feature):
        parameters = {"model": Path}  # type: ignore[assignment]
        default_paths = {"model": "m"}
        required_parameters = ("model",)
        context_free = False

        def evaluate(self, phrases):
            return None, None

    assert "declare them as a dataclass" in (declarations_error(Old) or "")
    assert [line.split(":")[0] for line in old_declarations(Old)] == [
        "default_paths",
        "required_parameters",
        "context_free",
        "evaluate",
    ]
    assert old_declarations(ExampleFeature) == [] and declarations_error(ExampleFeature) is None


def test_values_of_builds_from_checked_values():
    params = values_of(Example, "E0", {"model": "/m", "shortlist": None, "name": "n"})
    assert params.model == Path("/m") and params.shortlist is None and params.batch_size == 64
