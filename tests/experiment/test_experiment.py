"""`pysmt experiment`: statistics, report tables, resumable stages, and an end-to-end run at `--scale tiny`."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from pysmt.errors import PysmtError
from pysmt.evaluate import mean_sd, paired_bootstrap, score
from pysmt.experiment import chain, report, stages
from pysmt.experiment.data import Bitext, write_every, write_head
from pysmt.experiment.report import caveat_lines, claims, format_mean_sd, format_p, summarize, table1, tuning_caveats
from pysmt.experiment.settings import FULL_SCALE_PEAK_MB, SCALES
from pysmt.experiment.stages import Measure, Stages
from pysmt.testing import one_line_error, run_pysmt
from tuning.options import OPTIMIZER

REFS = ["le chat est sur le tapis .", "il fait beau aujourd'hui .", "je suis content ."] * 10
WORSE = ["le chat sur le tapis .", "il fait beau .", "je suis contente ."] * 10


# -- statistics ------------------------------------------------------------------------------------


def test_mean_and_sample_sd() -> None:
    assert mean_sd([1.0, 2.0, 3.0]) == (2.0, 1.0)
    mean, sd = mean_sd([31.2])
    assert mean == 31.2 and math.isnan(sd)
    assert format_mean_sd([31.2, 31.4]) == "31.30 ± 0.14"
    assert format_mean_sd([31.2]) == "31.20"
    assert format_p([0.0039, 0.12]) == "0.004 / 0.120"


def test_scores_are_sacrebleus() -> None:
    import sacrebleu

    scores = score(WORSE, [REFS])
    assert scores.bleu == sacrebleu.corpus_bleu(WORSE, [REFS]).score
    assert scores.chrf == sacrebleu.corpus_chrf(WORSE, [REFS]).score
    assert scores.bleu_signature.startswith("nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:")
    with pytest.raises(PysmtError, match="30 output lines but 29 reference lines"):
        score(WORSE, [REFS[:-1]])


def test_paired_bootstrap_against_the_first_system() -> None:
    p_values, signatures = paired_bootstrap({"base": WORSE, "better": REFS, "same": list(WORSE)}, [REFS])
    assert p_values["better"]["bleu"] < 0.01 and p_values["better"]["chrf"] < 0.01
    assert p_values["same"] == {"bleu": 1.0, "chrf": 1.0}  # not sacrebleu's smallest p for equal outputs
    assert "bs:1000|seed:12345" in signatures["bleu"]
    assert paired_bootstrap({"base": WORSE, "again": WORSE}, [REFS])[0] == {"again": {"bleu": 1.0, "chrf": 1.0}}


def test_evaluate_command(tmp_path: Path) -> None:
    ref, base, better = tmp_path / "ref.fr", tmp_path / "base.fr", tmp_path / "better.fr"
    for path, lines in ((ref, REFS), (base, WORSE), (better, REFS)):
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    proc = run_pysmt("evaluate", "-r", ref, base, better)
    assert proc.returncode == 0, proc.stderr
    rows = proc.stdout.splitlines()
    assert rows[0] == f"{base}\tBLEU {score(WORSE, [REFS]).bleu:.2f}\tchrF {score(WORSE, [REFS]).chrf:.2f}"
    assert rows[1].startswith(f"{better}\tBLEU 100.00\tchrF 100.00\tp(BLEU) 0.0010")
    assert rows[2].startswith("BLEU: nrefs:1|case:mixed")
    ref.write_text("one line\n", encoding="utf-8")
    one_line_error(run_pysmt("evaluate", "-r", ref, base), str(base), "30 output lines but 1 reference lines")


def evaluation(dev: dict[str, list[float]], test: dict[str, list[float]], p: list[float]) -> dict:
    """An evaluation.json as the scoring stage writes it, from BLEU per configuration and seed."""

    def runs(values: list[float], extra: dict) -> dict:
        return {str(k): {"bleu": v, "chrf": 2 * v, **extra} for k, v in enumerate(values)}

    return {
        "dev": {key: runs(values, {}) for key, values in dev.items()},
        "tests": {
            "nt13": {
                key: {
                    str(k): {
                        "bleu": v,
                        "chrf": 2 * v,
                        **({"p_bleu": p[k], "p_chrf": p[k]} if key != "baseline" else {}),
                    }
                    for k, v in enumerate(values)
                }
                for key, values in test.items()
            }
        },
    }


KEYS = ["baseline", "rnn", "rnn-wp", "cslm-rnn", "cslm-rnn-wp"]


def test_table1_has_ours_beside_the_papers() -> None:
    keys = KEYS
    summary = summarize(
        evaluation(
            {k: [10.0 + i, 11.0 + i] for i, k in enumerate(keys)},
            {k: [20.0 + i, 20.5 + i] for i, k in enumerate(keys)},
            [0.01, 0.2],
        )
    )
    assert summary["rnn"]["tests"]["nt13"]["bleu_mean"] == 21.25
    assert summary["rnn"]["tests"]["nt13"]["p_bleu"] == [0.01, 0.2]
    assert summary["baseline"]["tests"]["nt13"]["p_bleu"] is None
    single = summarize(evaluation({k: [10.0] for k in keys}, {k: [20.0] for k in keys}, [0.5]))
    assert single["rnn"]["dev"]["bleu_sd"] is None  # JSON null, not NaN
    assert "| RNN | mert | 10.00 | 20.00 | +0.00 | 40.00 | 0.500 |" in table1(single, "nt13", "mert")
    assert table1(summary, "nt13", "kbmira").splitlines() == [
        (
            "| Configuration | tuned by | dev BLEU | test BLEU | Δ test | test chrF | p (BLEU) vs baseline, per seed "
            "| paper dev | paper test |"
        ),
        "|---|---|---:|---:|---:|---:|---|---:|---:|",
        "| Baseline | kbmira | 10.50 ± 0.71 | 20.25 ± 0.35 |  | 40.50 ± 0.71 |  | 30.64 | 33.30 |",
        "| RNN | kbmira | 11.50 ± 0.71 | 21.25 ± 0.35 | +1.00 | 42.50 ± 0.71 | 0.010 / 0.200 | 31.20 | 33.87 |",
        # the paper has no RNN + WP row: its columns say so
        "| RNN + WP | kbmira | 12.50 ± 0.71 | 22.25 ± 0.35 | +2.00 | 44.50 ± 0.71 | 0.010 / 0.200 | – | – |",
        "| CSLM + RNN | kbmira | 13.50 ± 0.71 | 23.25 ± 0.35 | +3.00 | 46.50 ± 0.71 | 0.010 / 0.200 | 31.48 | 34.64 |",
        (
            "| CSLM + RNN + WP | kbmira | 14.50 ± 0.71 | 24.25 ± 0.35 | +4.00 | 48.50 ± 0.71 | 0.010 / 0.200 "
            "| 31.50 | 34.54 |"
        ),
    ]
    assert summary["rnn-wp"]["paper"] == {"dev": None, "test": None}  # results.json: null


def test_claims_are_not_made_for_rows_that_tuning_did_not_produce() -> None:
    keys = KEYS
    data = evaluation({k: [10.0] for k in keys}, {k: [20.0 + i] for i, k in enumerate(keys)}, [0.01])
    base = {"LM0": [0.5], "WordPenalty0": [-1.0]}
    data["weights"] = {
        "baseline": {"0": base},
        "rnn": {"0": {**base, "RNN0": [0.1]}},
        "rnn-wp": {"0": {**base, "RNN0": [0.1], "WP0": [0.2]}},
        "cslm-rnn": {"0": {**base, "RNN0": [0.1], "CSLM0": [0.0]}},
        "cslm-rnn-wp": {"0": {**base, "RNN0": [0.1], "CSLM0": [0.2], "WP0": [0.3]}},
    }
    for key in keys:
        data["dev"][key]["0"]["iteration"] = 2
    data["dev"]["cslm-rnn-wp"]["0"]["iteration"] = 1
    caveats = tuning_caveats(data)
    assert caveats == {
        "baseline": [],
        "rnn": [],
        "rnn-wp": [],
        "cslm-rnn": ["seed 0: tuned weight 0 for CSLM0 (the feature was not used)"],
        "cslm-rnn-wp": ["seed 0: tuning kept the starting weights (iteration 1 decoded best)"],
    }
    lines = claims(summarize(data), "nt13", caveats).splitlines()
    assert lines[0] == "- RNN vs Baseline: +1.00 BLEU (p < 0.05 in every seed)."
    assert lines[1] == "- RNN + WP vs Baseline: +2.00 BLEU (p < 0.05 in every seed)."
    assert lines[2].endswith("Not a result of tuning: seed 0: tuned weight 0 for CSLM0 (the feature was not used).")
    assert lines[4] == (
        "- CSLM + RNN vs RNN alone: +2.00 BLEU (the paper: +0.77 on its test set): not judged: tuning "
        "did not produce these rows (see above)."
    )
    assert caveat_lines(data) == [
        "CSLM + RNN, seed 0: tuned weight 0 for CSLM0 (the feature was not used)",
        "CSLM + RNN + WP, seed 0: tuning kept the starting weights (iteration 1 decoded best)",
    ]


# -- data slices -----------------------------------------------------------------------------------


def write_bitext(folder: Path, name: str, n: int) -> Bitext:
    folder.mkdir(parents=True, exist_ok=True)
    bitext = Bitext(folder / f"{name}.en", folder / f"{name}.fr")
    bitext.source.write_text("".join(f"{name} en {k}\n" for k in range(n)), encoding="utf-8")
    bitext.target.write_text("".join(f"{name} fr {k}\n" for k in range(n)), encoding="utf-8")
    return bitext


def test_slices(tmp_path: Path) -> None:
    a, b = write_bitext(tmp_path, "a", 5), write_bitext(tmp_path, "b", 4)
    out = Bitext(tmp_path / "out.en", tmp_path / "out.fr")
    assert write_every([a, b], 3, out, "--data") == 3
    assert out.target.read_text().splitlines() == ["a fr 0", "a fr 3", "b fr 1"]
    assert write_head(a, 2, out, "--data", "--dev-size") == 2
    assert out.source.read_text().splitlines() == ["a en 0", "a en 1"]
    with pytest.raises(PysmtError, match="--dev-size 6: .*a.en has only 5 lines"):
        write_head(a, 6, out, "--data", "--dev-size")
    b.target.write_text("short\n", encoding="utf-8")
    with pytest.raises(PysmtError, match="different numbers of lines"):
        write_every([b], 1, out, "--data")


def test_test_set_names() -> None:
    taken = {"train", "dev"}
    names = [chain.test_name(Path(p), taken) for p in ("a/newstest2013.en", "b/newstest2013.en", "c/dev.en")]
    assert names == ["newstest2013", "newstest2013-2", "dev-2"]


# -- resumable stages ------------------------------------------------------------------------------


def test_stage_skipped_when_done_refused_when_changed(tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("x\n", encoding="utf-8")
    calls: list[str] = []

    def stages(force: bool = False) -> Stages:
        return Stages(tmp_path / "run", total=1, force=force)

    stages().run("model", {"budget": 1.0}, {"--text": source}, lambda _: calls.append("ran"), in_process=True)
    result = stages().run("model", {"budget": 1.0}, {"--text": source}, lambda _: calls.append("ran"))
    assert calls == ["ran"] and result.skipped
    with pytest.raises(PysmtError, match=r"budget: 1\.0 -> 2\.0.*--force"):
        stages().run("model", {"budget": 2.0}, {"--text": source}, lambda _: calls.append("ran"))
    source.write_text("changed\n", encoding="utf-8")
    with pytest.raises(PysmtError, match="--text: .*in.txt changed since the job started"):
        stages().run("model", {"budget": 1.0}, {"--text": source}, lambda _: calls.append("ran"))
    stages(force=True).run("model", {"budget": 2.0}, {"--text": source}, lambda _: calls.append("forced"))
    assert calls == ["ran", "forced"]
    # a derived stage (scores) is redone, not refused, when its inputs change
    stages().run("scores", {}, {"--text": source}, lambda _: calls.append("scored"), derived=True)
    source.write_text("changed again\n", encoding="utf-8")
    stages().run("scores", {}, {"--text": source}, lambda _: calls.append("scored"), derived=True)
    assert calls[-2:] == ["scored", "scored"]


def test_unfinished_stage_resumes(tmp_path: Path) -> None:
    def fail(_: Measure) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        Stages(tmp_path, 1).run("tune", {"seed": 0}, {}, fail)
    calls: list[str] = []
    result = Stages(tmp_path, 1).run("tune", {"seed": 0}, {}, lambda _: calls.append("resumed"))
    assert calls == ["resumed"] and not result.skipped


def test_failed_command_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(PysmtError, match=r"`pysmt lm --text .*missing.txt --out .*` failed with exit status 1"):
        Measure().run(["lm", "--text", str(tmp_path / "missing.txt"), "--out", str(tmp_path / "lm.bin")])


def test_missing_plugin_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chain, "available", lambda: {"rnn": None, "wp": None})
    with pytest.raises(PysmtError, match=r"needs the pysmt-cslm plugin .*pip install -e plugins/cslm"):
        chain.check_plugins()


@pytest.mark.slow  # four commands
def test_bad_options(tmp_path: Path) -> None:
    one_line_error(
        run_pysmt("experiment", "--data", tmp_path, "--out", tmp_path / "run", "--scale", "huge"), "--scale", status=2
    )
    one_line_error(
        run_pysmt("experiment", "--data", tmp_path, "--out", tmp_path / "run", "--seeds", "0"), "--seeds", status=2
    )
    one_line_error(
        run_pysmt("experiment", "--data", tmp_path, "--out", tmp_path / "run", "--scale", "tiny"),
        "--data",
        "no such file",
    )
    one_line_error(
        run_pysmt("experiment", "--data", tmp_path, "--out", tmp_path / "run", "--system", tmp_path),
        "--system",
        "pysmt.toml",
    )


# -- end to end --------------------------------------------------------------------------------------


def test_experiment_tiny_end_to_end_and_rerun_skips(tmp_path: Path, shared_data) -> None:
    shared_data("news", "newstest2013.en")
    run = tmp_path / "run"
    args = ["experiment", "--data", shared_data(), "--out", run, "--scale", "tiny"]
    proc = run_pysmt(*args)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = (run / "report.md").read_text(encoding="utf-8")
    for needed in (
        "## Table 1 on newstest2013",
        f"| CSLM + RNN + WP | {OPTIMIZER} |",
        "| – | – |",  # RNN + WP: not in the paper
        "The RNN was trained transductively",
        "no reference was read",
        f"every row tuned by `pysmt tune --optimizer {OPTIMIZER}`",
        "| 31.50 | 34.54 |",
        "tok:13a",
        "204,633",
        "## Tuned weights",
        "RNN0",
        "CSLM0",
        "WP0",
        "(Table 2)",
        "(Table 3)",
        "scatter.png",
        "## Stages: time and peak memory",
        "| tune-cslm-rnn-wp-seed0 |",
        "**A plumbing check, not a result.**",
    ):
        assert needed in report, needed
    results = json.loads((run / "results.json").read_text(encoding="utf-8"))
    assert list(results["configurations"]) == KEYS
    assert "transductively" in results["settings"]["rnn_training"] and results["settings"]["rnn_mode"] == "column"
    assert "| score-rnn |" in report and "an extra phrase-table column, as in the paper" in report
    [stored] = (run / "system-bin").glob("*phrase-table*/stored/rnn.json")  # the RNN's column, for the dev and test
    assert json.loads(stored.read_text(encoding="utf-8"))["made_by"]["pairs_for"]  # pairs only
    assert sorted(p.name for p in (run / "system").glob("*table*.bin")) == [  # pysmt train's binary tables ...
        "phrase-table.bin",
        "reordering-table.wbe-msd-bidirectional-fe.bin",
    ]
    assert not list((run / "system").glob("*table*.bin/stored"))  # ... linked into system-bin, where the column is
    for key in ("rnn", "rnn-wp", "cslm-rnn", "cslm-rnn-wp"):  # the test decodes read the tuned configs: column too
        assert 'mode = "column"' in (run / "tune" / key / "seed0" / "pysmt.toml").read_text(encoding="utf-8"), key
    job = json.loads((run / "rnn" / "job.json").read_text(encoding="utf-8"))
    assert [Path(f["path"]).name for label in ("--pairs-for", "--pairs-for (2)") for f in job["inputs"][label]] == [
        "dev.en",
        "newstest2013.en",
    ]
    rnn = results["configurations"]["rnn"]["tests"]["newstest2013"]
    assert len(rnn["bleu"]) == 1 and 0 <= rnn["p_bleu"][0] <= 1
    assert len((run / "decode" / "newstest2013" / "cslm-rnn.seed0.fr").read_text().splitlines()) == 20
    assert [u for u, _ in results["learning_curves"]["RNN"]] == [10, 20]  # --max-updates 20, --valid-every 10
    assert [u for u, _ in results["learning_curves"]["CSLM"]] == [10, 20]
    assert (run / "bleu.png").is_file() and (run / "learning-curves.png").is_file()

    again = run_pysmt(*args)
    assert again.returncode == 0, again.stderr[-3000:]
    progress = [line for line in again.stderr.splitlines() if line.startswith("pysmt experiment: [")]
    assert progress and all(line.endswith("skipped") for line in progress), progress
    one_line_error(run_pysmt(*args, "--budget", "0.5"), "stages/rnn", "budget_minutes: 2.0 -> 0.5", "--force")
    moved = run.rename(tmp_path / "moved")  # a finished experiment, renamed (or copied): it resumes where it is
    again = run_pysmt("experiment", "--data", shared_data(), "--out", moved, "--scale", "tiny")
    assert again.returncode == 0, again.stderr[-3000:]
    progress = [line for line in again.stderr.splitlines() if line.startswith("pysmt experiment: [")]
    assert progress and all(line.endswith("skipped") for line in progress), progress


def test_a_resumed_stage_counts_the_time_of_its_earlier_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stage times add up across runs: an interrupted run's time stays in elapsed.json for the next one."""
    now = [1000.0]
    monkeypatch.setattr(stages.time, "time", lambda: now[0])

    def interrupted(_: Measure) -> None:
        now[0] += 90.0
        raise KeyboardInterrupt

    def finishing(_: Measure) -> None:
        now[0] += 30.0

    with pytest.raises(KeyboardInterrupt):
        Stages(tmp_path, 1).run("tune", {"seed": 0}, {}, interrupted)
    assert json.loads((tmp_path / "stages" / "tune" / stages.ELAPSED_FILE).read_text())["seconds"] == 90.0
    result = Stages(tmp_path, 1).run("tune", {"seed": 0}, {}, finishing)
    assert result.seconds == 120.0
    assert json.loads((tmp_path / "stages" / "tune" / stages.DONE_FILE).read_text())["seconds"] == 120.0
    forced = Stages(tmp_path, 1, force=True).run("tune", {"seed": 0}, {}, finishing)
    assert forced.seconds == 30.0  # started afresh: the earlier runs' time went with their work


