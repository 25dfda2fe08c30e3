"""Moses' single-dash spellings of decode's options (docs/tutorials/moses-users.md): a Moses command line decodes as the
pysmt one does; a Moses option given wrong, or one pysmt does not offer, is one usage line naming it."""

from __future__ import annotations

import os

import pytest

from pysmt.moses_arguments import moses_arguments
from pysmt.testing import one_line_error, run_pysmt

TEXT = "a b c\nc b a\n"


def test_a_moses_command_line_decodes_as_its_pysmt_spelling(tiny_system, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text(TEXT)
    weights = "WordPenalty0= -0.5"
    spellings = {
        "moses": [
            "-config", tiny_system, "-input-file", source, "-threads", "2", "-stack", "10", "-distortion-limit", "3",
            "-weight-overwrite", weights, "-xml-input", "exclusive", "-search-algorithm", "1", "-v", "0", "-t",
            "-print-alignment-info", "-mark-unknown", "-unknown-word-prefix", "-t", "-ttable-limit", "5",
            "-alignment-output-file", tmp_path / "moses.align",
            "-n-best-list", tmp_path / "moses.nbest", "5", "distinct",
        ],
        "pysmt": [
            "--config", tiny_system, "--input", source, "--threads", "2", "--stack", "10", "--distortion-limit", "3",
            "--weight-overwrite", weights, "--xml-input", "exclusive", "--search", "cube", "--quiet",
            "--report-segmentation", "--print-alignment-info", "--mark-unknown", "--unknown-word-prefix", "-t",
            "--table-limit", "5", "--alignment", tmp_path / "pysmt.align", "--nbest", tmp_path / "pysmt.nbest",
            "--nbest-size", "5", "--distinct",
        ],
    }  # fmt: skip
    outputs = {}
    for name, args in spellings.items():
        proc = run_pysmt("decode", *args)
        assert (proc.returncode, proc.stderr) == (0, ""), proc.stderr
        outputs[name] = (
            proc.stdout,
            (tmp_path / f"{name}.nbest").read_text(),
            (tmp_path / f"{name}.align").read_text(),
        )
    assert outputs["moses"] == outputs["pysmt"]
    assert outputs["moses"][0].startswith("x y |0-1| z |2-2| ||| ")
    assert len(outputs["moses"][1].splitlines()) == 10


def test_moses_short_spellings_and_a_search_algorithm(tiny_system):
    moses = run_pysmt("decode", "-f", tiny_system, "-s", "5", "-b", "0.1", "-search-algorithm", "0", input=TEXT)
    pysmt = run_pysmt("decode", "-c", tiny_system, "--stack", "5", "--beam-threshold", "0.1", "-q", input=TEXT)
    assert (moses.returncode, moses.stdout) == (0, pysmt.stdout) == (0, "x y z\nz y x\n")


#: What a Moses option pysmt does not read is told.
NOT_OFFERED = "pysmt decode does not offer it (docs/tutorials/moses-users.md: the Moses options it reads)"
#: What a Moses n-best list option given wrong is told.
NBEST = "Moses' -n-best-list takes FILE N [distinct] (pysmt: --nbest FILE --nbest-size N)"


@pytest.mark.parametrize(
    "args, message",
    [
        (["-n-best-list", "out.txt"], NBEST),
        (["-n-best-list", "out.txt", "-threads", "2"], NBEST),
        (["-lmbr"], "Moses' -lmbr: lattice MBR is not offered: give --mbr or --consensus-decoding"),
        (
            ["-search-algorithm", "3"],
            "Moses' -search-algorithm 3: pysmt offers 0 (--search normal) and 1 (--search cube)",
        ),
        (["-verbose"], "Moses' -verbose takes a level (0: pysmt's --quiet)"),
        (["-output-search-graph", "graph.txt"], f"Moses' -output-search-graph: {NOT_OFFERED}"),
        (["-context-string", "x"], f"Moses' -context-string: {NOT_OFFERED}"),  # not -c ontext-string
        (
            ["-sort-word-alignment", "2"],
            "Moses' -sort-word-alignment takes 0 (Moses' order) or 1 (--sort-word-alignment)",
        ),
    ],
)
def test_a_moses_option_given_wrong_is_a_usage_error_naming_it(tiny_system, args, message):
    proc = run_pysmt("decode", "-c", tiny_system, *args, input=TEXT)
    assert one_line_error(proc, status=2) == f"Error: {message}"


def test_values_and_what_follows_a_double_dash_stay_as_they_are():
    values = {"--unknown-word-prefix", "--config"}
    assert moses_arguments(["--unknown-word-prefix", "-t", "-t", "--", "-threads"], values) == [
        "--unknown-word-prefix",
        "-t",
        "--report-segmentation",
        "--",
        "-threads",
    ]
    assert moses_arguments(["-threads", "all"], {"--threads"}) == ["--threads", str(os.cpu_count())]
    assert moses_arguments(["-f", "-config", "-v", "1", "-threads", "3"], values | {"--threads"}) == [
        "--config",
        "-config",
        "--threads",
        "3",
    ]


def test_nbest_dash_is_the_nbest_list_alone_on_stdout_as_moses_writes_it(tiny_system, tmp_path):
    """``--nbest -`` (Moses' ``-n-best-list -``) once wrote a file named ``-``; Moses writes the list on stdout and no
    1-best lines. ``--alignment -`` writes each alignment line after its translation, as ``/dev/stdout`` does."""
    listed = tmp_path / "nbest.txt"
    run_pysmt("decode", "-c", tiny_system, "-q", "--nbest", listed, "--nbest-size", "2", input=TEXT)
    for args in (["--nbest", "-", "--nbest-size", "2"], ["-n-best-list", "-", "2"]):
        proc = run_pysmt("decode", "-c", tiny_system, "-q", *args, input=TEXT, cwd=tmp_path)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, listed.read_text(), "")
        assert not (tmp_path / "-").exists()
    proc = run_pysmt("decode", "-c", tiny_system, "-q", "--alignment", "-", input=TEXT, cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (0, "x y z\n0-0 1-1 2-2\nz y x\n0-0 1-1 2-2\n")
    assert not (tmp_path / "-").exists()
