"""The feature registry (pysmt/features/registry.py): features are entry points; config sections and
``--param`` become checked parameters; weights, parameters and their mistakes are reported before any
model is loaded."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from pysmt.config_files import load_config
from pysmt.decoder import Decoder
from pysmt.errors import PysmtError
from pysmt.features import registry
from pysmt.features.base import Feature
from pysmt.features.parameters import parameter
from pysmt.testing import one_line_error, registered, run_pysmt, toy_decoder


def test_builtins_are_entry_points():
    assert {
        "phrase-table",
        "kenlm",
        "distortion",
        "lexical-reordering",
        "word-penalty",
        "phrase-penalty",
        "unknown-word-penalty",
        "constrained-decoding",
    } <= set(registry.available())


def test_unknown_feature_lists_the_available_ones(tiny_system):
    with pytest.raises(PysmtError, match="unknown feature 'no-such-feature'; available: .*kenlm"):
        Decoder(load_config(tiny_system), ["no-such-feature"])


def test_weight_count_mismatch_is_an_error_before_decoding(tiny_system):
    text = tiny_system.read_text().replace("LexicalReordering0= 0.3 0.3 0.3 0.3 0.3 0.3", "LexicalReordering0= 0.3")
    tiny_system.write_text(text)
    with pytest.raises(PysmtError, match="LexicalReordering0 has 6 scores but 1 weights"):
        Decoder(load_config(tiny_system))


@pytest.mark.slow  # six commands
def test_param_sets_a_feature_parameter_from_the_command_line(tiny_system, source, tmp_path):
    one = tmp_path / "one.txt"
    one.write_text("a\n")
    counts = []
    for extra in ([], ["--param", "PhraseDictionaryMemory0.table-limit=1"], ["--param", "phrase-table.table-limit=1"]):
        proc = run_pysmt("decode", "-c", tiny_system, "-i", one, "--nbest", tmp_path / "n.txt", *extra)
        assert proc.returncode == 0, proc.stderr
        counts.append(len((tmp_path / "n.txt").read_text().splitlines()))
    assert counts == [2, 1, 1]  # "a" has two translations; a table limit of 1 keeps one
    one_line_error(
        run_pysmt("decode", "-c", tiny_system, "-i", source, "--param", "phrase-table.table-limt=1"),
        "unknown parameter 'table-limt'",
        "did you mean 'table-limit'",
    )
    one_line_error(run_pysmt("decode", "-c", tiny_system, "-i", source, "--param", "nosuch.x=1"), "no feature named")
    one_line_error(
        run_pysmt("decode", "-c", tiny_system, "-i", source, "--param", "oops"), "expected FEATURE.key=value"
    )


# -- errors before loading -----------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SlowParameters:
    model: Path = parameter(Path("slow-model"))
    size: int = parameter(help="how slow")


class Slow(Feature):
    """Records every load; needs weights from the config, a ``model`` (default ``slow-model/``) and a ``size``."""

    default_label = "Slow"
    parameters = SlowParameters
    loads = 0

    @classmethod
    def from_config(cls, name, params, system):
        Slow.loads += 1
        return cls(name, 1)


def test_missing_weights_are_reported_before_any_model_is_loaded(tiny_system):
    (tiny_system.parent / "slow-model").mkdir()
    Slow.loads = 0
    with registered(slow=Slow), pytest.raises(PysmtError, match="moses.ini: no weights for feature Slow0; give them"):
        toy_decoder(tiny_system, ["slow"], params=["slow.size=1"])
    assert Slow.loads == 0


def test_a_missing_required_parameter_is_reported_before_any_model_is_loaded(tiny_system):
    Slow.loads = 0
    with registered(slow=Slow), pytest.raises(PysmtError) as caught:
        toy_decoder(tiny_system, ["slow"], params=["slow.size=1"], weights={"Slow0": [1.0]})
    assert Slow.loads == 0
    assert str(caught.value) == (
        f"{tiny_system}: feature Slow0: missing parameter 'model' (its default, "
        f"{tiny_system.parent / 'slow-model'}, does not exist); give it in the feature's "
        "section or with --param Slow0.model=VALUE"
    )


def test_a_parameter_without_a_default_must_be_given_and_its_help_is_said(tiny_system):
    (tiny_system.parent / "slow-model").mkdir()
    Slow.loads = 0
    with registered(slow=Slow), pytest.raises(PysmtError) as caught:
        toy_decoder(tiny_system, ["slow"], weights={"Slow0": [1.0]})
    assert str(caught.value) == (
        f"{tiny_system}: feature Slow0: missing parameter 'size' (how slow); give it in the "
        "feature's section or with --param Slow0.size=VALUE"
    )
    assert Slow.loads == 0


def test_a_plugin_feature_in_moses_ini_with_parameters_and_weights(tmp_path):
    from pysmt.testing import write_toy_system

    (tmp_path / "sys" / "slow-model").mkdir(parents=True)
    system = write_toy_system(tmp_path / "sys", features=["slow size=3"], weights={"Slow0": "0.25"})
    with registered(slow=Slow):
        decoder = toy_decoder(system)
    spec = decoder.config.feature("Slow0")
    assert spec.params == {"size": 3, "model": str(tmp_path / "sys" / "slow-model")} and decoder.weights[-1] == [0.25]


def test_toy_decoder_takes_plugin_parameters(tmp_path):
    from pysmt.testing import write_toy_system

    system = write_toy_system(tmp_path / "sys")
    (tmp_path / "elsewhere").mkdir()
    with registered(slow=Slow):
        decoder = toy_decoder(
            system, ["slow"], params=[f"slow.model={tmp_path / 'elsewhere'}", "Slow0.size=2"], weights={"Slow0": [1.0]}
        )
    assert decoder.config.feature("Slow0").params == {"model": str(tmp_path / "elsewhere"), "size": 2}


def test_weights_missing_from_a_weights_file_name_that_file(tiny_system, tmp_path):
    """The message said "give them with --weights" when --weights had been given."""
    from pysmt.config_files import configure_system

    (tiny_system.parent / "slow-model").mkdir()
    weights = tmp_path / "weights.txt"
    weights.write_text("KENLM0= 0.5\n")
    with registered(slow=Slow), pytest.raises(PysmtError) as failure:
        Decoder(configure_system(tiny_system, ["slow"], ["slow.size=1"], weights_path=weights))
    assert str(failure.value) == (
        f"--weights {weights}: no weights for feature Slow0 (nor has {tiny_system}); "
        "add a line 'Slow0= w ...' to it, or learn them with pysmt tune"
    )