def tiny_plan(tmp_path: Path, seeds: int = 2) -> list[stages.Step]:
    options = chain.ExperimentOptions(
        data=tmp_path, out=tmp_path / "run", scale=SCALES["tiny"], seeds=seeds, dev_size=None, budget=1.0, threads=3
    )
    return chain.Experiment(options).plan()


def test_the_plan_names_what_each_stage_needs_and_lists_it_after_them(tmp_path: Path) -> None:
    steps = tiny_plan(tmp_path)
    after = {step.name: step.after for step in steps}
    assert after["binarize"] == after["rnn"] == ["system"] and after["cslm"] == ["system", "rnn"]
    assert after["score-rnn"] == ["binarize", "rnn"]  # the RNN's column, stored with the binarized table
    assert after["tune-baseline-seed1"] == ["binarize"]  # it need not wait for the networks
    assert after["tune-rnn-seed0"] == ["binarize", "rnn", "score-rnn"]
    assert after["tune-cslm-rnn-wp-seed1"] == ["binarize", "cslm", "rnn", "score-rnn"]
    assert after["decode-newstest2013-rnn-seed1"] == ["tune-rnn-seed1"] and after["analyses"] == ["rnn"]
    assert after["tune-rnn-wp-seed0"] == ["binarize", "rnn", "score-rnn"]
    assert len(after["evaluate"]) == 2 * 5 * 2  # every tuning and test decode
    assert [step.name for step in steps].count("rnn") == 1  # one RNN for every seed and configuration
    assert [step.name for step in steps][:5] == ["system", "binarize", "rnn", "score-rnn", "cslm"]
    seen: set[str] = set()
    for step in steps:  # the single-machine order runs every stage after those it needs
        assert set(step.after) <= seen, step.name
        seen.add(step.name)
    assert len(steps) == len(seen) == 1 + 4 + 2 * 5 * 2 + 2


