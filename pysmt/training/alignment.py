"""Word alignment with eflomal in both directions, symmetrized by a Moses heuristic.

eflomal writes Pharaoh ``s-t`` links for both directions; the forward file aligns every target
word to at most one source word (symal's first list), the reverse file every source word to at
most one target word. eflomal seeds itself from ``/dev/urandom`` and has no seed option, so two
runs can differ slightly: the pipeline keeps the alignment on disk and reuses it, and
``--alignment FILE`` fixes it outright.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pysmt.errors import PysmtError
from pysmt.files.textio import TEMP_MARK, atomic_writer, read_lines
from pysmt.running.processes import library_children_die_with_us
from pysmt.training.symmetrize import format_pharaoh, parse_pharaoh, symmetrize


@contextmanager
def temporary_files_in(folder: Path) -> Iterator[None]:
    """Inside the block, ``tempfile``'s files (eflomal's copies of the corpus) go into ``folder``.

    Our temporary folder beside the output is removed by a rerun after kill -9 (pysmt.running.folder_lock);
    files in the system's /tmp would stay there.
    """
    saved, tempfile.tempdir = tempfile.tempdir, str(folder)
    try:
        yield
    finally:
        tempfile.tempdir = saved


def align(source: Path, target: Path, out: Path, heuristic: str = "grow-diag-final-and") -> None:
    """Align a tokenized bitext with eflomal and write the symmetrized Pharaoh alignment to ``out``."""
    import eflomal

    with tempfile.TemporaryDirectory(dir=out.parent, prefix=f".{out.name}.", suffix=TEMP_MARK) as tmp:
        forward, reverse = Path(tmp) / "forward", Path(tmp) / "reverse"
        with open(source, encoding="utf-8") as src, open(target, encoding="utf-8") as tgt:
            try:
                with library_children_die_with_us(), temporary_files_in(Path(tmp)):
                    eflomal.Aligner().align(
                        src, tgt, links_filename_fwd=str(forward), links_filename_rev=str(reverse), quiet=False
                    )  # eflomal reports its sampling iterations: the step's progress
            except (ValueError, OSError) as err:
                raise PysmtError(f"eflomal failed on {source} and {target}: {err}") from None
        symmetrize_files(source, target, forward, reverse, out, heuristic)


def symmetrize_files(source: Path, target: Path, forward: Path, reverse: Path, out: Path, heuristic: str) -> None:
    """Symmetrize two directional Pharaoh alignment files line by line."""
    with atomic_writer(out) as result:
        rows = zip(read_lines(source), read_lines(target), read_lines(forward), read_lines(reverse))
        for (_, src), (_, tgt), (_, fwd), (_, rev) in rows:
            points = symmetrize(parse_pharaoh(fwd), parse_pharaoh(rev), heuristic, len(src.split()), len(tgt.split()))
            result.write(format_pharaoh(points) + "\n")
