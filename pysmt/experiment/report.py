"""``RUN_DIR/report.md`` and ``RUN_DIR/results.json``: Table 1 beside the paper's, and everything behind it.

Written afresh at the end of every run (it costs a second), from ``evaluation.json``, the stage
records, the neural models' ``log.tsv`` and the analyses' Markdown, so a resumed run's report is
complete. Mean ± sd over optimizer seeds uses the sample standard deviation (Clark et al. 2011).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pysmt.evaluate import mean_sd
from pysmt.experiment.plots import bleu_chart, learning_curves
from pysmt.experiment.settings import CONFIGURATIONS, RNN_MODE, Configuration
from pysmt.experiment.stages import StageResult, duration
from pysmt.files.figures import MISSING, available
from pysmt.files.textio import atomic_writer

if TYPE_CHECKING:
    from pysmt.experiment.chain import Experiment

DATA_STATEMENT = (
    "The paper trained on WMT'14 English-French: a bitext of 348M words selected from 850M, and "
    "418M words of language-model text selected from over 2G; it tuned on newstest2012+2013 and "
    "tested on newstest2014. Ours is the news preset of `pysmt train`: 204,633 pairs, mostly short "
    "conversational Tatoeba sentences (163,563) with the WMT news test sets of 2008-2011 and Multi30k "
    "captions, and the LM (n-gram and CSLM) is trained on the bitext's French side only. We tune on "
    "newstest2012 and test on newstest2013 unless `--test` says otherwise. Absolute BLEU is therefore "
    "far below the paper's; what can be compared is whether the neural features move it, and by how much."
)


def rnn_training(tests: Sequence[str]) -> str:
    """How the RNN was trained: transductively, on the pairs the dev and test sources can use (never a reference)."""
    return (
        "The RNN was trained transductively: on the phrase pairs of the system's table that the decoder can use for "
        f"the source sides of the dev set and of {', '.join(tests)} (what `pysmt filter` keeps for them; "
        "`pysmt rnn train --pairs-for`), once for every configuration and seed; no reference was read."
    )


#: How the RNN enters the model, as the paper's: its scores are the phrase table's extra column.
RNN_COLUMN = (
    "The RNN's score is an extra phrase-table column, as in the paper: `pysmt rnn score --pairs-for` stored it "
    "with the binarized phrase table for those same pairs (the only ones the dev and test sentences look up), and "
    f"every configuration with the RNN was tuned and decoded with `--param rnn.mode={RNN_MODE}`, so that the table "
    "limit ranked each phrase's translations by it beside the table's own scores."
)


#: How the rows re-ranked by the sentence model were built (the report says so when it has one).
SENTENCE_RERANKING = (
    "The sentence model (an attention encoder-decoder over subwords, `pysmt sentence train --system`) was trained "
    "once per run on the system's bitext, within the same limits as the other networks. A row with it (`+ sentence`) "
    "starts from the tuned config of the row it re-ranks, of the same seed: `pysmt tune --rerank --features "
    "sentence` decoded the dev set once with that config into n-best lists of `[search] rescore-size` entries (as "
    "many as the translations the decoder re-ranks) and tuned every feature's rescoring weights on them (the search "
    "weights stay that row's); its test decodes re-rank each line's translations after the search. Its "
    "dev BLEU is the tuner's BLEU of the re-ranked dev lists "
    "(sacrebleu's, from per-candidate statistics); its tuned weights below are rescoring weights."
)


def rows(evaluation: dict[str, Any]) -> list[Configuration]:
    """The rows an evaluation has (the run's ``--configurations``), in Table 1's order."""
    return [c for c in CONFIGURATIONS if c.key in evaluation["dev"]]


def format_mean_sd(values: Sequence[float]) -> str:
    """``31.20 ± 0.15`` over seeds; one seed gives the value alone."""
    mean, sd = mean_sd(values)
    return f"{mean:.2f}" if math.isnan(sd) else f"{mean:.2f} ± {sd:.2f}"


def format_p(values: Sequence[float]) -> str:
    """The per-seed p-values, ``0.004 / 0.120`` (one per seed, in seed order)."""
    return " / ".join(f"{p:.3f}" for p in values)


def per_seed(runs: dict[str, dict[str, Any]], key: str) -> list[float]:
    return [runs[seed][key] for seed in sorted(runs, key=int)]


def spread(name: str, values: list[float]) -> dict[str, Any]:
    """``{name: values, name_mean: m, name_sd: sd}``; sd is None (JSON null) for one seed."""
    mean, sd = mean_sd(values)
    return {name: values, f"{name}_mean": mean, f"{name}_sd": None if math.isnan(sd) else sd}


def summarize(evaluation: dict[str, Any]) -> dict[str, Any]:
    """Mean, sd and per-seed values per configuration and set (the machine-readable Table 1)."""
    summary: dict[str, Any] = {}
    for c in rows(evaluation):
        row: dict[str, Any] = {
            "label": c.label,
            "features": list(c.features),
            "reranks": c.reranks,
            "paper": {"dev": c.paper_dev, "test": c.paper_test},
            "dev": spread("bleu", per_seed(evaluation["dev"][c.key], "bleu")),
            "tests": {},
        }
        for test, configurations in evaluation["tests"].items():
            runs = configurations[c.key]
            row["tests"][test] = {
                **spread("bleu", per_seed(runs, "bleu")),
                **spread("chrf", per_seed(runs, "chrf")),
                "p_bleu": per_seed(runs, "p_bleu") if c.features else None,
                "p_chrf": per_seed(runs, "p_chrf") if c.features else None,
            }
        summary[c.key] = row
    return summary


def paper_bleu(value: float | None) -> str:
    """The paper's BLEU for a row, or ``–`` for a row the paper does not have."""
    return "–" if value is None else f"{value:.2f}"


def table1(summary: dict[str, Any], test: str, optimizer: str) -> str:
    """Table 1 for one test set: ours (mean ± sd, Δ, p per seed, the ``optimizer`` that tuned the row) beside the
    paper's dev / test BLEU (tuned by MERT; ``–`` where the paper has no such row)."""
    base = summary["baseline"]["tests"][test]["bleu_mean"]
    lines = [
        (
            "| Configuration | tuned by | dev BLEU | test BLEU | Δ test | test chrF | p (BLEU) vs baseline, per seed "
            "| paper dev | paper test |"
        ),
        "|---|---|---:|---:|---:|---:|---|---:|---:|",
    ]
    for row in summary.values():
        t = row["tests"][test]
        delta = "" if t["p_bleu"] is None else f"{t['bleu_mean'] - base:+.2f}"
        p = "" if t["p_bleu"] is None else format_p(t["p_bleu"])
        lines.append(
            f"| {row['label']} | {optimizer} | {format_mean_sd(row['dev']['bleu'])} | {format_mean_sd(t['bleu'])} | "
            f"{delta} | {format_mean_sd(t['chrf'])} | {p} | {paper_bleu(row['paper']['dev'])} | "
            f"{paper_bleu(row['paper']['test'])} |"
        )
    return "\n".join(lines)


def tuning_caveats(evaluation: dict[str, Any]) -> dict[str, list[str]]:
    """Per configuration, what its tuning did not do, seed by seed: keep weights other than the start's
    (the first iteration decoded best) or give an added feature a weight (all its weights 0). A row
    with a caveat measures the untuned start, not the configuration."""
    baseline = set(next(iter(evaluation["weights"]["baseline"].values())))
    caveats: dict[str, list[str]] = {}
    for c in rows(evaluation):
        notes = []
        for seed, run in evaluation["dev"][c.key].items():
            if run["iteration"] == 1:
                how = "decoded" if c.reranks is None else "re-ranked"
                notes.append(f"seed {seed}: tuning kept the starting weights (iteration 1 {how} best)")
            zero = [
                name for name, w in evaluation["weights"][c.key][seed].items() if name not in baseline and not any(w)
            ]
            if zero:
                notes.append(f"seed {seed}: tuned weight 0 for {', '.join(zero)} (the feature was not used)")
        caveats[c.key] = notes
    return caveats


def claims(summary: dict[str, Any], test: str, caveats: dict[str, list[str]]) -> str:
    """The paper's claims, checked on our numbers in plain words; never claimed for rows tuning did not produce."""
    means = {key: row["tests"][test]["bleu_mean"] for key, row in summary.items()}
    lines = []
    for key, row in list(summary.items())[1:]:
        t = row["tests"][test]
        significant = all(p < 0.05 for p in t["p_bleu"])
        untuned = " Not a result of tuning: " + "; ".join(caveats[key]) + "." if caveats[key] else ""
        lines.append(
            f"- {row['label']} vs Baseline: {means[key] - means['baseline']:+.2f} BLEU "
            f"({'p < 0.05 in every seed' if significant else 'not p < 0.05 in every seed'}).{untuned}"
        )
    if "cslm-rnn" in means and "rnn" in means:
        more = round(means["cslm-rnn"] - means["rnn"], 2)  # judged on the figures shown
        verdict = (
            "not judged: tuning did not produce these rows (see above)"
            if caveats["cslm-rnn"] or caveats["rnn"]
            else f"{'reproduced' if more > 0 else 'not reproduced'} in the means"
        )
        lines.append(f"- CSLM + RNN vs RNN alone: {more:+.2f} BLEU (the paper: +0.77 on its test set): {verdict}.")
    for key, row in summary.items():  # the re-ranking's own gain, where the row it re-ranks is not the baseline's
        start = row["reranks"]
        if start not in (None, "baseline"):
            untuned = " Not a result of tuning (see above)." if caveats[key] else ""
            lines.append(
                f"- {row['label']} vs {summary[start]['label']} (the row it re-ranks): "
                f"{means[key] - means[start]:+.2f} BLEU in the means.{untuned}"
            )
    return "\n".join(lines)


def caveat_lines(evaluation: dict[str, Any]) -> list[str]:
    """The tuning caveats as lines for the command line, one per configuration and seed."""
    labels = {c.key: c.label for c in CONFIGURATIONS}
    return [f"{labels[key]}, {note}" for key, notes in tuning_caveats(evaluation).items() for note in notes]


def weights_section(weights: dict[str, dict[str, dict[str, list[float]]]]) -> str:
    parts = []
    for c in (c for c in CONFIGURATIONS if c.key in weights):
        seeds = sorted(weights[c.key], key=int)
        names = list(weights[c.key][seeds[0]])
        start = c.start
        rescoring = "" if start is None else f" (rescoring weights; the search weights are {start.label}'s)"
        lines = [
            f"**{c.label}**{rescoring}",
            "",
            "| feature | " + " | ".join(f"seed {s}" for s in seeds) + " |",
            "|---|" + "---|" * len(seeds),
        ]
        for name in names:
            cells = [" ".join(f"{w:.4f}" for w in weights[c.key][s][name]) for s in seeds]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def stages_table(stages: Sequence[StageResult]) -> str:
    lines = ["| stage | wall time | peak memory (MB, largest child process) |", "|---|---:|---:|"]
    for stage in stages:
        memory = "in process" if stage.peak_mb is None else f"{stage.peak_mb:,.0f}"
        lines.append(f"| {stage.name} | {duration(stage.seconds)} | {memory} |")
    lines.append(f"| **total** | **{duration(sum(s.seconds for s in stages))}** | |")
    return "\n".join(lines)


def read_curve(log_tsv: Path) -> list[tuple[int, float]]:
    """(update, validation perplexity) from a plugin's log.tsv (columns: update, training loss, perplexity, ...)."""
    if not log_tsv.is_file():
        return []
    rows = [line.split("\t") for line in log_tsv.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(int(row[0]), float(row[2])) for row in rows if row[0].isdigit()]


def curve_line(name: str, points: list[tuple[int, float]]) -> str:
    if not points:
        return f"- {name}: no validation logged"
    return (
        f"- {name}: {len(points)} validations, the last at update {points[-1][0]:,}: perplexity "
        f"{points[-1][1]:.1f} (best {min(p for _, p in points):.1f}); log: `{name.lower()}/log.tsv`"
    )


def analyses_section(analysis: Path) -> str:
    """Table 2 and 3 inline (the plugin's Markdown, headings demoted), Fig. 3-5 as links."""
    parts = []
    for name in ("top-phrases", "samples", "scatter", "maps"):
        path = analysis / f"{name}.md"
        if path.is_file():
            text = path.read_text(encoding="utf-8").replace("](", "](analysis/")
            parts.append("\n".join("##" + line if line.startswith("#") else line for line in text.splitlines()))
        else:
            parts.append(f"(`{name}`: not run)")
    figures = sorted(p.name for p in analysis.glob("*.png")) if analysis.is_dir() else []
    parts.append("Figures: " + ", ".join(f"[{name}](analysis/{name})" for name in figures) if figures else "")
    return "\n\n".join(part for part in parts if part)


def write_report(experiment: Experiment, evaluation: dict[str, Any]) -> Path:
    """Write results.json, the PNGs and report.md into the run folder; return report.md's path."""
    o, run_dir = experiment.o, experiment.run_dir
    summary = summarize(evaluation)
    curves = {"RNN": read_curve(experiment.rnn / "log.tsv"), "CSLM": read_curve(experiment.cslm / "log.tsv")}
    reranking = any(row["reranks"] for row in summary.values())  # rows with the sentence model
    if reranking:
        curves["Sentence"] = read_curve(experiment.sentence / "log.tsv")
    settings = {
        "scale": o.scale.name,
        "seeds": o.seeds,
        "dev_size": o.dev_size,
        "test_size": o.scale.test_size,
        "budget_minutes": o.budget,
        "system": str(experiment.system),
        "data": str(o.data),
        "tests": {name: [str(t.source), str(t.target)] for name, t in experiment.tests.items()},
        "mert": {
            "nbest_size": o.scale.nbest_size,
            "max_iterations": o.scale.max_iterations,
            "restarts": o.scale.restarts,
        },
        "threads": o.threads,
        "cluster": o.cluster,
        "rnn_training": rnn_training(list(experiment.tests)),
        "rnn_mode": RNN_MODE,
        **({"sentence_reranking": SENTENCE_RERANKING} if reranking else {}),
        "configurations": list(summary),
        "search_settings": o.search_settings.recorded(),
    }
    results = {
        "settings": settings,
        "configurations": summary,
        "runs": evaluation,
        "learning_curves": curves,
        "stages": [stage.to_dict() for stage in experiment.stages.done],
    }
    with atomic_writer(run_dir / "results.json") as out:
        json.dump(results, out, indent=1)
        out.write("\n")
    figures = draw(summary, curves, run_dir)
    sig = evaluation["signatures"]
    sections = [
        f"# Cho et al. (2014), Table 1, with pysmt (`--scale {o.scale.name}`)",
        (
            f"Settings: every row tuned by `pysmt tune --optimizer {o.optimizer}`, {o.seeds} optimizer seed(s) per "
            f"configuration; dev: {lines(o.dev_size)} of newstest2012; "
            f"test: {lines(o.scale.test_size)} of each test set; tuning on {o.scale.nbest_size}-best lists, at most "
            f"{o.scale.max_iterations} iterations, {o.scale.restarts} restarts (MERT's); neural models trained for at "
            f"most {o.budget:g} min each (or until early stopping); system: `{experiment.system}`. "
            + rnn_training(list(experiment.tests))
            + " "
            + RNN_COLUMN
            + " The CSLM and WP score inside the search (`--features`)."
            + (" " + SENTENCE_RERANKING if reranking else "")
            + not_in_paper(summary)
        ),
    ]
    if o.scale.name != "full":
        sections.insert(
            1,
            f"**A plumbing check, not a result.** At `--scale {o.scale.name}` the data, the networks "
            "and the tuning are far too small for these numbers to say anything about the paper's "
            "claims: they show that every stage runs end to end. Use `--scale full` for results.",
        )
    caveats = tuning_caveats(evaluation)
    for test in evaluation["tests"]:
        sections += [f"## Table 1 on {test}", table1(summary, test, o.optimizer), claims(summary, test, caveats)]
    sections += [
        (
            f"BLEU: `{sig['bleu']}`; chrF: `{sig['chrf']}`; paired bootstrap resampling (sacrebleu, each "
            f"configuration against the baseline of the same seed; identical outputs get p = 1): "
            f"`{sig.get('paired_bleu', '-')}`. Dev BLEU is that of the tuning iteration whose weights the tuning kept. "
            "Paper: dev = newstest2012+2013, test = newstest2014."
        ),
        "## How our data differs from the paper's",
        DATA_STATEMENT,
        "## Figures",
        figures,
        "## Neural models",
        "\n".join(curve_line(name, points) for name, points in curves.items()),
        "## Analyses (Table 2, Table 3, Fig. 3-5)",
        analyses_section(run_dir / "analysis"),
        "## Tuned weights",
        weights_section(evaluation["weights"]),
        "## Stages: time and peak memory",
        stages_table(experiment.stages.done),
        (
            "A stage's time adds up all its runs (a stage resumed after an interruption counts the time before it); "
            "its peak memory is that of the run that finished it."
            + (
                " On the cluster, stages ran side by side and a stage's time includes its wait for a node's CPUs: "
                "the total adds them up, it is not the run's wall time."
                if o.cluster
                else ""
            )
        ),
    ]
    path = run_dir / "report.md"
    with atomic_writer(path) as out:
        out.write("\n\n".join(sections) + "\n")
    return path


def not_in_paper(summary: dict[str, Any]) -> str:
    """The sentence that says which rows the paper does not have (its columns show ``–``), if any."""
    labels = [row["label"] for row in summary.values() if row["paper"]["test"] is None]
    if not labels:
        return ""
    named = labels[0] if len(labels) == 1 else f"{', '.join(labels[:-1])} or {labels[-1]}"
    return f" The paper has no {named} row (`–`)."


def lines(size: int | None) -> str:
    return "all lines" if size is None else f"the first {size:,} lines"


def draw(summary: dict[str, Any], curves: dict[str, list[tuple[int, float]]], run_dir: Path) -> str:
    """The PNGs, and the Markdown that shows them (or says why there are none)."""
    if not available():
        return MISSING + "."
    learning_curves(curves, run_dir / "learning-curves.png")
    labels = [row["label"] for row in summary.values()]
    series = {"dev": [(row["dev"]["bleu_mean"], row["dev"]["bleu_sd"]) for row in summary.values()]}
    for test in summary["baseline"]["tests"]:
        series[test] = [(row["tests"][test]["bleu_mean"], row["tests"][test]["bleu_sd"]) for row in summary.values()]
    bleu_chart(labels, series, run_dir / "bleu.png")
    return "![BLEU per configuration](bleu.png)\n\n![Learning curves](learning-curves.png)"