def test_the_stage_count_is_the_plans(tmp_path: Path) -> None:
    """`[n/N]`: N counts the data's stages and every stage of the plan."""
    for seeds in (1, 2):
        options = chain.ExperimentOptions(
            data=tmp_path, out=tmp_path / "run", scale=SCALES["tiny"], seeds=seeds, dev_size=None, budget=1.0
        )
        experiment = chain.Experiment(options)
        assert experiment.stages.total == experiment.data_stages + len(experiment.plan())


class Commands:
    """A stage's Measure that records the commands instead of running them."""

    def __init__(self) -> None:
        self.args: list[list[str]] = []

    def run(self, args: list[str], stdout: Path | None = None) -> None:
        self.args.append(args)


def test_the_rnn_trains_once_on_the_pairs_of_the_dev_and_test_sources(tmp_path: Path, monkeypatch) -> None:
    tests = [write_bitext(tmp_path / "sets", name, 2) for name in ("nt13", "nt14")]
    options = chain.ExperimentOptions(
        data=tmp_path, out=tmp_path / "run", scale=SCALES["tiny"], seeds=2, dev_size=None, budget=1.0, tests=tests
    )
    experiment = chain.Experiment(options)
    stages_run: list[tuple[str, dict]] = []
    commands = Commands()

    def run(name: str, options: dict, inputs: dict, action, **_: object) -> None:
        stages_run.append((name, inputs))
        action(commands)

    monkeypatch.setattr(experiment.stages, "run", run)
    experiment.train_rnn()
    data = tmp_path / "run" / "data"
    sources = [data / "dev.en", data / "nt13.en", data / "nt14.en"]  # the files tuning and test decoding translate
    assert stages_run == [
        (
            "rnn",
            {
                "--phrase-table": experiment.system / "phrase-table.gz",
                "--pairs-for": sources,
                "-c": experiment.system / "pysmt.toml",
            },
        )
    ]
    [args] = commands.args
    assert args[:2] == ["rnn", "train"]
    assert [args[k + 1] for k, arg in enumerate(args) if arg == "--pairs-for"] == [str(path) for path in sources]
    assert args[args.index("-c") + 1] == str(experiment.system / "pysmt.toml")
    assert not any(arg.endswith(".fr") for arg in args)  # never a reference


