"""``pysmt binarize`` (pysmt/binarize.py): the binarized system decodes the same, and the command refuses
its own input. The binary tables are tested in models/test_binary_tables.py."""

from __future__ import annotations

import pytest


@pytest.mark.slow
def test_binarize_command_decodes_the_same_and_refuses_its_own_input(tmp_path, monkeypatch):
    from pysmt.testing import one_line_error, run_pysmt
    from tests.helpers import write_moses_system

    ini = write_moses_system(tmp_path / "system")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # where the tables' checks are recorded
    assert (
        run_pysmt(
            "binarize", "-c", ini, "-o", tmp_path / "bin", "--memory", "300M", "--temp-dir", tmp_path / "scratch"
        ).returncode
        == 0
    )
    assert not any((tmp_path / "scratch").iterdir())
    assert (
        "below the smallest budget" in run_pysmt("binarize", "-c", ini, "-o", tmp_path / "b2", "--memory", "1M").stderr
    )
    source = tmp_path / "in.txt"
    source.write_text("a b c\nc b a q\n")
    text = run_pysmt("decode", "-c", ini, "-i", source, "--nbest", tmp_path / "n1")
    binary = run_pysmt("decode", "-c", tmp_path / "bin" / "pysmt.toml", "-i", source, "--nbest", tmp_path / "n2")
    assert text.returncode == binary.returncode == 0 and text.stdout == binary.stdout
    assert (tmp_path / "n1").read_text() == (tmp_path / "n2").read_text()
    toml = tmp_path / "bin" / "pysmt.toml"
    before = toml.read_bytes()
    one_line_error(run_pysmt("binarize", "-c", toml, "-o", tmp_path / "bin"), "is also the input --config")
    assert toml.read_bytes() == before
