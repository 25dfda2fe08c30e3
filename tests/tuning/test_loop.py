"""``pysmt tune``'s loop (tuning/loop.py): a tuned config keeps every path of a moved system, a run folder
with a damaged times file resumes, and tune says when tuning did not move the weights.

The MERT library's tests, and more of ``pysmt tune``'s, are in test_tuning.py.
"""

from __future__ import annotations

import pytest

from pysmt.testing import one_line_error, run_pysmt
from tests.helpers import raw_text_system, tune_command


@pytest.mark.slow
def test_tuned_config_of_a_moved_system_keeps_every_path(tmp_path, dev):
    toml = raw_text_system(tmp_path / "system")
    out = tmp_path / "elsewhere" / "tune"
    assert run_pysmt(*tune_command(toml, *dev, out)).returncode == 0
    tuned = out / "pysmt.toml"
    source = tmp_path / "raw.txt"
    source.write_text("a, b.\nb.\n")
    original = run_pysmt("decode", "-c", toml, "-i", source, "--weights", out / "weights.txt")
    assert original.returncode == 0 and run_pysmt("decode", "-c", tuned, "-i", source).stdout == original.stdout


@pytest.mark.slow  # two tune runs
def test_a_tune_folder_with_damaged_step_markers_resumes(tiny_system, dev, tmp_path):
    src, ref = dev
    out = tmp_path / "tune"
    assert run_pysmt(*tune_command(tiny_system, src, ref, out)).returncode == 0
    for step in ("decode", "optimize"):  # cut off (by hand: pysmt writes them atomically)
        (out / "run1" / f"{step}.done").write_text('{"secon')
    again = run_pysmt(*tune_command(tiny_system, src, ref, out))
    assert again.returncode == 0 and "Traceback" not in again.stderr and "decode dev" not in again.stderr
    row = (out / "summary.tsv").read_text().splitlines()[1].split("\t")
    assert row[5] == "nan" and row[6] == "nan"  # the steps' times are unknown, said so


@pytest.mark.slow
def test_tune_says_when_tuning_did_not_move_the_weights(tiny_system, dev, tmp_path):
    """The warning comes exactly when the start decoded best, or an added feature's tuned weight is 0."""
    src, ref = dev
    out = tmp_path / "tune"
    proc = run_pysmt(*tune_command(tiny_system, src, ref, out, "--max-iterations", "3", "--features", "repeated-word"))
    assert proc.returncode == 0, proc.stderr
    rows = [line.split("\t") for line in (out / "summary.tsv").read_text().splitlines()[1:]]
    best = max(rows, key=lambda row: float(row[1]))[0]
    said = proc.stderr
    assert ("warning: the starting weights decoded best" in said) == (best == "1" and len(rows) > 1)
    weight = [line for line in (out / "weights.txt").read_text().splitlines() if line.startswith("RepeatedWord0=")]
    assert ("warning: tuned weight 0 for RepeatedWord0" in said) == (float(weight[0].split()[1]) == 0)


@pytest.mark.slow  # a whole tune, train or several decodes: seconds (the fast tier stays under 2 minutes)
def test_a_reference_inside_the_output_folder_is_refused_and_survives(tiny_system, dev, tmp_path):
    """`--ref OUT/run1/output.txt --out OUT --force` replaced the reference with iteration 1's output (BLEU
    100): every input of a job is checked against the folder it writes, with --force too."""
    src, ref = dev
    out = tmp_path / "tune"
    assert run_pysmt(*tune_command(tiny_system, src, ref, out)).returncode == 0
    inside = out / "run1" / "output.txt"
    before = inside.read_bytes()
    for force in ([], ["--force"]):
        proc = run_pysmt(*tune_command(tiny_system, src, inside, out, *force))
        one_line_error(proc, f"--ref {inside} is inside the output folder {out}, which this tune job writes")
        assert inside.read_bytes() == before
