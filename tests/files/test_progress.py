"""Progress bars: on a terminal only, never after --quiet."""

import io

import pytest

from pysmt.files import progress
from pysmt.files.progress import progress_bar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_bar_shows_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stderr", io.StringIO())
    with progress_bar(total=3, desc="redirected") as bar:
        bar.update(3)
        assert bar.disable
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    with progress_bar(total=3, desc="shown") as bar:
        bar.update(3)
        assert not bar.disable
    assert "shown" in terminal.getvalue() and "\r" in terminal.getvalue()


def test_quiet_leaves_every_bar_out_even_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = Terminal()
    monkeypatch.setattr("sys.stderr", terminal)
    monkeypatch.setattr(progress, "quiet", True)
    with progress_bar(total=3, desc="hidden") as bar:
        bar.update(3)
        assert bar.disable
    assert terminal.getvalue() == ""
