"""``pysmt train`` and ``pysmt lm`` against user mistakes: one-line errors, never tracebacks or stale systems.

Every case runs the real command line on a hand-made, already prepared five-line bitext with its
alignment (``--prepared --alignment``: no tokenizer, no eflomal), so a whole training takes a second or two.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from pysmt.testing import one_line_error, run_pysmt
from tests.helpers import limited_file_size, slow_cases

EN = ["the house", "a small house", "the dog", "a dog runs", "the small dog"]
FR = ["la maison", "une petite maison", "le chien", "un chien court", "le petit chien"]
ALIGNMENT = ["0-0 1-1", "0-0 1-2 2-1", "0-0 1-1", "0-0 1-1 2-2", "0-0 1-2 2-1"]
SYSTEM_FILES = ("phrase-table.gz", "reordering-table.wbe-msd-bidirectional-fe.gz", "lm.bin", "pysmt.toml", "job.json")


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def train(*args: str | Path, **popen: Any) -> subprocess.CompletedProcess:
    return run_pysmt("train", "--prepared", "--processes", "1", *args, **popen)


def lm(*args: str | Path) -> subprocess.CompletedProcess:
    return run_pysmt("lm", *args)


def assert_one_line_error(proc: subprocess.CompletedProcess, *parts: str) -> str:
    """Exit status 1 and one ``Error: ...`` line holding ``parts`` (no traceback), and no success claimed."""
    line = one_line_error(proc, *parts)
    assert "system in" not in proc.stdout and "wrote" not in proc.stdout
    return line


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {name: ((folder / name).read_bytes(), (folder / name).stat().st_mtime_ns) for name in SYSTEM_FILES}


def write_bitext(folder: Path) -> dict[str, Path]:
    """``c.en``/``c.fr`` (and ``c.de``) with ``al``; ``d.*`` one pair longer with ``al-d``; the system
    folder ``sys``."""
    folder.mkdir(parents=True, exist_ok=True)
    write_lines(folder / "c.en", EN)
    write_lines(folder / "c.fr", FR)
    write_lines(folder / "c.de", FR)
    write_lines(folder / "d.en", EN + ["the house"])
    write_lines(folder / "d.fr", FR + ["la maison"])
    return {
        "c": folder / "c",
        "d": folder / "d",
        "al": write_lines(folder / "al", ALIGNMENT),
        "al-d": write_lines(folder / "al-d", ALIGNMENT + ["0-0 1-1"]),
        "out": folder / "sys",
    }


def train_c(files: dict[str, Path]) -> dict[str, Path]:
    proc = train("--corpus", files["c"], "--alignment", files["al"], "--out", files["out"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert all((files["out"] / name).is_file() for name in SYSTEM_FILES)
    return files


@pytest.fixture
def bitext(tmp_path: Path) -> dict[str, Path]:
    return write_bitext(tmp_path)


# -- job records: a rerun resumes only the same job ----------------------------------------------------------


def test_rerun_with_another_corpus_is_refused_and_keeps_the_system(system):
    before = snapshot(system["out"])
    proc = train("--corpus", system["d"], "--alignment", system["al-d"], "--out", system["out"])
    line = assert_one_line_error(proc, "--corpus", "d.en", "c.en", "--force")
    assert "done already" not in proc.stderr and line == proc.stderr.strip()
    assert snapshot(system["out"]) == before


@pytest.mark.parametrize(
    "change, expected",
    [
        (["--tgt-lang", "de"], "tgt_lang: fr -> de"),
        *slow_cases(
            (["--max-phrase-length", "3"], "max_phrase_length: 7 -> 3"),
            (["--symmetrization", "union"], "symmetrization: grow-diag-final-and -> union"),
        ),
    ],
)
def test_rerun_with_other_options_is_refused(system, change, expected):
    before = snapshot(system["out"])
    proc = train("--corpus", system["c"], "--alignment", system["al"], "--out", system["out"], *change)
    assert_one_line_error(proc, expected, "--force")
    assert snapshot(system["out"]) == before


@pytest.mark.slow
def test_rerun_after_the_corpus_changed_is_refused(bitext):
    system = train_c(bitext)
    for lang, line in (("en", "the end"), ("fr", "la fin")):
        with open(system["c"].parent / f"c.{lang}", "a", encoding="utf-8") as out:
            out.write(line + "\n")
    proc = train("--corpus", system["c"], "--alignment", system["al"], "--out", system["out"])
    assert_one_line_error(proc, "--corpus", "c.fr changed since the job started", "--force")


def test_identical_rerun_resumes(system):
    before = snapshot(system["out"])
    record = json.loads((system["out"] / "job.json").read_text())
    proc = train("--corpus", system["c"], "--alignment", system["al"], "--out", system["out"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stderr.count("done already") == 8
    after = snapshot(system["out"])
    assert {k: v for k, v in after.items() if k != "job.json"} == {k: v for k, v in before.items() if k != "job.json"}
    # the folder was copied away from its inputs: the record now says where they are from here, and only that
    again = json.loads((system["out"] / "job.json").read_text())
    for label, prints in again["inputs"].items():
        for old, new in zip(record["inputs"][label], prints):
            assert {**old, "relative": None} == {**new, "relative": None}
    assert {**record, "inputs": None} == {**again, "inputs": None}


@pytest.mark.slow
def test_force_starts_afresh_with_another_corpus(system):
    proc = train("--corpus", system["d"], "--alignment", system["al-d"], "--out", system["out"], "--force")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "done already" not in proc.stderr and proc.stderr.count(": step ") == 16  # "step X ..." and "step X: s"
    assert str(system["d"]) + ".en" in (system["out"] / "job.json").read_text()
    assert len((system["out"] / "corpus" / "train.en").read_text().splitlines()) == 6
    again = train("--corpus", system["d"], "--alignment", system["al-d"], "--out", system["out"])
    assert again.returncode == 0 and again.stderr.count("done already") == 8


@pytest.mark.slow
def test_force_redoes_every_step_of_the_same_job(system):
    proc = train("--corpus", system["c"], "--alignment", system["al"], "--out", system["out"], "--force")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "done already" not in proc.stderr and "step prepare ..." in proc.stderr and "step config ..." in proc.stderr


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_a_corpus_inside_the_output_folder_is_refused_with_or_without_force(system, force):
    """`--corpus OUT/corpus/train --out OUT --force` replaced the raw corpus with its prepared copy (and the
    refusal without --force suggested --force): an input inside the folder a job writes is refused first."""
    before = snapshot(system["out"])
    corpus = system["out"] / "corpus" / "train"
    raw = {lang: (corpus.parent / f"train.{lang}").read_bytes() for lang in ("en", "fr")}
    proc = train("--corpus", corpus, "--alignment", system["al"], "--out", system["out"], *force)
    line = assert_one_line_error(proc, f"--corpus {corpus}.en is inside the output folder {system['out']}")
    assert "--force" not in line
    assert snapshot(system["out"]) == before
    assert {lang: (corpus.parent / f"train.{lang}").read_bytes() for lang in ("en", "fr")} == raw


def test_force_over_another_job_does_not_trust_its_steps(system):
    """--force --first-step lm over another job would mix that job's corpus into this one: refused."""
    before = snapshot(system["out"])
    proc = train(
        "--corpus", system["d"], "--alignment", system["al-d"], "--out", system["out"], "--force", "--first-step", "lm"
    )
    assert_one_line_error(proc, "step lm needs corpus/train.fr", "another job", "--first-step prepare")
    assert snapshot(system["out"]) == before


