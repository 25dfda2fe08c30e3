"""Command-line options made from the dataclasses that carry them: names, defaults, choices and help from one place."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from dataclasses import MISSING, dataclass, field, fields, make_dataclass, replace
from pathlib import Path
from typing import Any, get_args, get_type_hints

import click
import pytest
from click.testing import CliRunner

from pysmt.cli import main
from pysmt.cli_options import OPTION, POSITIVE, flat_keywords, from_command, nested, option, options_of
from pysmt.config import SearchConfig
from pysmt.decoding.options import SystemOptions
from pysmt.experiment.chain import ExperimentOptions
from pysmt.experiment.settings import SCALES, per_scale
from pysmt.neural import TrainingLimits
from pysmt.training.options import TrainingOptions
from tuning.optimizers import KbmiraOptions, MertOptions, ProOptions
from tuning.options import TuningOptions

#: Each command whose options a dataclass carries, and that dataclass (a plugin's is imported if installed).
CARRIED = [
    ("train", "pysmt.training.options:TrainingOptions"),
    ("tune", "tuning.options:TuningOptions"),
    ("decode", "pysmt.decoding.options:DecodeOptions"),
    ("serve", "pysmt.serving.options:ServeOptions"),
    *((name, "pysmt.decoding.options:SystemOptions") for name in ("decode", "tune", "serve")),
    *(("tune", f"tuning.optimizers:{options.__name__}") for options in (MertOptions, KbmiraOptions, ProOptions)),
    ("experiment", "pysmt.experiment.chain:ExperimentOptions"),
    ("rnn train", "pysmt.neural:TrainingLimits"),
    ("cslm train", "pysmt.neural:TrainingLimits"),
    ("rnn top-phrases", "rnn_feature.sample_sizes:SampleSizes"),
    ("rnn samples", "rnn_feature.sample_sizes:SampleSizes"),
]


def command(name: str) -> click.Command:
    """A pysmt command by its words (``"rnn train"``); a plugin's that is not installed skips the test."""
    found: click.Command | None = main
    for word in name.split():
        assert isinstance(found, click.Group)
        found = found.get_command(click.Context(found), word)
        if found is None:
            pytest.skip(f"pysmt {name}: its plugin is not installed")
    assert found is not None
    return found


def carried(name: str, carrier: str) -> tuple[click.Command, type]:
    """A command of :data:`CARRIED` and its dataclass."""
    cmd = command(name)
    module, options = carrier.split(":")
    return cmd, getattr(importlib.import_module(module), options)


def parameter(cmd: click.Command, name: str) -> click.Parameter:
    return next(p for p in cmd.params if p.name == name)


def cli_default(declared: Any) -> Any:
    """The default a field's option has: the one its metadata gives the command line, else the field's."""
    settings = declared.metadata[OPTION].settings
    if "default" in settings:
        return settings["default"]
    return declared.default_factory() if declared.default_factory is not MISSING else declared.default


def toy_command(default: int) -> click.Command:
    Toy = make_dataclass("Toy", [("size", int, field(default=default, metadata=option(type=POSITIVE, help="A size.")))])

    @click.command()
    @options_of(Toy)
    def toy(**given: Any) -> None:
        click.echo(repr(from_command(Toy, given)))

    return toy


def test_a_changed_dataclass_default_changes_the_option_and_its_help():
    for default in (100, 7):
        runner = CliRunner()
        assert f"[default: {default}; x>=1]" in runner.invoke(toy_command(default), ["--help"]).output
        assert runner.invoke(toy_command(default), []).output == f"Toy(size={default})\n"
        bad = runner.invoke(toy_command(default), ["--size", "0"])
        assert bad.exit_code == 2 and "--size" in bad.output


@dataclass(kw_only=True)
class Given:
    out: Path = field(metadata=option("-o", "--out", type=click.Path(path_type=Path)))
    names: list[str] = field(default_factory=list, metadata=option("--name", multiple=True, convert=str.upper))
    scale: float = field(metadata=option(default="half", convert={"half": 0.5, "full": 1.0}.__getitem__))
    limit: int | None = field(default=None, metadata=option(type=POSITIVE, convert=lambda n: n * 60))
    fixed: int = 3  # no option: given by the command


