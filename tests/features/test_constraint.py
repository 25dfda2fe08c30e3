"""Constrained (forced) decoding: `pysmt decode --constraint FILE` (Moses' -constraint, its ConstrainedDecoding
feature): only translations equal to the line's constraint survive; a line none reaches is an empty line and a
warning; the constraint file's lines must match the input's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pysmt.config import SearchOverrides
from pysmt.decoder import Decoder
from pysmt.plugin import FORBIDDEN, Feature, FeatureError, ForcesOutput
from pysmt.testing import registered, run_pysmt, toy_decoder
from tests.helpers import raw_text_system

#: The toy system's input; the second line's constraint is not its free best (x y z), the third's unreachable.
SOURCE = "a b c\na b c\nc b a\nb c\n"
CONSTRAINTS = "x y z\ny y z\nz y x\nx x\n"


def constrained(system: Path, constraints: Path, engine: str, algorithm: str = "normal") -> Decoder:
    return Decoder.from_paths(
        system,
        ["constrained-decoding"],
        [f"ConstrainedDecoding0.path={constraints}"],
        engine=engine,  # type: ignore[arg-type]
        algorithm=algorithm,  # type: ignore[arg-type]
        overrides=SearchOverrides(),
    )


@pytest.fixture
def constraints(tmp_path: Path) -> Path:
    path = tmp_path / "constraints.txt"
    path.write_text(CONSTRAINTS)
    return path


@pytest.mark.parametrize("engine", ["auto", "python"])
def test_a_reached_constraint_scores_as_its_free_derivation(tiny_system, constraints, engine) -> None:
    free = Decoder.from_paths(tiny_system, engine=engine)  # type: ignore[arg-type]
    forced = constrained(tiny_system, constraints, engine)
    assert free.translate("a b c", 1).best == "x y z"
    for index, line in enumerate(SOURCE.splitlines()[:3]):
        target = CONSTRAINTS.splitlines()[index].split()
        found = forced.translate(line, index, nbest_size=20).hypotheses
        assert found and all(c.words == target for c in found)  # the n-best list: only the constraint
        everything = free.translate(line, index, nbest_size=1000).hypotheses
        for candidate in found:  # each the free search's derivation, with the same scores and 0 for the constraint
            same = [
                c
                for c in everything
                if (c.words, c.phrases, c.alignment) == (target, candidate.phrases, candidate.alignment)
            ]
            assert same and same[0].total == candidate.total
            assert same[0].scores.tolist() == candidate.scores[:-1].tolist() and candidate.scores[-1] == 0.0


@pytest.mark.parametrize("algorithm", ["normal", "cube"])
def test_the_python_reference_and_the_compiled_search_agree(tiny_system, constraints, algorithm) -> None:
    compiled = constrained(tiny_system, constraints, "auto", algorithm)
    python = constrained(tiny_system, constraints, "python", algorithm)
    for index, line in enumerate(SOURCE.splitlines()):
        a, b = (d.translate(line, index, nbest_size=50).hypotheses for d in (compiled, python))
        assert [(c.words, c.total, c.scores.tolist(), c.phrases) for c in a] == [
            (c.words, c.total, c.scores.tolist(), c.phrases) for c in b
        ]
        assert bool(a) == (index != 3)


@pytest.mark.parametrize("engine", ["auto", "python"])
def test_an_unreachable_constraint_is_no_translation(tiny_system, constraints, engine) -> None:
    translation = constrained(tiny_system, constraints, engine).translate("b c", 3, nbest_size=10)
    assert translation.hypotheses == [] and translation.best == ""


def decode(system: Path, text: str, *options: str | Path) -> tuple[int, str, str]:
    proc = run_pysmt("decode", "-q", "-c", system, *options, input=text)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("threads", ["1", "2"])
def test_decode_with_a_constraint(tiny_system, constraints, tmp_path, threads) -> None:
    nbest = tmp_path / "nbest"
    rc, out, err = decode(
        tiny_system, SOURCE, "--constraint", constraints, "--threads", threads, "--nbest", nbest, "--nbest-size", "5"
    )
    assert rc == 0, err
    assert out == "x y z\ny y z\nz y x\n\n"  # the unreachable line empty: the lines stay aligned
    assert err == "pysmt: warning: input line 4: no translation reaches its constraint; an empty line written\n"
    entries = [line.split(" ||| ") for line in nbest.read_text().splitlines()]
    assert {(n, words) for n, words, *_ in entries} == {("0", "x y z"), ("1", "y y z"), ("2", "z y x")}
    assert all("ConstrainedDecoding0= 0 " in scores + " " for _, _, scores, _ in entries)


def test_a_raw_text_constraint_is_prepared_as_the_target_side(tmp_path) -> None:
    system = raw_text_system(tmp_path / "raw")
    assert decode(system, "a, b.\n")[1] == "x, y.\n"
    (tmp_path / "raw.txt").write_text("x, z .\n")  # ("z." is one French token, as "y." is in the output above)
    rc, out, err = decode(system, "a, b.\n", "--constraint", tmp_path / "raw.txt")
    assert (rc, out, err) == (0, "x, z.\n", "")  # prepared to the tokens x , z . and restored
    (tmp_path / "tokens.txt").write_text("x , z .\n")
    rc, out, err = decode(system, "a , b .\n", "--prepared", "--constraint", tmp_path / "tokens.txt")
    assert (rc, out, err) == (0, "x , z .\n", "")
    rc, out, err = decode(system, "a , b .\n", "--prepared", "--constraint", tmp_path / "raw.txt")
    assert (rc, out) == (0, "\n") and "input line 1: no translation reaches its constraint" in err


def test_the_constraint_file_must_have_a_line_per_input_line(tiny_system, constraints, tmp_path) -> None:
    source = tmp_path / "in.txt"
    source.write_text("a b c\n")
    rc, out, err = decode(tiny_system, "", "--constraint", constraints, "--input", source)
    assert (rc, out) == (1, "") and err == f"Error: --constraint {constraints} has 4 lines, --input {source} 1\n"
    rc, out, err = decode(tiny_system, "a b c\n", "--constraint", constraints)  # stdin: counted as it is decoded
    assert (rc, out) == (1, "x y z\n") and err == f"Error: --constraint {constraints} has 4 lines, the input 1\n"
    rc, out, err = decode(tiny_system, SOURCE + "a\n", "--constraint", constraints)
    assert rc == 1 and err.endswith(f"the constraint file {constraints} has 4 lines, none for input line 5\n")


class ForbidAll(Feature):
    """Forbids every translation; forces the output (forced decoding's protocol) when ``forces`` is true."""

    tunable = False  # weight 1, as ConstrainedDecoding's
    forces = False

    @classmethod
    def from_config(cls, name, params, system):  # type: ignore[no-untyped-def]
        return cls(name, 1)

    def evaluate_in_isolation(self, pairs):  # type: ignore[no-untyped-def]
        return np.full((len(pairs), 1), FORBIDDEN), None

    def forces_output(self) -> bool:
        return self.forces


class ForcesNothing(ForbidAll):
    default_label = "ForcesNothing"
    forces = False


class ForcesAll(ForbidAll):
    default_label = "ForcesAll"
    forces = True


@pytest.mark.parametrize("engine", ["auto", "python"])
def test_the_decoder_asks_the_forcing_protocol_not_the_feature(tiny_system, engine) -> None:
    """Any feature that forces the output (pysmt.plugin.ForcesOutput), not only ConstrainedDecoding, makes a line no
    translation reaches an empty one; a feature that says it forces nothing leaves it the error it is."""
    assert isinstance(ForcesAll("ForcesAll0", 1), ForcesOutput)
    with registered(forces_all=ForcesAll, forces_nothing=ForcesNothing):
        translation = toy_decoder(tiny_system, ["forces-all"], engine=engine).translate("b c", 0, nbest_size=3)
        assert translation.hypotheses == [] and translation.best == ""
        with pytest.raises(FeatureError, match="no translation is left: feature ForcesNothing0 forbade"):
            toy_decoder(tiny_system, ["forces-nothing"], engine=engine).translate("b c", 0, nbest_size=3)
