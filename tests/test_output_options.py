"""Moses' output options on `pysmt decode` (-report-segmentation, -print-alignment-info, -mark-unknown,
-unknown-word-prefix, -drop-unknown), --quiet, and progress bars that never reach a redirected stderr."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from pysmt.decoder import Candidate, Decoder
from pysmt.decoding.line_streams import OutputOptions
from pysmt.testing import run_pysmt, write_toy_system
from tests.helpers import raw_text_system

ROOT = Path(__file__).resolve().parent.parent


def hand_built() -> Candidate:
    """'x q7 y zz' for the source 'a b c d e': phrases a b -> x, c -> q7 (unknown), e -> y, d -> zz (unknown)."""
    return Candidate(
        ["x", "q7", "y", "zz"],
        np.zeros(1),
        0.0,
        [(0, 0), (1, 0), (2, 1), (3, 3), (4, 2)],
        [(0, 2, 0, 1), (2, 3, 1, 2), (4, 5, 2, 3), (3, 4, 3, 4)],
        [1, 3],
    )


def test_each_option_on_a_hand_built_translation() -> None:
    best = hand_built()
    assert OutputOptions(report_segmentation=True).line(best, None) == "x |0-1| q7 |2-2| y |4-4| zz |3-3|"
    assert OutputOptions(print_alignment_info=True).line(best, None) == "x q7 y zz ||| 0-0 1-0 2-1 3-3 4-2"
    marked = OutputOptions(mark_unknown=True).candidate(best)
    assert marked.words == ["x", "UNKq7", "y", "UNKzz"] and marked.alignment == best.alignment
    assert OutputOptions(mark_unknown=True, unknown_word_prefix="<unk>").candidate(best).words[1] == "<unk>q7"
    dropped = OutputOptions(drop_unknown=True).candidate(best)  # zz goes; q7 stays: it has a digit, as in Moses
    assert dropped.words == ["x", "q7", "y"] and dropped.unknown == [1]
    assert dropped.alignment == [(0, 0), (1, 0), (2, 1), (4, 2)]
    everything = OutputOptions(True, True, True, "UNK", True)
    assert everything.line(everything.candidate(best), None) == "x |0-1| UNKq7 |2-2| y |4-4| ||| 0-0 1-0 2-1 4-2"
    first = Candidate(["q", "x"], np.zeros(1), 0.0, [(0, 0), (1, 1)], [(0, 1, 0, 1), (1, 2, 1, 2)], [0])
    shifted = OutputOptions(True, True, False, "UNK", True)  # a dropped first word: the rest move down
    assert shifted.line(shifted.candidate(first), None) == "x |1-1| ||| 1-0"
    assert not OutputOptions() and OutputOptions().line(best, str.upper) == "X Q7 Y ZZ"
    assert OutputOptions(mark_unknown=True).line(marked, str.upper) == "X UNKQ7 Y UNKZZ"  # restored: no marks


@pytest.mark.parametrize("engine", ["compiled", "python"])
def test_the_decoder_knows_its_unknown_words(tiny_system, engine) -> None:
    decoder = Decoder.from_paths(tiny_system, engine=engine)  # type: ignore[arg-type]
    best = decoder.translate("q a b w")
    assert best.hypotheses[0].words == ["q", "x", "y", "w"] and best.hypotheses[0].unknown == [0, 3]


def decode(system: Path, text: str, *options: str | Path) -> tuple[str, str]:
    proc = run_pysmt("decode", "-c", system, *options, input=text)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, proc.stderr


def test_each_option_on_the_command_line(tiny_system, tmp_path) -> None:
    text = "a b c q\nq7 c\nq c a\n"
    assert decode(tiny_system, text)[0] == "x y z q\nq7 z\nq z x\n"
    assert decode(tiny_system, text, "--report-segmentation")[0] == (
        "x y |0-1| z |2-2| q |3-3|\nq7 |0-0| z |1-1|\nq |0-0| z |1-1| x |2-2|\n"
    )
    assert decode(tiny_system, text, "--print-alignment-info")[0] == (
        "x y z q ||| 0-0 1-1 2-2 3-3\nq7 z ||| 0-0 1-1\nq z x ||| 0-0 1-1 2-2\n"
    )
    assert decode(tiny_system, text, "--mark-unknown")[0] == "x y z UNKq\nUNKq7 z\nUNKq z x\n"
    assert decode(tiny_system, text, "--mark-unknown", "--unknown-word-prefix", "OOV_")[0].startswith("x y z OOV_q\n")
    nbest, alignment = tmp_path / "nbest", tmp_path / "alignment"
    out, _ = decode(
        tiny_system,
        text,
        "--drop-unknown",
        "--report-segmentation",
        "--print-alignment-info",
        "--nbest",
        nbest,
        "--nbest-size",
        "1",
        "--alignment",
        alignment,
    )
    assert out == "x y |0-1| z |2-2| ||| 0-0 1-1 2-2\nq7 |0-0| z |1-1| ||| 0-0 1-1\nz |1-1| x |2-2| ||| 1-0 2-1\n"
    assert [line.split(" ||| ")[1] for line in nbest.read_text().splitlines()] == ["x y z", "q7 z", "z x"]
    assert alignment.read_text() == "0-0 1-1 2-2\n0-0 1-1\n1-0 2-1\n"


@pytest.mark.parametrize("engine", ["auto", "python"])
def test_word_alignments_are_in_moses_order(tmp_path, engine) -> None:
    """Moses' Hypothesis::OutputAlignment: phrase by phrase in target order, each phrase's links as its AlignmentInfo
    (a set) holds them, by source position; -sort-word-alignment 1 sorts them by target position. "b c a" forced to
    "x z y" (a -> x first, then b c -> z y stored as 1-0 0-1): Moses' 2-0 0-2 1-1, sorted by target 2-0 1-1 0-2
    (pysmt once wrote 0-2 1-1 2-0, sorted by source, neither of Moses' orders)."""
    phrases = "a ||| x ||| 0.9 0.9 ||| 0-0\nb c ||| z y ||| 0.9 0.9 ||| 1-0 0-1\n"
    system = write_toy_system(tmp_path / "system", phrases=phrases, reordering=None)
    (tmp_path / "forced.txt").write_text("x z y\n")
    forced = ["--constraint", tmp_path / "forced.txt"]
    decoder = Decoder.from_paths(
        system, ["constrained-decoding"], [f"ConstrainedDecoding0.path={forced[1]}"], engine=engine
    )
    assert decoder.translate("b c a").hypotheses[0].alignment == [(2, 0), (0, 2), (1, 1)]
    for sort, expected in (
        ([], "2-0 0-2 1-1"),
        (["--sort-word-alignment"], "2-0 1-1 0-2"),
        (["-sort-word-alignment", "1"], "2-0 1-1 0-2"),
    ):
        args = [
            "decode",
            "-c",
            system,
            "-q",
            *forced,
            "--print-alignment-info",
            "--alignment",
            tmp_path / "al.txt",
            *sort,
        ]
        proc = run_pysmt(*args, input="b c a\n")
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"x z y ||| {expected}\n", "")
        assert (tmp_path / "al.txt").read_text() == expected + "\n"