def test_the_analyses_read_the_pairs_the_rnn_was_trained_on(tmp_path: Path, monkeypatch) -> None:
    options = chain.ExperimentOptions(
        data=tmp_path, out=tmp_path / "run", scale=SCALES["tiny"], seeds=1, dev_size=None, budget=1.0, tests=[]
    )
    experiment = chain.Experiment(options)
    ran: list = []
    commands = Commands()
    monkeypatch.setattr(
        experiment.stages,
        "run",
        lambda name, options, inputs, action, **_: (ran.append((name, inputs)), action(commands)),
    )
    experiment.analyse()
    pairs = experiment.rnn / "pairs-for.gz"
    assert ran == [("analyses", {"rnn": experiment.rnn, "pairs": pairs})]
    assert [args[:2] for args in commands.args] == [
        ["rnn", name] for name in ("top-phrases", "samples", "scatter", "maps")
    ]
    assert all(args[args.index("--phrase-table") + 1] == str(pairs) for args in commands.args)


def binarized_experiment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[chain.Experiment, list]:
    """A tiny experiment whose system is binarized (a toy system), with a test set nt13; its stages record
    what they would run (name, options, inputs, commands) instead of running it."""
    from pysmt.binarize import binarize_system
    from pysmt.config_files import configure_system
    from pysmt.testing import write_toy_system

    tests = [write_bitext(tmp_path / "sets", "nt13", 2)]
    options = chain.ExperimentOptions(
        data=tmp_path, out=tmp_path / "run", scale=SCALES["tiny"], seeds=1, dev_size=None, budget=1.0, tests=tests
    )
    experiment = chain.Experiment(options)
    binarize_system(configure_system(write_toy_system(tmp_path / "text", reordering=None)), experiment.config.parent)
    ran: list = []

    def run(name: str, options: dict, inputs: dict, action, **_: object) -> None:
        commands = Commands()
        action(commands)
        ran.append((name, options, inputs, commands.args))

    monkeypatch.setattr(experiment.stages, "run", run)
    return experiment, ran


