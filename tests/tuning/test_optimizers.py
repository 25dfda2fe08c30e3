"""The optimizers' registry (tuning/optimizers.py): each optimizer's own options, how the loop runs it, what its
jobs record (exactly as before the registry, so that their jobs resume), and ``pysmt tune``'s options made of it."""

from __future__ import annotations

import dataclasses
from dataclasses import fields, replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from pysmt.cli import main
from pysmt.cli_options import OPTION
from pysmt.decoding.options import SystemOptions
from tests.tuning.test_kbmira import random_pool
from tuning.kbmira import kbmira
from tuning.loop import job_settings
from tuning.optimizer import in_turn, optimize
from tuning.optimizers import (
    OPTIMIZERS,
    KbmiraOptions,
    MertOptions,
    Optimizer,
    ProOptions,
    Task,
    UnknownOptimizer,
    register,
    registered,
    run_pro,
)
from tuning.options import OPTIMIZERS as NAMES
from tuning.options import TuningOptions
from tuning.pro import pro


def test_every_optimizer_is_registered_with_its_own_options_at_their_defaults():
    assert NAMES == tuple(OPTIMIZERS) == ("kbmira", "mert", "pro")
    assert {name: optimizer.options for name, optimizer in OPTIMIZERS.items()} == {
        "kbmira": KbmiraOptions,
        "mert": MertOptions,
        "pro": ProOptions,
    }
    assert MertOptions() == MertOptions(restarts=20, trust_region=1.0)
    assert KbmiraOptions() == KbmiraOptions(c=0.01, passes=60, decay=0.999, model_bg=False)  # Moses' kbmira's
    assert fields(ProOptions) == ()
    for optimizer in OPTIMIZERS.values():
        assert dataclasses.is_dataclass(optimizer.options) and optimizer.options.__dataclass_params__.frozen
        assert all(OPTION in f.metadata for f in fields(optimizer.options))  # each one of pysmt tune's options
    assert [OPTIMIZERS[name].flags() for name in NAMES] == [
        ["--mira-c", "--mira-passes", "--mira-decay", "--mira-model-bg"],
        ["--restarts", "--trust-region"],
        [],
    ]


def test_an_unknown_optimizer_is_an_error_naming_the_registered_ones():
    with pytest.raises(
        UnknownOptimizer, match=r"unknown optimizer 'adam': pysmt tune's optimizers are kbmira, mert, pro"
    ):
        registered("adam")
    with pytest.raises(UnknownOptimizer, match="'adam'"):  # when the options are made, before any decoding
        TuningOptions(
            system=SystemOptions(config=Path("c")), source=Path("s"), references=[], out=Path("o"), optimizer="adam"
        )
    with pytest.raises(UnknownOptimizer, match="'adam'"):
        TuningOptions(
            system=SystemOptions(config=Path("c")),
            source=Path("s"),
            references=[],
            out=Path("o"),
            optimizer_settings={"adam": 1},
        )


def test_an_optimizer_s_settings_must_be_its_own_options_and_the_others_default():
    plain = TuningOptions(system=SystemOptions(config=Path("c")), source=Path("s"), references=[], out=Path("o"))
    assert plain.optimizer_settings == {"kbmira": KbmiraOptions(), "mert": MertOptions(), "pro": ProOptions()}
    assert plain.optimizer_options() == KbmiraOptions()
    mert = replace(plain, optimizer="mert", optimizer_settings={"mert": MertOptions(restarts=3)})
    assert mert.optimizer_options() == MertOptions(restarts=3) and mert.restarts == 3
    assert mert.optimizer_settings["kbmira"] == KbmiraOptions()
    with pytest.raises(TypeError, match=r"optimizer_settings\['mert'\]: .* is no MertOptions"):
        replace(plain, optimizer_settings={"mert": KbmiraOptions()})


def test_two_optimizers_may_not_share_an_option_name():
    """Their fields are pysmt tune's parameters by name: a clash would hand one's value to the other."""

    @dataclasses.dataclass(frozen=True)
    class Clashing:
        restarts: int = 1

    with pytest.raises(ValueError, match=r"'clash'.*restarts \(mert's too\)"):
        register(Optimizer("clash", Clashing, run_pro, help=""))
    with pytest.raises(ValueError, match="registered already"):
        register(Optimizer("pro", ProOptions, run_pro, help=""))
    assert tuple(OPTIMIZERS) == NAMES
    tuning_fields = {f.name for f in fields(TuningOptions)} | {"config_path", "features", "params"}
    assert not tuning_fields & {f.name for o in OPTIMIZERS.values() for f in fields(o.options)}


def test_the_registry_runs_each_optimizer_as_its_own_function_with_its_options():
    features, stats = random_pool(5, sentences=12, candidates=8, dimension=3)
    init, fixed = [0.4, 0.3, 0.3], [False, False, True]
    task = Task(features, stats, init, seed=2, fixed=fixed, mapper=in_turn)
    expected = {
        "kbmira": kbmira(features, stats, init, c=0.1, passes=4, decay=0.9, model_bg=True, seed=2, fixed=fixed),
        "mert": optimize(features, stats, init, restarts=3, seed=2, fixed=fixed, trust_region=0.5),
        "pro": pro(features, stats, init, seed=2, fixed=fixed),
    }
    options = {
        "kbmira": KbmiraOptions(c=0.1, passes=4, decay=0.9, model_bg=True),
        "mert": MertOptions(restarts=3, trust_region=0.5),
        "pro": ProOptions(),
    }
    for name, optimizer in OPTIMIZERS.items():
        weights, bleu = optimizer.run(options[name], task)
        assert weights.tolist() == expected[name][0].tolist() and bleu == expected[name][1], name

    climbed = []

    def mapper(function, jobs, shared):
        climbed.append(len(jobs))
        return in_turn(function, jobs, shared)

    registered("mert").run(MertOptions(restarts=3), replace(task, mapper=mapper))
    assert climbed == [4]  # the given weights and 3 restarts, where the loop spreads them


