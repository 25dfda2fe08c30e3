"""Files as pysmt reads and writes them, for a plugin's commands: text read line by line whether
compressed or not (:func:`read_lines`, :func:`count_lines`), inputs that must exist
(:func:`require_file`), outputs written whole or not at all (:func:`atomic_writer`, :func:`atomic_path`)
and never over an input (:func:`check_outputs`, :func:`standard_inputs`), arrays in one file
(:func:`read_arrays`), a :func:`progress_bar`, and an error that names a file's line (:func:`at_line`).

Imports no compiled code: a plugin's training reads its data with these on a lent GPU machine."""

from pysmt.errors import at_line
from pysmt.files.array_files import read_arrays
from pysmt.files.outputs import check_outputs, standard_inputs
from pysmt.files.progress import progress_bar
from pysmt.files.textio import atomic_path, atomic_writer, count_lines, read_lines, require_file

__all__ = [
    "at_line",
    "atomic_path",
    "atomic_writer",
    "check_outputs",
    "count_lines",
    "progress_bar",
    "read_arrays",
    "read_lines",
    "require_file",
    "standard_inputs",
]