@pytest.mark.slow  # a whole tune, train or several decodes: seconds (the fast tier stays under 2 minutes)
def test_raw_text_systems_keep_detokenizing_unknown_words_but_marks_count_tokens(tmp_path) -> None:
    toml = raw_text_system(tmp_path / "raw")
    assert decode(toml, "a, b qq.\n")[0] == "x, y qq.\n"
    assert decode(toml, "a, b qq.\n", "--mark-unknown")[0] == "x, y UNKqq.\n"
    assert decode(toml, "a, b qq.\n", "--drop-unknown")[0] == "x, y.\n"
    assert decode(toml, "a, b qq.\n", "--report-segmentation")[0] == "x , |0-1| y |2-2| qq |3-3| . |4-4|\n"
    assert decode(toml, "a, b qq.\n", "--print-alignment-info")[0] == "x , y qq . ||| 0-0 1-1 2-2 3-3 4-4\n"


def test_quiet_leaves_stderr_empty_but_for_errors(tiny_system, tmp_path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("a b c\n")
    out, err = decode(tiny_system, "", "-i", source)
    assert out == "x y z\n" and "Reading" in err  # KenLM's loading messages, without --quiet
    assert decode(tiny_system, "", "-i", source, "--quiet") == ("x y z\n", "")
    failed = run_pysmt("decode", "-c", tmp_path / "missing.ini", "--quiet")
    assert failed.returncode != 0 and "missing.ini" in failed.stderr


def test_no_carriage_returns_in_a_redirected_stderr(tiny_system, tmp_path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("a b c\nc b a\n" * 50)
    runs = [
        run_pysmt("decode", "-c", tiny_system, "-i", source),
        run_pysmt("filter", "-c", tiny_system, "-i", source, "-o", tmp_path / "filtered"),
        run_pysmt("binarize", "-c", tiny_system, "-o", tmp_path / "bin"),
    ]
    for proc in runs:
        assert proc.returncode == 0, proc.stderr
        assert "\r" not in proc.stderr, proc.args


def test_every_progress_bar_goes_through_progress_bar() -> None:
    """A bar made with tqdm itself would reach a redirected log as carriage-return updates."""
    direct = re.compile(r"\btqdm\(")
    found = [
        str(path.relative_to(ROOT))
        for folder in ("pysmt", "tuning", "plugins")
        for path in (ROOT / folder).rglob("*.py")
        if path.name != "progress.py" and direct.search(path.read_text(encoding="utf-8"))
    ]
    assert found == []
