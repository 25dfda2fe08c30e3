"""``pysmt binarize`` (pysmt/binarize.py): the binarized system decodes the same, and the command refuses
its own input. The binary tables are tested in models/test_binary_tables.py."""

from __future__ import annotations


def test_binarize_command_decodes_the_same_and_refuses_its_own_input(tmp_path, monkeypatch):
    import subprocess
    import sys

    from tests.helpers import write_moses_system
    ini = write_moses_system(tmp_path / "system")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # where the tables' checks are recorded
    run = lambda *args: subprocess.run([sys.executable, "-m", "pysmt.cli", *args], capture_output=True)  # noqa: E731
    assert run("binarize", "-c", str(ini), "-o", str(tmp_path / "bin"), "--memory", "300M", "--temp-dir",
               str(tmp_path / "scratch")).returncode == 0
    assert not any((tmp_path / "scratch").iterdir())
    assert "below the smallest budget" in run("binarize", "-c", str(ini), "-o", str(tmp_path / "b2"), "--memory",
                                              "1M").stderr.decode()
    source = tmp_path / "in.txt"
    source.write_text("a b c\nc b a q\n")
    text = run("decode", "-c", str(ini), "-i", str(source), "--nbest", str(tmp_path / "n1"))
    binary = run("decode", "-c", str(tmp_path / "bin" / "pysmt.toml"), "-i", str(source), "--nbest",
                 str(tmp_path / "n2"))
    assert text.returncode == binary.returncode == 0 and text.stdout == binary.stdout
    assert (tmp_path / "n1").read_text() == (tmp_path / "n2").read_text()
    toml = tmp_path / "bin" / "pysmt.toml"
    before = toml.read_bytes()
    again = run("binarize", "-c", str(toml), "-o", str(tmp_path / "bin"))
    assert again.returncode == 1 and b"is also the input --config" in again.stderr and toml.read_bytes() == before