def test_the_rnn_column_is_scored_for_the_dev_and_test_pairs_of_the_binarized_table(tmp_path, monkeypatch) -> None:
    experiment, ran = binarized_experiment(tmp_path, monkeypatch)
    [table] = experiment.binarized_tables()  # as the binarized system's pysmt.toml names it
    assert table.parent == experiment.config.parent and "phrase-table" in table.name
    (table / "stored").mkdir()
    (table / "stored" / "rnn.npy").write_bytes(b"scores")  # the stage's own output: not one of its inputs
    experiment.score_rnn()
    data = tmp_path / "run" / "data"
    sources = [data / "dev.en", data / "nt13.en"]
    [(name, options, inputs, [args])] = ran
    assert name == "score-rnn" and options == {"mode": "column"}
    assert args == [
        "rnn",
        "score",
        "--model",
        str(experiment.rnn),
        "--phrase-table",
        str(table),
        "--pairs-for",
        str(sources[0]),
        "--pairs-for",
        str(sources[1]),
        "-c",
        str(experiment.config),
        "--threads",
        "2",
    ]
    assert inputs["--model"] == experiment.rnn and inputs["--pairs-for"] == sources
    assert inputs["-c"] == experiment.config
    assert inputs["--phrase-table"] and all(path.parent == table for path in inputs["--phrase-table"])
    assert table / "stored" / "rnn.npy" not in inputs["--phrase-table"]


