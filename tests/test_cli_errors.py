"""The command line's own checks (pysmt/cli.py): counts below one are usage errors (status 2) that
leave no run folder behind, and a full disk under stdout is one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pysmt.testing import one_line_error, run_pysmt
from tests.helpers import slow_cases, tune_command


@pytest.mark.parametrize(
    "option, value",
    [("--nbest-size", "0"), *slow_cases(("--nbest-size", "-1"), ("--threads", "0"), ("--threads", "-1"))],
)
def test_decode_rejects_counts_below_one(tiny_system, source, option, value):
    one_line_error(run_pysmt("decode", "-c", tiny_system, "-i", source, option, value), option, status=2)


@pytest.mark.parametrize(
    "option, value",
    [("--restarts", "-1"), *slow_cases(("--max-iterations", "0"), ("--nbest-size", "0"), ("--threads", "0"))],
)
def test_tune_rejects_bad_counts_without_leaving_a_run_folder(tiny_system, dev, tmp_path, option, value):
    out = tmp_path / "tune"
    one_line_error(run_pysmt(*tune_command(tiny_system, *dev, out), option, value), option, status=2)
    assert not out.exists()


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_stdout_on_a_full_disk_is_one_line(tiny_system, source):
    with open("/dev/full", "wb") as full:
        proc = run_pysmt("decode", "-c", tiny_system, "-i", source, stdout=full)
    one_line_error(proc, "No space left on device")
    assert "Exception ignored" not in proc.stderr  # nothing more at Python's exit


@pytest.mark.parametrize(
    "options, message",
    [
        (
            ["--mbr", "--consensus-decoding"],
            "--mbr and --consensus-decoding: give one (each chooses the translation from the n-best list its own way)",
        ),
        (["--unknown-word-prefix", "OOV_"], "--unknown-word-prefix applies to --mark-unknown: give that too"),
        (["--nbest-size", "5"], "--nbest-size applies to --nbest: give that too"),
        (["--mbr", "--distinct"], "--distinct applies to --nbest: give that too"),
    ],
)
def test_decode_refuses_options_that_contradict_or_go_unused(tiny_system, source, options, message):
    """All used to be accepted: --mbr with --consensus-decoding gave consensus output, the others were dropped
    without a word (a prefix without --mark-unknown, an n-best size or --distinct without --nbest)."""
    line = one_line_error(run_pysmt("decode", "-c", tiny_system, "-i", source, *options), status=2)
    assert line == f"Error: {message}"