def test_missing_input_is_an_error_whatever_the_first_step(bitext):
    proc = train("--corpus", bitext["c"].parent / "nope", "--out", bitext["out"], "--first-step", "lm")
    assert_one_line_error(proc, "--corpus", "nope.en", "no such file")
    assert not bitext["out"].exists()


def test_unwritable_out_is_a_one_line_error(bitext):
    proc = train("--corpus", bitext["c"], "--alignment", bitext["al"], "--out", "/proc/pysmt-no-such-folder")
    assert_one_line_error(proc, "--out /proc/pysmt-no-such-folder")


# -- steps whose inputs are missing ---------------------------------------------------------------------------


def test_first_step_config_on_an_empty_out(bitext):
    proc = train("--corpus", bitext["c"], "--alignment", bitext["al"], "--out", bitext["out"], "--first-step", "config")
    line = assert_one_line_error(
        proc, "step config needs lm.bin, which step lm makes (and the steps before it", "--first-step prepare"
    )
    assert proc.stderr.strip() == line  # checked before any work: no step ran
    assert not bitext["out"].exists()


def test_first_step_align_on_an_empty_out(bitext):
    proc = train("--corpus", bitext["c"], "--alignment", bitext["al"], "--out", bitext["out"], "--first-step", "align")
    line = assert_one_line_error(
        proc, "step align needs corpus/train.en, which step prepare makes", "run pysmt train with --first-step prepare"
    )
    assert proc.stderr.strip() == line
    assert not bitext["out"].exists()