def test_the_options_are_built_by_name_and_converted():
    @click.command()
    @options_of(Given)
    def given_command(**given: Any) -> None:
        click.echo(repr(from_command(Given, given, fixed=4)))

    runner = CliRunner()
    out = runner.invoke(given_command, ["-o", "x", "--name", "a", "--name", "b", "--limit", "2"]).output
    assert out == repr(Given(out=Path("x"), names=["A", "B"], scale=0.5, limit=120, fixed=4)) + "\n"
    assert runner.invoke(given_command, ["-o", "x"]).output == repr(Given(out=Path("x"), scale=0.5, fixed=4)) + "\n"
    missing = runner.invoke(given_command, [])
    assert missing.exit_code == 2 and "Missing option '-o' / '--out'" in missing.output  # no default: required
    assert [p.name for p in given_command.params] == ["out", "names", "scale", "limit"]  # fields' order


def test_a_slice_of_the_fields_leaves_room_for_a_command_s_own_options():
    @click.command()
    @options_of(Given, stop="scale")
    @click.option("--mine")
    @options_of(Given, start="scale")
    def sliced(**given: Any) -> None:
        pass

    assert [p.name for p in sliced.params] == ["out", "names", "mine", "scale", "limit"]


@dataclass(kw_only=True)
class Inner:
    """Options several commands share, a nested field of each one's."""

    path: Path  # no option: given by the command
    mode: str = field(default="a", metadata=option(type=click.Choice(["a", "b"])))
    level: int = field(default=1, metadata=option(type=POSITIVE))


@flat_keywords("inner")
@dataclass(kw_only=True)
class Outer:
    first: int = field(default=0, metadata=option())
    inner: Inner = field(metadata=nested(Inner))
    last: bool = field(default=False, metadata=option(is_flag=True))


def outer_command() -> click.Command:
    @click.command()
    @options_of(Outer, stop="last")
    @click.option("--mine")
    @options_of(Outer, start="last")
    def outer(**given: Any) -> None:
        click.echo(repr(from_command(Outer, given, inner={"path": Path("p")})))

    return outer


def test_a_nested_dataclass_s_options_are_the_command_s_where_the_field_sits():
    outer = outer_command()
    assert [p.name for p in outer.params] == ["first", "mode", "level", "mine", "last"]
    runner = CliRunner()
    built = runner.invoke(outer, ["--mode", "b", "--level", "2", "--last"]).output
    assert built == repr(Outer(inner=Inner(path=Path("p"), mode="b", level=2), last=True)) + "\n"
    assert runner.invoke(outer, []).output == repr(Outer(inner=Inner(path=Path("p")))) + "\n"  # the fields' defaults
    assert "[default: a]" in runner.invoke(outer, ["--help"]).output
    bad = runner.invoke(outer, ["--level", "0"])
    assert bad.exit_code == 2 and "--level" in bad.output


def test_a_nested_dataclass_given_whole_is_taken_as_it_is():
    inner = Inner(path=Path("q"), mode="b")
    assert from_command(Outer, {"first": 3, "mode": "a", "level": 1, "last": False}, inner=inner).inner is inner


def test_the_nested_fields_are_still_taken_flat_with_a_warning():
    with pytest.warns(DeprecationWarning, match=r"Outer\(path=, mode=...\) is now Outer\(inner=Inner\(...\)\)"):
        flat = Outer(path=Path("p"), mode="b", first=2)
    assert flat == Outer(inner=Inner(path=Path("p"), mode="b"), first=2)
    with pytest.warns(DeprecationWarning):
        tuning = TuningOptions(config=Path("c"), features=["wp"], source=Path("s"), references=[], out=Path("o"))
    assert tuning.system == SystemOptions(config=Path("c"), features=["wp"])


