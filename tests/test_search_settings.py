"""Search settings on the command line (Moses' -stack, -cube-pruning-pop-limit, -beam-threshold, -distortion-limit,
-max-phrase-length, -ttable-limit, -weight-overwrite): what each changes, their errors, and where they are recorded."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest

from pysmt.config import SearchOverrides
from pysmt.config_files import configure_system, load_config, write_toml
from pysmt.decoder import Decoder
from pysmt.decoding.options import SystemOptions
from pysmt.errors import PysmtError
from pysmt.shared_options import search_overrides
from pysmt.testing import one_line_error, run_pysmt
from tests.helpers import tune_command, write_moses_system


def nbest(system: Path, line: str, algorithm: str | None = None, **settings: object) -> list[str]:
    """The 100-best targets of ``line`` with the given overrides (SearchOverrides' fields)."""
    decoder = Decoder.from_paths(system, overrides=SearchOverrides(**settings), algorithm=algorithm)  # type: ignore[arg-type]
    return [" ".join(candidate.words) for candidate in decoder.translate(line, nbest_size=100).hypotheses]


LM_HEAVY = (("KENLM0", (2.0,)),)  # the LM prefers x y z, which "c b a" reaches only by reordering


def test_each_setting_changes_what_it_should(tiny_system):
    assert nbest(tiny_system, "c b a", weights=LM_HEAVY)[0] == "x y z"
    assert set(nbest(tiny_system, "c b a", weights=LM_HEAVY, distortion_limit=0)) == {"z y x", "z y y"}  # monotone
    assert set(nbest(tiny_system, "a")) == {"x", "y"}
    assert set(nbest(tiny_system, "a", table_limit=1)) == {"x"}  # the best of a's two translations
    assert set(nbest(tiny_system, "b c")) == {"y z", "z x", "z y"}
    assert set(nbest(tiny_system, "b c", max_phrase_length=1)) == {"y z", "z y"}  # not the phrase "b c" -> "z x"
    default = nbest(tiny_system, "a b c")
    assert len(default) == 18
    assert len(nbest(tiny_system, "a b c", stack_size=1)) == 2
    assert len(nbest(tiny_system, "a b c", beam_threshold=0.5)) == 3
    assert len(nbest(tiny_system, "a b c", "cube")) == 18
    assert nbest(tiny_system, "a b c", "cube", pop_limit=1) == default[:1]


@pytest.mark.parametrize("engine", ["auto", "python"])
def test_stack_0_is_no_limit_as_in_moses(tiny_system, engine):
    """Moses' -stack 0 turns histogram pruning off (PruneToSize(0) returns); the beam threshold still prunes."""
    unlimited = SearchOverrides(stack_size=0, beam_threshold=0.0)
    huge = SearchOverrides(stack_size=10**6, beam_threshold=0.0)
    lists = [
        Decoder.from_paths(tiny_system, overrides=overrides, engine=engine).translate("a b c c b a", nbest_size=1000)
        for overrides in (unlimited, huge, SearchOverrides(stack_size=3, beam_threshold=0.0))
    ]
    targets = [[(" ".join(c.words), c.total) for c in found.hypotheses] for found in lists]
    assert targets[0] == targets[1] != targets[2]
    assert len(targets[0]) == 1000


def test_stack_0_in_a_config_and_on_the_command_line(tiny_system, tmp_path):
    ini = write_moses_system(tmp_path / "moses", extra="\n[stack]\n0\n")
    config = load_config(tiny_system)
    config.search.stack_size = 0
    write_toml(config, tmp_path / "pysmt.toml")
    assert "stack-size = 0\n" in (tmp_path / "pysmt.toml").read_text()
    expected = run_pysmt("decode", "-c", tiny_system, "-q", input="a b c\nc b a\n").stdout
    configs = (["-c", ini], ["-c", tmp_path / "pysmt.toml"])
    for args in (*configs, ["-c", tiny_system, "--stack", "0"], ["-c", tiny_system, "-stack", "0"]):
        proc = run_pysmt("decode", "-q", *args, input="a b c\nc b a\n")
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, expected, "")


