"""`pysmt experiment`: statistics, report tables, resumable stages, and an end-to-end run at `--scale tiny`."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from pysmt.config import SearchOverrides
from pysmt.errors import PysmtError
from pysmt.evaluate import mean_sd, paired_bootstrap, score
from pysmt.experiment import chain, report, stages
from pysmt.experiment.data import Bitext, write_every, write_head
from pysmt.experiment.report import caveat_lines, claims, format_mean_sd, format_p, summarize, table1, tuning_caveats
from pysmt.experiment.settings import CONFIGURATIONS, FULL_SCALE_PEAK_MB, SCALES, chosen, configuration
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


KEYS = ["baseline", "rnn", "rnn-wp", "cslm-rnn", "cslm-rnn-wp", "baseline-sentence", "cslm-rnn-wp-sentence"]
PAPER_KEYS = KEYS[:5]  # the paper's rows and RNN + WP: those without the sentence model


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
        # the rows re-ranked by the sentence model: compared with the same seed's baseline, as every row
        (
            "| Baseline + sentence | kbmira | 15.50 ± 0.71 | 25.25 ± 0.35 | +5.00 | 50.50 ± 0.71 | 0.010 / 0.200 "
            "| – | – |"
        ),
        (
            "| CSLM + RNN + WP + sentence | kbmira | 16.50 ± 0.71 | 26.25 ± 0.35 | +6.00 | 52.50 ± 0.71 "
            "| 0.010 / 0.200 | – | – |"
        ),
    ]
    assert summary["rnn-wp"]["paper"] == {"dev": None, "test": None}  # results.json: null
    assert summary["baseline-sentence"]["paper"] == {"dev": None, "test": None}
    assert summary["cslm-rnn-wp-sentence"]["reranks"] == "cslm-rnn-wp" and summary["rnn"]["reranks"] is None
    assert summary["cslm-rnn-wp-sentence"]["features"] == ["cslm", "rnn", "wp", "sentence"]


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
        # a re-ranking row's are rescoring weights: the sentence model's 0 means it re-ranked nothing
        "baseline-sentence": {"0": {**base, "Sentence0": [0.0, 0.0]}},
        "cslm-rnn-wp-sentence": {"0": {**base, "RNN0": [0.1], "CSLM0": [0.2], "WP0": [0.3], "Sentence0": [0.1, 0.2]}},
    }
    for key in keys:
        data["dev"][key]["0"]["iteration"] = 2
    data["dev"]["cslm-rnn-wp"]["0"]["iteration"] = 1
    data["dev"]["cslm-rnn-wp-sentence"]["0"]["iteration"] = 1
    caveats = tuning_caveats(data)
    assert caveats == {
        "baseline": [],
        "rnn": [],
        "rnn-wp": [],
        "cslm-rnn": ["seed 0: tuned weight 0 for CSLM0 (the feature was not used)"],
        "cslm-rnn-wp": ["seed 0: tuning kept the starting weights (iteration 1 decoded best)"],
        "baseline-sentence": ["seed 0: tuned weight 0 for Sentence0 (the feature was not used)"],
        "cslm-rnn-wp-sentence": ["seed 0: tuning kept the starting weights (iteration 1 re-ranked best)"],
    }
    lines = claims(summarize(data), "nt13", caveats).splitlines()
    assert lines[0] == "- RNN vs Baseline: +1.00 BLEU (p < 0.05 in every seed)."
    assert lines[1] == "- RNN + WP vs Baseline: +2.00 BLEU (p < 0.05 in every seed)."
    assert lines[2].endswith("Not a result of tuning: seed 0: tuned weight 0 for CSLM0 (the feature was not used).")
    assert lines[4].startswith("- Baseline + sentence vs Baseline: +5.00 BLEU (p < 0.05 in every seed). Not a result")
    assert lines[6] == (
        "- CSLM + RNN vs RNN alone: +2.00 BLEU (the paper: +0.77 on its test set): not judged: tuning "
        "did not produce these rows (see above)."
    )
    # the re-ranking's own gain over the row it re-ranks (the baseline's is the line vs Baseline)
    assert lines[7:] == [
        "- CSLM + RNN + WP + sentence vs CSLM + RNN + WP (the row it re-ranks): +2.00 BLEU in the means. "
        "Not a result of tuning (see above)."
    ]
    assert caveat_lines(data) == [
        "CSLM + RNN, seed 0: tuned weight 0 for CSLM0 (the feature was not used)",
        "CSLM + RNN + WP, seed 0: tuning kept the starting weights (iteration 1 decoded best)",
        "Baseline + sentence, seed 0: tuned weight 0 for Sentence0 (the feature was not used)",
        "CSLM + RNN + WP + sentence, seed 0: tuning kept the starting weights (iteration 1 re-ranked best)",
    ]


def test_a_table_of_some_rows_has_only_their_claims() -> None:
    """--configurations baseline-sentence: the baseline and the row re-ranking it; no claim about the others."""
    keys = ["baseline", "baseline-sentence"]
    data = evaluation({k: [10.0] for k in keys}, {k: [20.0 + i] for i, k in enumerate(keys)}, [0.2])
    data["weights"] = {"baseline": {"0": {"LM0": [0.5]}}, "baseline-sentence": {"0": {"Sentence0": [0.1, 0.1]}}}
    for key in keys:
        data["dev"][key]["0"]["iteration"] = 2
    summary = summarize(data)
    assert list(summary) == keys
    assert claims(summary, "nt13", tuning_caveats(data)) == (
        "- Baseline + sentence vs Baseline: +1.00 BLEU (not p < 0.05 in every seed)."
    )


def test_a_reranking_rows_dev_bleu_is_the_tuners_of_the_kept_iteration(tmp_path: Path) -> None:
    """`pysmt tune --rerank` decodes run1 alone (its later runs re-rank that decode's lists): the dev BLEU of the
    weights kept is the one summary.tsv records (sacrebleu's, summed from statistics), and there is no dev chrF."""
    from pysmt.experiment.run_folder import RunFolder
    from pysmt.experiment.scoring import dev_run

    folder = RunFolder(tmp_path, {}, 1, CONFIGURATIONS)
    reranking = configuration("baseline-sentence")
    tune_dir = folder.tune_dir(reranking, 0)
    for number, weights in ((1, "LM0= 0.5\nSentence0= 0.1 0.15\n"), (2, "LM0= 0.4\nSentence0= 0.3 0.1\n")):
        (tune_dir / f"run{number}").mkdir(parents=True)
        (tune_dir / f"run{number}" / "weights.txt").write_text(weights, encoding="utf-8")
    (tune_dir / "run1" / "output.txt").write_text("the decode's 1-best\n", encoding="utf-8")
    (tune_dir / "rescoring-weights.txt").write_text("LM0= 0.4\nSentence0= 0.3 0.1\n", encoding="utf-8")
    (tune_dir / "summary.tsv").write_text(
        "iteration\tdev_bleu\tnew_candidates\tpool\tpredicted_bleu\tdecode_s\toptimize_s\tLM0\n"
        "1\t12.50\t80\t80\t13.10\t2.0\t0.1\t0.5\n"
        "2\t13.10\t0\t80\t13.10\t0.0\t0.1\t0.4\n",
        encoding="utf-8",
    )
    assert folder.tuned_weights(reranking, 0) == tune_dir / "rescoring-weights.txt"
    assert dev_run(folder, reranking, 0, [["a reference"]]) == {"bleu": 13.1, "chrf": None, "iteration": 2}
    (tune_dir / "rescoring-weights.txt").write_text("LM0= 1.0\n", encoding="utf-8")
    with pytest.raises(PysmtError, match="no iteration re-ranked with the tuned rescoring-weights.txt"):
        dev_run(folder, reranking, 0, [["a reference"]])


def test_configurations_chooses_the_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--configurations KEY,...: those rows, the baseline and the row a chosen one re-ranks; a bad key is exit 2."""
    from click.testing import CliRunner

    import pysmt.experiment.cli
    from pysmt.cli import main

    told: list = []
    monkeypatch.setattr(pysmt.experiment.cli, "run_experiment", lambda options: told.append(options) or tmp_path / "r")
    common = ["experiment", "--data", str(tmp_path), "--out", str(tmp_path / "run")]
    for given, keys in (
        ("cslm-rnn-wp-sentence", ["baseline", "cslm-rnn-wp", "cslm-rnn-wp-sentence"]),
        ("rnn, baseline-sentence", ["baseline", "rnn", "baseline-sentence"]),
    ):
        result = CliRunner().invoke(main, [*common, "--configurations", given])
        assert result.exit_code == 0, result.output
        assert [c.key for c in told.pop().configurations] == keys
    assert CliRunner().invoke(main, common).exit_code == 0 and told.pop().configurations == CONFIGURATIONS
    result = CliRunner().invoke(main, [*common, "--configurations", "rnn,sentence"])
    assert result.exit_code == 2 and "'sentence': give all or keys among baseline, rnn, rnn-wp," in result.output


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
    # the rows without the sentence model: its training (2.5 min on a busy 2-core machine, the RNN's 1 min) and
    # the sentence rows' stages would take this test past run_pysmt's 10 minutes; their commands are tested
    # apart (test_a_sentence_row_reranks_the_tuned_config_of_its_row, ...)
    rows = ["--configurations", ",".join(PAPER_KEYS)]
    args = ["experiment", "--data", shared_data(), "--out", run, "--scale", "tiny", *rows]
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
    assert list(results["configurations"]) == PAPER_KEYS
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
    assert "Sentence" not in results["learning_curves"] and not (run / "sentence").exists()
    assert (run / "bleu.png").is_file() and (run / "learning-curves.png").is_file()

    again = run_pysmt(*args)
    assert again.returncode == 0, again.stderr[-3000:]
    progress = [line for line in again.stderr.splitlines() if line.startswith("pysmt experiment: [")]
    assert progress and all(line.endswith("skipped") for line in progress), progress
    one_line_error(run_pysmt(*args, "--budget", "0.5"), "stages/rnn", "budget_minutes: 2.0 -> 0.5", "--force")
    moved = run.rename(tmp_path / "moved")  # a finished experiment, renamed (or copied): it resumes where it is
    again = run_pysmt("experiment", "--data", shared_data(), "--out", moved, "--scale", "tiny", *rows)
    assert again.returncode == 0, again.stderr[-3000:]
    progress = [line for line in again.stderr.splitlines() if line.startswith("pysmt experiment: [")]
    assert progress and all(line.endswith("skipped") for line in progress), progress


def test_experiment_tiny_sentence_row_end_to_end(tmp_path: Path, shared_data) -> None:
    """The sentence row as the experiment runs it: the sentence model trained by the run (half a minute), the tuned
    baseline re-ranked by ``tune --rerank``, the test decoded with the re-ranked config and compared with the
    baseline, the model's learning curve in the report."""
    shared_data("news", "newstest2013.en")
    run = tmp_path / "run"
    args = ["--scale", "tiny", "--configurations", "baseline-sentence", "--budget", "0.5"]
    proc = run_pysmt("experiment", "--data", shared_data(), "--out", run, *args, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads((run / "results.json").read_text(encoding="utf-8"))
    assert list(results["configurations"]) == ["baseline", "baseline-sentence"]
    row = results["configurations"]["baseline-sentence"]["tests"]["newstest2013"]
    assert len(row["bleu"]) == 1 and 0 <= row["p_bleu"][0] <= 1
    assert results["learning_curves"]["Sentence"]
    tuned = (run / "tune" / "baseline-sentence" / "seed0" / "pysmt.toml").read_text(encoding="utf-8")
    assert 'type = "sentence"' in tuned
    assert len((run / "decode" / "newstest2013" / "baseline-sentence.seed0.fr").read_text().splitlines()) == 20
    assert "| Baseline + sentence | kbmira |" in (run / "report.md").read_text(encoding="utf-8")


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


def tiny_options(tmp_path: Path, seeds: int, configurations=CONFIGURATIONS, **more) -> chain.ExperimentOptions:
    """A tiny experiment's options in ``tmp_path/run``, of ``seeds`` seeds and the rows ``configurations``."""
    return chain.ExperimentOptions(
        data=tmp_path,
        out=tmp_path / "run",
        scale=SCALES["tiny"],
        seeds=seeds,
        dev_size=None,
        budget=1.0,
        configurations=configurations,
        **more,
    )


def tiny_plan(tmp_path: Path, seeds: int = 2, configurations=CONFIGURATIONS) -> list[stages.Step]:
    return chain.Experiment(tiny_options(tmp_path, seeds, configurations, threads=3)).plan()


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
    # the sentence model, once per run from the system's bitext; a re-ranking row from its row's tuning, same seed
    assert after["sentence"] == ["system"]
    assert after["tune-baseline-sentence-seed1"] == ["tune-baseline-seed1", "sentence"]
    assert after["tune-cslm-rnn-wp-sentence-seed0"] == ["tune-cslm-rnn-wp-seed0", "sentence"]
    assert after["decode-newstest2013-cslm-rnn-wp-sentence-seed1"] == ["tune-cslm-rnn-wp-sentence-seed1"]
    assert len(after["evaluate"]) == 2 * 7 * 2  # every tuning and test decode
    names = [step.name for step in steps]
    assert names.count("rnn") == names.count("sentence") == 1  # one of each for every seed and configuration
    assert names[:6] == ["system", "binarize", "rnn", "score-rnn", "cslm", "sentence"]
    assert names[6:20] == [  # per seed, the rows in Table 1's order, each tuning before its test decode
        f"{stage}-{key}-seed0" for key in KEYS for stage in ("tune", "decode-newstest2013")
    ]
    seen: set[str] = set()
    for step in steps:  # the single-machine order runs every stage after those it needs
        assert set(step.after) <= seen, step.name
        seen.add(step.name)
    assert len(steps) == len(seen) == 1 + 5 + 2 * 7 * 2 + 2


def test_the_sentence_model_trains_only_for_a_row_that_reranks_with_it(tmp_path: Path) -> None:
    paper = chosen(["rnn", "cslm-rnn", "cslm-rnn-wp"])
    names = [step.name for step in tiny_plan(tmp_path, 1, paper)]
    assert "sentence" not in names and not any("sentence" in name for name in names)
    assert [name for name in names if name.startswith("tune-")] == [
        f"tune-{key}-seed0"
        for key in ("baseline", "rnn", "cslm-rnn", "cslm-rnn-wp")  # the baseline: always
    ]
    # a re-ranking row brings the row it re-ranks (and the baseline)
    some = chosen(["cslm-rnn-wp-sentence"])
    assert [c.key for c in some] == ["baseline", "cslm-rnn-wp", "cslm-rnn-wp-sentence"]
    names = [step.name for step in tiny_plan(tmp_path, 1, some)]
    assert names.count("sentence") == 1
    assert [name for name in names if name.startswith("tune-")] == [f"tune-{c.key}-seed0" for c in some]


def test_the_stage_count_is_the_plans(tmp_path: Path) -> None:
    """`[n/N]`: N counts the data's stages and every stage of the plan."""
    for seeds, configurations in ((1, CONFIGURATIONS), (2, CONFIGURATIONS), (2, chosen(["rnn"]))):
        experiment = chain.Experiment(tiny_options(tmp_path, seeds, configurations))
        assert experiment.stages.total == experiment.data_stages + len(experiment.plan())
    assert experiment.stages.total == 3 + 1 + 4 + 2 * 2 * 2 + 2  # data, system, binarize ... cslm, rows, last two


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
    for row in CONFIGURATIONS:
        if row.reranks is None:  # those re-ranking one: test_a_sentence_row_reranks_the_tuned_config_of_its_row
            experiment.tune(row, 0)
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
        folder = experiment.tune_dir(configuration(key), 0)
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


def test_a_sentence_row_reranks_the_tuned_config_of_its_row(tmp_path, monkeypatch) -> None:
    """`pysmt tune --rerank --features sentence` from the tuned config of the row it re-ranks, same seed; n-best lists
    of the system's rescore-size (tune's default with --rerank), the search settings without the starting weights
    (the row's tuned ones stay); the test decode reads the tuned config and its rescoring weights."""
    experiment, ran = binarized_experiment(tmp_path, monkeypatch)
    experiment.o.search_settings = SearchOverrides(stack_size=50, weights=(("LM0", (2.0,)),))
    reranking = configuration("cslm-rnn-wp-sentence")
    experiment.tune(reranking, 1)
    experiment.decode("nt13", reranking, 1)
    (name, options, inputs, [args]), (decode_name, decode_options, decode_inputs, [decode_args]) = ran
    data, start = tmp_path / "run" / "data", tmp_path / "run" / "tune" / "cslm-rnn-wp" / "seed1"
    out = tmp_path / "run" / "tune" / "cslm-rnn-wp-sentence" / "seed1"
    assert name == "tune-cslm-rnn-wp-sentence-seed1"
    assert args == [
        *("tune", "-c", str(start / "pysmt.toml"), "--src", str(data / "dev.en"), "--ref", str(data / "dev.fr")),
        *("--out", str(out), "--seed", "1", "--rerank", "--max-iterations", "2", "--restarts", "2"),
        *("--optimizer", OPTIMIZER, "--threads", "2"),
        *("--features", "sentence", "--param", f"sentence.model={tmp_path / 'run' / 'sentence'}"),
        *("--stack", "50"),
    ]
    assert options == {
        "features": ["sentence"],
        "reranks": "cslm-rnn-wp",
        "seed": 1,
        "max_iterations": 2,
        "restarts": 2,
        "optimizer": OPTIMIZER,
        "search_settings": {"stack": 50},
    }
    assert inputs["config"] == [start / "pysmt.toml", start / "weights.txt"]
    assert inputs["sentence model"] == tmp_path / "run" / "sentence" and "rnn column" not in inputs
    assert decode_name == "decode-nt13-cslm-rnn-wp-sentence-seed1"
    assert decode_args[:3] == ["decode", "-c", str(out / "pysmt.toml")]
    assert decode_inputs["weights"] == out / "rescoring-weights.txt"  # --rerank writes no weights.txt
    assert decode_options == {"search_settings": {"stack": 50}}
    assert configuration("baseline-sentence").tuned_features == ("sentence",)


def test_the_sentence_model_trains_once_on_the_systems_bitext_within_the_runs_limits(tmp_path, monkeypatch) -> None:
    experiment, ran = binarized_experiment(tmp_path, monkeypatch)
    experiment.train_sentence()
    [(name, options, inputs, [args])] = ran
    system = tmp_path / "run" / "system"
    assert name == "sentence" and options == experiment.neural_options  # as the RNN's and the CSLM's
    assert args == [
        *("sentence", "train", "--system", str(system), "--out", str(tmp_path / "run" / "sentence")),
        *("--max-time", "1.0", "--valid-every", "10", "--max-updates", "20", "--threads", "2"),
    ]
    assert inputs == {
        "--system": [system / "pysmt.toml", system / "corpus" / "train.en", system / "corpus" / "train.fr"]
    }


def written_report(tmp_path: Path, monkeypatch, keys: list[str]) -> tuple[chain.Experiment, str]:
    """The report of a tiny experiment of the rows ``keys``, from an evaluation.json made up (one seed): BLEU 10 on
    dev and 20 on test, every tuned weight 0.1."""
    experiment = chain.Experiment(tiny_options(tmp_path, 1, chosen(keys)))
    data = evaluation({k: [10.0] for k in keys}, {k: [20.0] for k in keys}, [0.5])
    names = {"rnn": "RNN0", "wp": "WP0", "cslm": "CSLM0", "sentence": "Sentence0"}
    data["weights"] = {k: {"0": {"LM0": [0.5], **{names[f]: [0.1] for f in configuration(k).features}}} for k in keys}
    for key in keys:
        data["dev"][key]["0"]["iteration"] = 2
    data["signatures"] = {"bleu": "BLEU|sig", "chrf": "chrf|sig"}
    monkeypatch.setattr(report, "available", lambda: False)  # no figures: this test reads the text
    experiment.run_dir.mkdir(parents=True, exist_ok=True)
    return experiment, report.write_report(experiment, data).read_text(encoding="utf-8")


def test_the_report_says_how_the_rnn_was_trained_and_shows_rnn_wp(tmp_path: Path, monkeypatch) -> None:
    experiment, text = written_report(tmp_path, monkeypatch, KEYS)
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


def test_the_report_shows_the_sentence_rows_and_says_how_they_were_built(tmp_path: Path, monkeypatch) -> None:
    experiment, text = written_report(tmp_path, monkeypatch, KEYS)
    for label in ("Baseline + sentence", "CSLM + RNN + WP + sentence"):
        assert f"| {label} | {OPTIMIZER} | 10.00 | 20.00 | +0.00 | 40.00 | 0.500 | – | – |" in text, label
    assert report.SENTENCE_RERANKING in text and "`pysmt tune --rerank --features sentence`" in text
    assert "The paper has no RNN + WP, Baseline + sentence or CSLM + RNN + WP + sentence row (`–`)." in text
    assert "**Baseline + sentence** (rescoring weights; the search weights are Baseline's)" in text
    assert "**CSLM + RNN + WP + sentence** (rescoring weights; the search weights are CSLM + RNN + WP's)" in text
    assert "- CSLM + RNN + WP + sentence vs CSLM + RNN + WP (the row it re-ranks): +0.00 BLEU in the means." in text
    assert "- Sentence: no validation logged" in text  # the neural models' section: its learning curve
    results = json.loads((experiment.run_dir / "results.json").read_text(encoding="utf-8"))
    assert results["settings"]["configurations"] == KEYS
    assert results["settings"]["sentence_reranking"] == report.SENTENCE_RERANKING
    assert results["configurations"]["baseline-sentence"]["reranks"] == "baseline"
    assert list(results["learning_curves"]) == ["RNN", "CSLM", "Sentence"]
    # the paper's rows alone: not a word of the sentence model
    experiment, text = written_report(tmp_path / "paper", monkeypatch, PAPER_KEYS)
    assert "sentence model" not in text and "+ sentence" not in text and "Sentence" not in text
    assert "The paper has no RNN + WP row (`–`)." in text
    results = json.loads((experiment.run_dir / "results.json").read_text(encoding="utf-8"))
    assert "sentence_reranking" not in results["settings"] and list(results["learning_curves"]) == ["RNN", "CSLM"]


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