def test_every_configuration_with_the_rnn_tunes_with_its_column(tmp_path, monkeypatch) -> None:
    experiment, ran = binarized_experiment(tmp_path, monkeypatch)
    [table] = experiment.binarized_tables()
    (table / "stored").mkdir()
    (table / "stored" / "rnn.npy").write_bytes(b"scores")
    for configuration in chain.CONFIGURATIONS:
        experiment.tune(configuration, 0)
    commands = {name: args for name, _, _, [args] in ran}
    data, out = tmp_path / "run" / "data", tmp_path / "run" / "tune"
    common = ["tune", "-c", str(experiment.config), "--src", str(data / "dev.en"), "--ref", str(data / "dev.fr")]
    settings = ["--seed", "0", "--nbest-size", "10", "--max-iterations", "2", "--restarts", "2"]
    rnn, cslm = f"rnn.model={experiment.rnn}", f"cslm.model={experiment.cslm}"
    expected = {
        "baseline": [],
        "rnn": ["--features", "rnn", "--param", rnn, "--param", "rnn.mode=column"],
        "rnn-wp": [
            *("--features", "rnn,wp", "--param", rnn, "--param", f"wp.model={experiment.rnn}"),
            *("--param", "rnn.mode=column"),
        ],
        "cslm-rnn": ["--features", "cslm,rnn", "--param", cslm, "--param", rnn, "--param", "rnn.mode=column"],
        "cslm-rnn-wp": [
            *("--features", "cslm,rnn,wp", "--param", cslm, "--param", rnn, "--param", f"wp.model={experiment.rnn}"),
            *("--param", "rnn.mode=column"),
        ],
    }
    for key, features in expected.items():
        folder = experiment.tune_dir(next(c for c in chain.CONFIGURATIONS if c.key == key), 0)
        assert folder == out / key / "seed0"
        assert commands[f"tune-{key}-seed0"] == [
            *common,
            *("--out", str(folder), *settings, "--optimizer", OPTIMIZER, "--threads", "2"),
            *features,
        ], key
    for name, options, inputs, _ in ran:
        system = inputs["system"]  # the binarized system, without the column that score-rnn stores in it
        assert experiment.config in system and table / "stored" / "rnn.npy" not in system
        with_rnn = name != "tune-baseline-seed0"
        assert options.get("rnn_mode") == ("column" if with_rnn else None)
        assert inputs.get("rnn column") == ([table / "stored"] if with_rnn else None), name