def test_overrides_replace_the_configs_settings(tiny_system):
    overrides = SearchOverrides(stack_size=7, pop_limit=8, beam_threshold=0.25, distortion_limit=-1, table_limit=0)
    config = configure_system(tiny_system, overrides=overrides)
    assert (config.search.stack_size, config.search.pop_limit, config.search.beam_threshold) == (7, 8, 0.25)
    assert config.search.distortion_limit == -1 and config.search.max_phrase_length == 20  # not given: the config's
    assert config.feature("PhraseDictionaryMemory0").params["table-limit"] == 0
    assert overrides.recorded() == {
        "stack": 7,
        "pop_limit": 8,
        "beam_threshold": 0.25,
        "distortion_limit": -1,
        "table_limit": 0,
    }


def test_weight_overwrite_is_moses_syntax_and_wins(tiny_system, tmp_path):
    weights = tmp_path / "weights.txt"
    weights.write_text("KENLM0= 0.1\n")
    overrides = search_overrides({"search_weights": " KENLM0= 2  PhraseDictionaryMemory0= 0.5 -0.5 "})
    assert overrides.weights == (("KENLM0", (2.0,)), ("PhraseDictionaryMemory0", (0.5, -0.5)))
    config = configure_system(tiny_system, weights_path=weights, overrides=overrides)  # after --weights, as in Moses
    assert config.feature("KENLM0").weights == [2.0]
    assert config.feature("PhraseDictionaryMemory0").weights == [0.5, -0.5]
    assert config.feature("Distortion0").weights == [0.3]


def test_weight_overwrite_equals_editing_the_config(tiny_system, tmp_path):
    edited = write_moses_system(tmp_path / "edited", weights={"KENLM0": "2", "Distortion0": "0.1"})
    outputs = []
    for config, extra in ((tiny_system, ["--weight-overwrite", "KENLM0= 2 Distortion0= 0.1"]), (edited, [])):
        out = tmp_path / f"{len(outputs)}.nbest"
        proc = run_pysmt("decode", "-c", config, "--nbest", out, *extra, input="c b a\na b c\n")
        assert proc.returncode == 0, proc.stderr
        outputs.append((proc.stdout, out.read_text()))
    assert outputs[0] == outputs[1]
    assert outputs[0][0].splitlines()[0] == "x y z"


