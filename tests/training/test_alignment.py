"""Word alignment (pysmt/training/alignment.py): eflomal runs as a child process that dies with us."""

from __future__ import annotations

from pathlib import Path

from pysmt.files.textio import TEMP_MARK


def test_eflomal_runs_its_aligner_as_a_child_that_dies_with_us(monkeypatch, tmp_path):
    """library_children_die_with_us reaches eflomal's aligner (started through subprocess.Popen), and
    eflomal's own temporary files go into our temporary folder, which a rerun removes after kill -9."""
    import tempfile

    from pysmt.running import processes
    from pysmt.training.alignment import align

    started = []
    original = processes.ChildProcess.__init__

    def recording(self, command, *args, **kwargs):
        started.append((command, tempfile.gettempdir()))
        original(self, command, *args, **kwargs)

    monkeypatch.setattr(processes.ChildProcess, "__init__", recording)
    src, tgt = tmp_path / "c.en", tmp_path / "c.fr"
    src.write_text("a house\nthe house\n")
    tgt.write_text("une maison\nla maison\n")
    align(src, tgt, tmp_path / "aligned")
    assert [Path(command[0]).name for command, _ in started] == ["eflomal"]
    assert TEMP_MARK in started[0][1] and Path(started[0][1]).parent == tmp_path
    assert (tmp_path / "aligned").read_text().count("\n") == 2