def test_the_report_says_how_the_rnn_was_trained_and_shows_rnn_wp(tmp_path: Path, monkeypatch) -> None:
    options = chain.ExperimentOptions(
        data=tmp_path, out=tmp_path / "run", scale=SCALES["tiny"], seeds=1, dev_size=None, budget=1.0
    )
    experiment = chain.Experiment(options)
    data = evaluation({k: [10.0] for k in KEYS}, {k: [20.0] for k in KEYS}, [0.5])
    base = {"LM0": [0.5]}
    features = {"rnn": ["RNN0"], "rnn-wp": ["RNN0", "WP0"], "cslm-rnn": ["CSLM0", "RNN0"]}
    features["cslm-rnn-wp"] = ["CSLM0", "RNN0", "WP0"]
    data["weights"] = {k: {"0": {**base, **{name: [0.1] for name in features.get(k, [])}}} for k in KEYS}
    for key in KEYS:
        data["dev"][key]["0"]["iteration"] = 2
    data["signatures"] = {"bleu": "BLEU|sig", "chrf": "chrF|sig"}
    monkeypatch.setattr(report, "available", lambda: False)  # no figures: this test reads the text
    experiment.run_dir.mkdir(parents=True)
    text = report.write_report(experiment, data).read_text(encoding="utf-8")
    assert (
        "The RNN was trained transductively: on the phrase pairs of the system's table that the decoder can use for "
        "the source sides of the dev set and of newstest2013 (what `pysmt filter` keeps for them; `pysmt rnn train "
        "--pairs-for`), once for every configuration and seed; no reference was read."
    ) in text
    assert f"| RNN + WP | {OPTIMIZER} | 10.00 | 20.00 | +0.00 | 40.00 | 0.500 | – | – |" in text
    assert (
        "The RNN's score is an extra phrase-table column, as in the paper: `pysmt rnn score --pairs-for` stored it "
        "with the binarized phrase table for those same pairs (the only ones the dev and test sentences look up), and "
        "every configuration with the RNN was tuned and decoded with `--param rnn.mode=column`, so that the table "
        "limit ranked each phrase's translations by it beside the table's own scores. The CSLM and WP score inside "
        "the search (`--features`)."
    ) in text
    assert "not as a phrase-table column" not in text
    results = json.loads((experiment.run_dir / "results.json").read_text(encoding="utf-8"))
    assert results["settings"]["rnn_training"].startswith("The RNN was trained transductively")
    assert results["settings"]["rnn_mode"] == "column"
    assert results["settings"]["search_settings"] == {}  # none given (--stack ...: tests/test_search_settings.py)
    assert results["configurations"]["rnn-wp"]["paper"] == {"dev": None, "test": None}