def test_decode_distortion_limit_0_is_monotone(tiny_system):
    proc = run_pysmt(
        "decode", "-c", tiny_system, "--weight-overwrite", "KENLM0= 2", "--distortion-limit", "0", input="c b a\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "z y x\n"


@pytest.mark.parametrize(
    "given, message",
    [
        ({"search_stack_size": -1}, "--stack must be 0 (no limit) or more, not -1"),
        ({"search_pop_limit": -3}, "--pop-limit must be positive, not -3"),
        ({"search_max_phrase_length": 0}, "--max-phrase-length must be positive, not 0"),
        ({"search_beam_threshold": 1.0}, "--beam-threshold must be in [0, 1), not 1"),
        ({"search_beam_threshold": float("nan")}, "--beam-threshold must be a finite number, not nan"),
        ({"search_distortion_limit": -2}, "--distortion-limit must be -1 (unlimited) or more, not -2"),
        ({"search_table_limit": -1}, "--table-limit must be 0 (keep all) or more, not -1"),
        ({"search_weights": "KENLM0 2"}, "--weight-overwrite 'KENLM0 2': expected a feature name first"),
        ({"search_weights": "KENLM0= x"}, "--weight-overwrite 'KENLM0= x': KENLM0's weight 1 must be a finite number"),
        ({"search_weights": "KENLM0="}, "--weight-overwrite 'KENLM0=': KENLM0 has no weights"),
        ({"search_weights": "A= 1 A= 2"}, "--weight-overwrite 'A= 1 A= 2': A is given twice"),
    ],
)
def test_bad_values_name_their_option(given, message):
    with pytest.raises(click.UsageError) as err:  # exit 2, as click's own checks of an option's value
        search_overrides(given)
    assert str(err.value).startswith(message), str(err.value)


@pytest.mark.parametrize(
    "text, message",
    [
        ("Nope0= 1", "--weight-overwrite: the system has no feature Nope0; it has KENLM0, Distortion0"),
        ("KENLM0= 1 2", "--weight-overwrite: KENLM0 has 1 weight, not 2"),
    ],
)
def test_weight_overwrite_must_name_the_systems_features(tiny_system, text, message):
    with pytest.raises(PysmtError, match="^" + message.replace("(", r"\(")):
        configure_system(tiny_system, overrides=search_overrides({"search_weights": text}))


def test_bad_values_are_one_line_errors_in_every_command(tiny_system, dev, tmp_path):
    src, ref = dev
    proc = run_pysmt("decode", "-c", tiny_system, "--stack", "-1", input="a\n")
    one_line_error(proc, "--stack must be 0 (no limit)", status=2)
    proc = run_pysmt(*tune_command(tiny_system, src, ref, tmp_path / "t", "--weight-overwrite", "LM= 1"))
    one_line_error(proc, "--weight-overwrite: the system has no feature LM;")
    proc = run_pysmt("serve", "-c", tiny_system, "--port", "0", "--distortion-limit", "-5")
    one_line_error(proc, "--distortion-limit must be -1 (unlimited) or more, not -5", status=2)
    proc = run_pysmt("experiment", "--data", tmp_path, "--out", tmp_path / "run", "--table-limit", "-1")
    one_line_error(proc, "--table-limit must be 0 (keep all) or more, not -1", status=2)


@pytest.mark.parametrize(
    "option",
    [
        "--stack",
        "--distortion-limit",
        "--pop-limit",
        "--table-limit",
        "--nbest-size",
        "--mbr-size",
        "--max-phrase-length",
        "--threads",
    ],
)
def test_an_integer_beyond_the_cores_int_is_a_usage_error(tiny_system, option):
    """2^31 in --stack (and the other counts that reach the compiled core) was a 40-line pybind11 TypeError."""
    extra = {"--nbest-size": ["--nbest", "/dev/null"], "--mbr-size": ["--mbr"]}.get(option, [])
    proc = run_pysmt("decode", "-c", tiny_system, option, str(2**31), *extra, input="a\n")
    one_line_error(proc, option, "2147483648", status=2)


@pytest.mark.parametrize(
    "setting, value", [("stack-size", 2**31), ("distortion-limit", -(2**31) - 1), ("pop-limit", 10**30)]
)
def test_an_integer_beyond_the_cores_int_in_pysmt_toml_names_the_file_and_key(tiny_system, tmp_path, setting, value):
    config = tmp_path / "pysmt.toml"
    write_toml(load_config(tiny_system), config)
    text, found = re.subn(rf"(?m)^{setting} = .*$", f"{setting} = {value}", config.read_text())
    config.write_text(text)
    assert found == 1
    proc = run_pysmt("decode", "-c", config, input="a\n")
    one_line_error(proc, str(config), f"[search] {setting} must be from -2147483648 to 2147483647, not {value}")


@pytest.mark.slow  # a whole tune, train or several decodes: seconds (the fast tier stays under 2 minutes)
def test_tune_records_the_settings_and_keeps_them_in_the_tuned_config(tiny_system, dev, tmp_path):
    src, ref = dev
    out = tmp_path / "tune"
    settings = ["--stack", "5", "--table-limit", "1", "--distortion-limit", "0", "--weight-overwrite", "KENLM0= 2"]
    proc = run_pysmt(*tune_command(tiny_system, src, ref, out, *settings))
    assert proc.returncode == 0, proc.stderr
    job = json.loads((out / "job.json").read_text())
    assert job["options"]["search_settings"] == {
        "stack": 5,
        "distortion_limit": 0,
        "table_limit": 1,
        "weight_overwrite": {"KENLM0": [2.0]},
    }
    tuned = load_config(out / "pysmt.toml")
    assert (tuned.search.stack_size, tuned.search.distortion_limit) == (5, 0)
    assert tuned.feature("PhraseDictionaryMemory0").params["table-limit"] == 1
    # the starting weights are the overwritten ones (L1-normalized, as tuning starts)
    first = dict(line.split("= ") for line in (out / "run1" / "weights.txt").read_text().splitlines())
    assert float(first["KENLM0"]) / float(first["Distortion0"]) == pytest.approx(2.0 / 0.3)
    proc = run_pysmt(*tune_command(tiny_system, src, ref, out, "--stack", "6"))
    one_line_error(proc, "other inputs or options", "search_settings:", "--force")


def test_serve_builds_its_workers_with_the_settings(tiny_system):
    from pysmt.serving.options import ServeOptions
    from pysmt.serving.server import recipe_of

    overrides = SearchOverrides(stack_size=3, weights=LM_HEAVY)
    config = recipe_of(ServeOptions(system=SystemOptions(config=tiny_system, search_settings=overrides))).configure()
    assert config.search.stack_size == 3 and config.feature("KENLM0").weights == [2.0]


def test_experiment_passes_the_settings_to_its_tunings_and_decodes(tmp_path, monkeypatch):
    from tests.experiment.test_experiment import binarized_experiment

    experiment, ran = binarized_experiment(tmp_path, monkeypatch)
    experiment.o.search_settings = SearchOverrides(stack_size=50, beam_threshold=0.001, weights=LM_HEAVY)
    baseline = next(c for c in experiment_configurations() if c.key == "baseline")
    experiment.tune(baseline, 0)
    experiment.decode("nt13", baseline, 0)
    (tune_name, tune_options, _, [tune_args]), (_, decode_options, _, [decode_args]) = ran
    given = ["--stack", "50", "--beam-threshold", "0.001"]
    assert tune_args[-6:] == [*given, "--weight-overwrite", "KENLM0= 2.0"]
    recorded = {"stack": 50, "beam_threshold": 0.001}
    assert tune_options["search_settings"] == {**recorded, "weight_overwrite": {"KENLM0": [2.0]}}
    assert decode_args[-4:] == given  # the tuned weights, not the starting ones
    assert decode_options == {"search_settings": recorded}


def experiment_configurations():
    from pysmt.experiment.settings import CONFIGURATIONS

    return CONFIGURATIONS


def test_the_settings_are_declared_once_for_every_command():
    import click

    from pysmt.cli import main
    from pysmt.shared_options import SEARCH_SETTINGS

    names = ["--stack", "--pop-limit", "--beam-threshold", "--distortion-limit", "--max-phrase-length"]
    names += ["--table-limit", "--max-sentence-length", "--rescore-size", "--weight-overwrite"]
    for command in ("decode", "tune", "serve", "experiment"):
        cmd = main.get_command(click.Context(main), command)
        assert cmd is not None
        params = {p.name: p for p in cmd.params}
        assert [params[f"search_{name}"].opts for name in SEARCH_SETTINGS] == [[name] for name in names], command


def test_a_line_longer_than_max_sentence_length_is_written_empty_and_the_next_are_translated(tiny_system):
    """A 2 MB line ran out of memory (std::bad_alloc after 30 s at 4 GB) and stopped the run: the lines after it
    were never translated."""
    text = "a b c\n" + "a b " * 500 + "c\nc b a\n"  # 1,001 words: one more than the default
    proc = run_pysmt("decode", "-c", tiny_system, "-q", input=text)
    assert (proc.returncode, proc.stdout) == (0, "x y z\n\nz y x\n"), proc.stderr
    assert proc.stderr == (
        "pysmt: warning: input line 2: 1,001 words, more than --max-sentence-length 1,000: not translated "
        "(an empty line written)\n"
    )
    proc = run_pysmt("decode", "-c", tiny_system, "-q", "--max-sentence-length", "2", input="a b c\nc b\n")
    assert (proc.returncode, proc.stdout) == (0, "\nz y\n"), proc.stderr
    assert "input line 1: 3 words, more than --max-sentence-length 2" in proc.stderr


def test_max_sentence_length_in_pysmt_toml(tiny_system, tmp_path):
    config = tmp_path / "pysmt.toml"
    write_toml(load_config(tiny_system), config)
    assert "max-sentence-length = 1000\n" in config.read_text()
    config.write_text(config.read_text().replace("max-sentence-length = 1000", "max-sentence-length = 2"))
    assert run_pysmt("decode", "-c", config, "-q", input="a b c\nc b\n").stdout == "\nz y\n"
    config.write_text(config.read_text().replace("max-sentence-length = 2", "max-sentence-length = 0"))
    one_line_error(run_pysmt("decode", "-c", config, input="a\n"), "[search] max-sentence-length must be positive")


def test_a_line_of_too_many_characters_is_written_empty_before_it_is_prepared(tiny_system):
    """A line's characters are judged before it is tokenized (2 MB took a minute): 100 a word of the limit."""
    long_word = "a" * 201
    proc = run_pysmt("decode", "-c", tiny_system, "-q", "--max-sentence-length", "2", input=f"{long_word}\nc b\n")
    assert (proc.returncode, proc.stdout) == (0, "\nz y\n"), proc.stderr
    assert proc.stderr == (
        "pysmt: warning: input line 1: 201 characters, more than 200 (100 a word of --max-sentence-length 2): "
        "not translated (an empty line written)\n"
    )
    proc = run_pysmt("decode", "-c", tiny_system, "-q", "--max-sentence-length", "2", input="a" * 200 + "\n")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "a" * 200 + "\n", "")