def test_every_optimizer_s_job_record_is_as_before_the_registry():
    """job.json's settings, as the loop wrote them with an if per optimizer: a job started before resumes."""
    plain = TuningOptions(
        system=SystemOptions(config=Path("c")), source=Path("s"), references=[], out=Path("o"), seed=4
    )
    common = {
        "features": [],
        "params": [],
        "nbest_size": 100,
        "restarts": 20,
        "seed": 4,
        "search": None,
        "interpolation": 0.5,
    }
    assert job_settings(plain, 100, 0.5) == {
        **common,
        "optimizer": {"name": "kbmira", "c": 0.01, "passes": 60, "decay": 0.999, "model_bg": False},
    }
    kbmira_given = replace(
        plain,
        optimizer_settings={
            "kbmira": KbmiraOptions(c=0.1, passes=5, decay=0.5, model_bg=True),
            "mert": MertOptions(restarts=2),  # every job records the restarts (pysmt experiment gives them)
        },
    )
    assert job_settings(kbmira_given, 100, 0.5) == {
        **common,
        "restarts": 2,
        "optimizer": {"name": "kbmira", "c": 0.1, "passes": 5, "decay": 0.5, "model_bg": True},
    }
    # MERT's: no optimizer entry (as the records of before --optimizer), but its trust region
    assert job_settings(replace(plain, optimizer="mert"), 100, 0.5) == {**common, "trust_region": 1.0}
    inf = replace(plain, optimizer="mert", optimizer_settings={"mert": MertOptions(restarts=7, trust_region=np.inf)})
    assert job_settings(inf, 100, 0.5) == {**common, "restarts": 7, "trust_region": "inf"}
    assert job_settings(replace(plain, optimizer="pro"), 100, 0.5) == {**common, "optimizer": {"name": "pro"}}
    # the keys in the order job.json has always held them
    assert list(job_settings(replace(plain, optimizer="mert", rerank=True), 7, 1.0)) == [
        *common,
        "rerank",
        "trust_region",
    ]
    assert list(job_settings(replace(plain, optimizer="pro"), 7, 1.0)) == [*common, "optimizer"]


@pytest.fixture
def told(tmp_path, monkeypatch):
    """What ``pysmt tune`` would run, for its arguments (the loop is not run)."""
    told = []
    monkeypatch.setattr("tuning.loop.tune", lambda options: told.append(options) or tmp_path / "t.toml")
    for name in ("c.toml", "dev.src", "dev.ref"):
        (tmp_path / name).write_text("")
    required = ["tune", "-c", str(tmp_path / "c.toml"), "--src", str(tmp_path / "dev.src")]
    required += ["--ref", str(tmp_path / "dev.ref"), "--out", str(tmp_path / "t")]

    def tune(*args: str) -> tuple[int, str, TuningOptions | None]:
        told.clear()
        result = CliRunner().invoke(main, [*required, *args])
        return result.exit_code, result.output, told[0] if told else None

    return tune


def test_the_command_line_gives_each_optimizer_its_options(told):
    code, _, options = told("--mira-c", "0.1", "--mira-model-bg", "--restarts", "5")
    assert code == 0 and options is not None and options.optimizer == "kbmira"
    assert options.optimizer_settings == {
        "kbmira": KbmiraOptions(c=0.1, model_bg=True),
        "mert": MertOptions(restarts=5),  # MERT's, but every job records it, so every optimizer takes it
        "pro": ProOptions(),
    }
    code, _, options = told("--optimizer", "mert", "--trust-region", "inf")
    assert code == 0 and options is not None and options.optimizer_options() == MertOptions(trust_region=np.inf)


@pytest.mark.parametrize(
    "args, error",
    [
        (
            ["--optimizer", "mert", "--mira-c", "0.1"],
            "--mira-c is kbmira's: --optimizer mert would ignore it (its own: ",
        ),
        (
            ["--trust-region", "inf"],
            "--trust-region is mert's: --optimizer kbmira would ignore it (its own: --mira-c, ",
        ),
        (
            ["--optimizer", "pro", "--mira-passes", "3", "--mira-model-bg"],
            "--mira-passes, --mira-model-bg are kbmira's: --optimizer pro would ignore them (it has no option of its "
            "own)",
        ),
    ],
)
def test_another_optimizer_s_option_is_a_usage_error(told, args, error):
    """It would change nothing (before the registry it was ignored without a word)."""
    code, output, options = told(*args)
    assert code == 2 and options is None
    said = [line for line in output.splitlines() if line.startswith("Error: ")]
    assert len(said) == 1 and said[0].startswith(f"Error: {error}"), output


def test_the_constants_that_moved_are_still_importable_from_tuning_options():
    import tuning.options

    with pytest.warns(DeprecationWarning, match="tuning.optimizers.MIRA_C"):
        assert tuning.options.MIRA_C == 0.01
    with pytest.raises(AttributeError):
        tuning.options.NOT_THERE  # noqa: B018