def test_a_stage_asks_for_the_memory_its_kind_took_in_this_run(tmp_path: Path) -> None:
    options = chain.ExperimentOptions(
        data=tmp_path, out=tmp_path / "run", scale=SCALES["tiny"], seeds=1, dev_size=None, budget=1.0, threads=3
    )
    experiment = chain.Experiment(options)
    assert experiment.needs("tune", gpu=True) == stages.Needs(3, FULL_SCALE_PEAK_MB["tune"], 1.0)
    experiment.stages.done.append(stages.StageResult("tune-baseline-seed0", 10.0, 400.0, skipped=False))
    experiment.stages.done.append(stages.StageResult("decode-x-baseline-seed0", 10.0, 900.0, skipped=False))
    assert experiment.needs("tune") == stages.Needs(3, 500.0, 0.0)


class FakeCluster:
    cancelled = 0

    def cancel(self) -> None:
        self.cancelled += 1


def test_stages_run_side_by_side_and_a_failure_stops_those_after_it(tmp_path: Path) -> None:
    import threading

    from pysmt.experiment.on_cluster import run_graph

    both = threading.Barrier(2, timeout=10)  # a and b wait for each other: they must run at the same time
    ran: list[str] = []

    def step(name: str, after: list[str], fail: bool = False) -> stages.Step:
        def action() -> None:
            if name in "ab":
                both.wait()
            ran.append(name)
            if fail:
                raise PysmtError(f"{name} failed")

        return stages.Step(name, after, action)

    run_graph([step("a", []), step("b", []), step("c", ["a", "b"])], FakeCluster())  # type: ignore[arg-type]
    assert sorted(ran[:2]) == ["a", "b"] and ran[2] == "c"
    ran.clear()
    cluster = FakeCluster()
    with pytest.raises(PysmtError, match="^x failed$"):
        run_graph([step("x", [], fail=True), step("y", ["x"]), step("z", [])], cluster)  # type: ignore[arg-type]
    assert "y" not in ran and cluster.cancelled == 1


def test_a_full_disk_under_a_stages_clock_leaves_the_stages_own_error(tmp_path: Path, monkeypatch) -> None:
    """The clock's heartbeat raised in its thread (a traceback beside the error) and its last save replaced the
    stage's own error with one about elapsed.json."""
    import threading
    import time

    def full(self: stages.StageClock) -> None:
        raise PysmtError(f"writing {self.path}: No space left on device; nothing was changed")

    monkeypatch.setattr(stages.StageClock, "save", full)
    monkeypatch.setattr(stages, "HEARTBEAT", 0.01)
    in_threads: list[object] = []
    monkeypatch.setattr(threading, "excepthook", in_threads.append)

    def work(_: Measure) -> None:
        time.sleep(0.1)  # heartbeats
        raise PysmtError("writing model.bin: No space left on device")

    with pytest.raises(PysmtError, match="^writing model.bin: No space left on device$"):
        Stages(tmp_path, 1).run("model", {}, {}, work, in_process=True)
    assert in_threads == []