@pytest.mark.parametrize("step", ["lex", *slow_cases("extract", "score", "lm")])
def test_other_first_steps_on_an_empty_out(bitext, step):
    proc = train("--corpus", bitext["c"], "--alignment", bitext["al"], "--out", bitext["out"], "--first-step", step)
    assert_one_line_error(proc, f"step {step} needs ", "--first-step")
    assert not bitext["out"].exists()


def test_a_deleted_output_names_the_step_that_makes_it(system):
    (system["out"] / "lm.bin").unlink()
    args = ["--corpus", system["c"], "--alignment", system["al"], "--out", system["out"]]
    proc = train(*args, "--first-step", "config")
    assert_one_line_error(
        proc, "step config needs lm.bin, which step lm makes: run pysmt train with --first-step lm (or earlier)"
    )
    again = train(*args)  # a plain rerun redoes the step whose output is gone
    assert again.returncode == 0, again.stderr[-2000:]
    assert "step lm ..." in again.stderr and (system["out"] / "lm.bin").is_file()


def test_the_whole_range_is_checked_before_any_work(system):
    """lex's output is gone: a run from lm on is fine, but a run from score on fails before score's work."""
    (system["out"] / "lex.f2e").unlink()
    before = (system["out"] / "phrase-table.gz").stat().st_mtime_ns
    proc = train(
        "--corpus", system["c"], "--alignment", system["al"], "--out", system["out"], "--first-step", "score", "--force"
    )
    assert_one_line_error(proc, "step score needs lex.f2e, which step lex makes", "--first-step lex (or earlier)")
    assert "step score ..." not in proc.stderr
    assert (system["out"] / "phrase-table.gz").stat().st_mtime_ns == before


# -- --alignment is checked when given -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad, expected",
    [
        ("0-0 5-1", "source word 5 is out of range"),
        *slow_cases(
            ("0-0 1-7", "target word 7 is out of range"),
            ("0-0 x-y", "'x-y' is not an alignment point"),
            ("0-0 1", "'1' is not an alignment point"),
            ("0-0 -1-1", "is not an alignment point"),
            # a superscript two is a digit to str.isdigit, not to int()
            ("0-0 \u00b2-1", "is not an alignment point"),
        ),
    ],
)
def test_bad_alignment_line_names_the_file_and_line(bitext, bad, expected):
    alignment = write_lines(bitext["al"], ALIGNMENT[:1] + [bad] + ALIGNMENT[2:])
    proc = train("--corpus", bitext["c"], "--alignment", alignment, "--out", bitext["out"])
    assert_one_line_error(proc, f"--alignment {alignment}, line 2: ", expected)
    assert not (bitext["out"] / "steps" / "align.done").exists()
    assert not (bitext["out"] / "model" / "aligned.grow-diag-final-and").exists()