def test_a_tune_job_record_from_the_command_line_is_as_before(tmp_path, monkeypatch):
    """job.json's settings of a tuning given the system's options: byte for byte what they were when those options
    were TuningOptions' own fields (before SystemOptions), so that such a job resumes."""
    from tuning.loop import job_settings

    told = []
    monkeypatch.setattr("tuning.loop.tune", lambda options: told.append(options) or tmp_path / "t.toml")
    config, src, ref = tmp_path / "c.toml", tmp_path / "dev.src", tmp_path / "dev.ref"
    for path in (config, src, ref):
        path.write_text("")
    args = [
        "tune",
        "-c",
        config,
        "--src",
        src,
        "--ref",
        ref,
        "--out",
        "t",
        "--features",
        "wp, rnn",
        "--param",
        "wp.x=1",
    ]
    args += ["--param", "rnn.model=m", "--search", "cube", "--xml-input", "exclusive", "--stack", "50"]
    args += [
        "--beam-threshold",
        "0.001",
        "--weight-overwrite",
        "LM0= 2 WP0= 0.5",
        "--optimizer",
        "mert",
        "--restarts",
        "3",
    ]
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    assert result.exit_code == 0, result.output
    assert json.dumps(job_settings(told[0], 100, 0.5)) == (
        '{"features": ["wp", "rnn"], "params": ["wp.x=1", "rnn.model=m"], "nbest_size": 100, "restarts": 3, '
        '"seed": 0, "search": "cube", "interpolation": 0.5, "xml_input": "exclusive", "search_settings": {"stack": 50, '
        '"beam_threshold": 0.001, "weight_overwrite": {"LM0": [2.0], "WP0": [0.5]}}, "trust_region": 1.0}'
    )


@pytest.mark.parametrize("name, carrier", CARRIED)
def test_every_option_field_is_an_option_with_the_field_s_default(name, carrier):
    cmd, options = carried(name, carrier)
    for declared in fields(options):
        if OPTION not in declared.metadata:
            continue
        param, default = parameter(cmd, declared.name), cli_default(declared)
        if default is MISSING:
            assert param.required, declared.name
            continue
        assert param.default == default and not param.required, declared.name
        if default not in (None, False, []):
            assert f"[default: {default}" in param.get_help_record(click.Context(cmd))[1], declared.name


@pytest.mark.parametrize("name, carrier", CARRIED)
def test_options_are_built_by_keyword_only(name, carrier):
    assert all(f.kw_only for f in fields(carried(name, carrier)[1]))


def test_tune_help_shows_the_dataclass_defaults():
    out = " ".join(CliRunner().invoke(main, ["tune", "--help"]).output.split())
    for options, name in ((TuningOptions, "max_iterations"), (MertOptions, "restarts"), (TuningOptions, "seed")):
        declared = next(f for f in fields(options) if f.name == name)
        assert f"[default: {declared.default}" in out, name
    # the two whose default depends on --rerank (None in the dataclass): both defaults, as the loop takes them
    plain = TuningOptions(system=SystemOptions(config=Path("c")), source=Path("s"), references=[], out=Path("o"))
    rerank = replace(plain, rerank=True)
    assert (plain.nbest_entries(rescore_size=7), rerank.nbest_entries(rescore_size=7)) == (100, 7)
    assert (plain.interpolation_share(), rerank.interpolation_share()) == (0.5, 1.0)
    assert "[default: (100; with --rerank, the system's rescore-" in out
    assert "[default: (0.5; with --rerank, 1);" in out