def test_alignment_of_another_length_is_an_error(bitext):
    alignment = write_lines(bitext["al"], ALIGNMENT[:4])
    proc = train("--corpus", bitext["c"], "--alignment", alignment, "--out", bitext["out"])
    assert_one_line_error(proc, f"--alignment {alignment} has 4 lines", "cleaned corpus", "has 5")


def test_missing_alignment_file_is_a_usage_error(bitext):
    proc = train("--corpus", bitext["c"], "--alignment", bitext["c"].parent / "nope", "--out", bitext["out"])
    assert proc.returncode == 2 and "--alignment" in proc.stderr and "Traceback" not in proc.stderr
    assert not bitext["out"].exists()


# -- pysmt lm ----------------------------------------------------------------------------------------------------


def test_lm_unwritable_out_is_one_line(tmp_path):
    text = write_lines(tmp_path / "t.txt", FR)
    proc = lm("--out", "/proc/x", "--text", text)
    line = assert_one_line_error(proc, "--out /proc/x")
    assert proc.stderr.strip() == line


@pytest.mark.parametrize("order", ["0", *slow_cases("1", "7")])
def test_lm_order_out_of_range_is_a_usage_error(tmp_path, order):
    text = write_lines(tmp_path / "t.txt", FR)
    proc = lm("--out", tmp_path / "lm.bin", "--text", text, "--order", order)
    assert proc.returncode == 2 and "--order" in proc.stderr and "Traceback" not in proc.stderr


def test_lm_order_one_is_an_error_not_a_kenlm_trace_in_the_api(tmp_path):
    from pysmt.errors import PysmtError
    from pysmt.training.language_model import build_language_model

    with pytest.raises(PysmtError, match="at least 2"):
        build_language_model([write_lines(tmp_path / "t.txt", FR)], tmp_path / "lm.bin", order=1)


def test_lm_refuses_to_overwrite_its_text(tmp_path):
    text = write_lines(tmp_path / "t.txt", FR)
    proc = lm("--out", text, "--text", text)
    assert_one_line_error(proc, "is also the input --text")
    assert text.read_text(encoding="utf-8").splitlines() == FR


def test_lm_on_empty_text_is_one_line(tmp_path):
    text = tmp_path / "empty.txt"
    text.write_text("\n \n")
    proc = lm("--out", tmp_path / "lm.bin", "--text", text)
    line = assert_one_line_error(proc, "no words")
    assert proc.stderr.strip() == line and not (tmp_path / "lm.bin").exists()


@pytest.mark.slow
def test_failing_lmplz_is_a_one_line_error(tmp_path):
    text = write_lines(tmp_path / "t.txt", ["a <s> b"])  # lmplz refuses its own sentence markers in the text
    proc = lm("--out", tmp_path / "lm.bin", "--text", text)
    assert_one_line_error(proc, "lmplz failed", "<s>")
    assert not (tmp_path / "lm.bin").exists() and [p.name for p in tmp_path.iterdir()] == ["t.txt"]


@pytest.mark.parametrize("record", ["[1]\n", *slow_cases("not json\n")])
def test_a_job_file_that_is_no_record_is_refused(system, record):
    (system["out"] / "job.json").write_text(record)
    proc = train("--corpus", system["c"], "--alignment", system["al"], "--out", system["out"])
    assert_one_line_error(proc, str(system["out"]), "--force")
    assert (system["out"] / "job.json").read_text() == record


def test_a_full_disk_names_the_file_and_how_to_resume(bitext):
    """It said "writing output: 272710 requested and 237568 written": numpy's words for a full disk, no file."""
    proc = train(
        "--corpus", bitext["c"], "--alignment", bitext["al"], "--out", bitext["out"], preexec_fn=limited_file_size(2048)
    )
    line = assert_one_line_error(
        proc,
        "step score: File too large writing ",
        str(bitext["out"]),
        "make room in",
        "run the same command again to resume",
    )
    assert "requested and" not in line and not list(bitext["out"].glob(".*pysmt-tmp*"))