def test_the_command_lines_defaults_are_the_dataclasses(tmp_path, monkeypatch):
    """A command given only what is required is told exactly what the dataclass says by default."""
    import pysmt.experiment.cli

    told = []
    monkeypatch.setattr("tuning.loop.tune", lambda options: told.append(options) or tmp_path / "t.toml")
    monkeypatch.setattr(pysmt.experiment.cli, "run_experiment", lambda options: told.append(options) or tmp_path / "r")
    monkeypatch.setattr(
        "pysmt.training.pipeline.Pipeline",
        lambda options: told.append(options) or type("Run", (), {"run": lambda self: None})(),
    )
    config, src, ref = tmp_path / "c.toml", tmp_path / "dev.src", tmp_path / "dev.ref"
    for path in (config, src, ref):
        path.write_text("")
    runner = CliRunner()
    for args in (
        ["tune", "-c", str(config), "--src", str(src), "--ref", str(ref), "--out", "t"],
        ["train", "--out", "s"],
        ["experiment", "--data", str(tmp_path), "--out", "r"],
        ["experiment", "--data", str(tmp_path), "--out", "r", "--scale", "small", "--seeds", "2"],
    ):
        result = runner.invoke(main, args)
        assert result.exit_code == 0, result.output
    full, small = SCALES["full"], SCALES["small"]
    assert told == [
        TuningOptions(system=SystemOptions(config=config), source=src, references=[ref], out=Path("t")),
        TrainingOptions(out=Path("s")),
        ExperimentOptions(
            data=tmp_path.resolve(),
            out=Path("r"),
            scale=full,
            seeds=full.seeds,
            dev_size=full.dev_size,
            budget=full.budget,
        ),  # the scale's, as --help says
        ExperimentOptions(
            data=tmp_path.resolve(), out=Path("r"), scale=small, seeds=2, dev_size=small.dev_size, budget=small.budget
        ),
    ]


@pytest.mark.parametrize(
    "plugin, training, data", [("rnn", "rnn_feature", "--phrase-table"), ("cslm", "pysmt_cslm", "--text")]
)
def test_the_neural_plugins_train_within_the_limits_they_are_given(plugin, training, data, tmp_path, monkeypatch):
    cmd = command(f"{plugin} train")
    told = []
    monkeypatch.setattr(sys.modules[cmd.callback.__module__], "use_training_threads", lambda threads: 1)
    monkeypatch.setattr(
        importlib.import_module(f"{training}.training"), "train", lambda *args, **kwargs: told.append(args[4]) or 1.0
    )
    (tmp_path / "data").write_text("")
    args = [plugin, "train", data, str(tmp_path / "data"), "--out", str(tmp_path / "m"), "--device", "cpu"]
    for extra in ([], ["--max-time", "2", "--valid-every", "5", "--patience", "3", "--max-updates", "9"]):
        result = CliRunner().invoke(main, args + extra)
        assert result.exit_code == 0, result.output
    assert told == [
        TrainingLimits(),
        TrainingLimits(max_time=120.0, max_updates=9, valid_every=5, checkpoint_every=5, patience=3),
    ]


def test_choices_come_from_the_one_place_that_defines_them():
    algorithms = get_args(get_type_hints(SearchConfig)["algorithm"])
    assert set(algorithms) == {"normal", "cube"}
    for name in ("decode", "tune"):
        assert tuple(parameter(command(name), "search").type.choices) == algorithms
    experiment = command("experiment")
    assert list(parameter(experiment, "scale").type.choices) == list(SCALES)
    shown = " ".join(experiment.get_help(click.Context(experiment)).split())
    assert all(f"{name}: {scale.summary}" in shown for name, scale in SCALES.items())
    for size in ("seeds", "budget"):  # the defaults --help gives per scale are the scales'
        described = per_scale(size)
        assert f"(default: the scale's: {described})" in shown
        values = {
            name: float(group.split()[0])
            for group in described.split(", ")
            for name in group.split(" ", 1)[1].split(" and ")
        }
        assert values == {name: getattr(scale, size) for name, scale in SCALES.items()}


def test_the_heavy_commands_are_imported_only_when_used():
    heavy = "{'tuning.loop', 'tuning.optimizer', 'pysmt.experiment.chain', 'pysmt.training.pipeline', 'pysmt.decoder'}"
    code = f"import sys, pysmt.cli; print(sorted({heavy} & set(sys.modules)))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "[]"
    assert {"tune", "experiment"} <= set(main.list_commands(click.Context(main)))
