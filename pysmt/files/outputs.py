"""Where a command may write: checked before any work, so a mistake costs nothing and destroys nothing.

Every command names its outputs and its inputs here first. No output may be an input (``decode -i
in.txt --nbest in.txt`` would empty ``in.txt``), whatever its name or channel: the file behind stdin
(``decode --nbest x < x``) is an input and the file behind stdout an output, compared by device and
inode. No two outputs may be the same file, and every output's folder must be writable. The checks
run before any model is loaded, so a typo in an output path fails in a second rather than after
minutes of loading.

Files that are filled as the work goes (n-best lists, alignments) are written through
:func:`streamed_output`: into a temporary file beside the final name, moved into place when the run
ends. An earlier file of that name is left alone until then, and is kept when the run fails or the
disk fills up.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from pysmt.errors import PysmtError
from pysmt.files.textio import current_umask, destination, standard_file, temporary_file

PathLike = str | Path
#: An input: one path, several, or None (not given).
Inputs = Mapping[str, PathLike | Iterable[PathLike] | None]


def _paths(value: PathLike | Iterable[PathLike] | None) -> list[Path]:
    if value is None:
        return []
    if isinstance(value, (str, Path)):
        return [Path(value)]
    return [Path(v) for v in value]


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (after links and ``..``; hard links count as the same file)."""
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


def writable_folder(folder: Path, label: str, create: bool) -> None:
    """Fail unless files can be created in ``folder`` (or, with ``create``, in its nearest existing parent)."""
    probe = folder
    if create:
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
    if not probe.is_dir():
        what = "is not a folder" if probe.exists() else "does not exist"
        raise PysmtError(f"{label}: cannot write in {probe}: the folder {what}")
    try:
        with tempfile.TemporaryFile(dir=probe):
            pass
    except OSError as err:
        raise PysmtError(f"{label}: cannot create files in {probe} ({err.strerror})") from None


def standard_inputs() -> dict[str, list[Path]]:
    """stdin's file, when stdin is one (``< in.txt``): an input like ``--input``, for commands that read it."""
    found = standard_file(sys.stdin)
    return {"stdin": [found]} if found is not None else {}


def check_outputs(
    outputs: Mapping[str, PathLike | None],
    inputs: Inputs,
    *,
    folders: Mapping[str, PathLike | None] | None = None,
    create: bool = False,
    writes_stdout: bool = False,
) -> None:
    """Check, before any work, that no output is an input or another output and that all can be written.

    ``outputs`` are files, ``folders`` output folders; both are labelled by the option that named
    them, and so are the ``inputs``, which may include the files a config refers to and stdin's
    (:func:`standard_inputs`). Files are compared by device and inode (hard links and ``/dev/fd/N``
    count as the same file), then by path. With ``writes_stdout`` the file behind stdout (``> x``)
    is an output too. The file behind stderr (``2> x``) always is: every command writes there, so when it
    is an input, stderr is silenced before the error is raised (:func:`silence_stderr`). A named output
    that is the file behind stdout or stderr is written through that stream, in order
    (:func:`pysmt.files.textio.destination`), so it is checked as that stream's file.
    Output folders, and with ``create`` the folders of output files, may be missing (the command
    makes them) as long as their nearest existing parent is writable; otherwise a file's folder must
    exist, as a shell redirection needs.
    """
    named_inputs = [(label, path) for label, value in inputs.items() for path in _paths(value)]

    def not_an_input(label: str, path: Path) -> None:
        for input_label, input_path in named_inputs:
            if same_file(path, input_path):
                raise PysmtError(
                    f"{label} {path} is also the input {input_label} {input_path}: "
                    "an output may not overwrite an input; choose another path"
                )
            if input_path.is_dir() and path.resolve().is_relative_to(input_path.resolve()):
                raise PysmtError(
                    f"{label} {path} is inside the input {input_label} {input_path} (a model folder): "
                    "an output may not overwrite what an input holds; choose another path"
                )

    stdout = standard_file(sys.stdout) if writes_stdout else None
    if stdout is not None:
        not_an_input("stdout", stdout)
    stderr = standard_file(sys.stderr)
    if stderr is not None:  # every command writes there: messages, warnings, a library's loading lines
        try:
            not_an_input("stderr", stderr)
        except PysmtError as err:
            silence_stderr(str(err))
            raise
    files = {}
    for label, value in outputs.items():
        if value is None:
            continue
        path = Path(value)
        stream = destination(path).stream
        if stream is not None:  # written through stdout or stderr: its file, if it is one, must be no input
            behind = standard_file(stream)
            if behind is not None:
                not_an_input(
                    f"{label} {path} (the file behind {'stdout' if stream is sys.stdout else 'stderr'})", behind
                )
            continue
        if path.is_dir():
            raise PysmtError(f"{label} {path}: is a folder, not a file")
        not_an_input(label, path)
        writable_folder(path.parent, f"{label} {path}", create=create)
        files[label] = path
    labels = list(files)
    for k, first in enumerate(labels):
        for second in labels[k + 1 :]:
            if same_file(files[first], files[second]):
                raise PysmtError(f"{first} and {second} are the same file ({files[first]}): give them different paths")
    for label, folder in (folders or {}).items():
        if folder is None:
            continue
        folder = Path(folder)
        if folder.exists() and not folder.is_dir():
            raise PysmtError(f"{label} {folder}: is a file, not a folder")
        for input_label, input_path in named_inputs:
            if same_file(folder, input_path):
                raise PysmtError(f"{label} {folder} is also the input {input_label}: choose another folder")
        writable_folder(folder, f"{label} {folder}", create=True)


def silence_stderr(message: str) -> None:
    """Stop writing to stderr, whose file is an input (``2>> phrase-table.gz``): point it at /dev/null, so that
    neither the error nor a library's messages land in the input, and show ``message`` on the terminal, if any."""
    try:
        with open("/dev/tty", "w", encoding="utf-8") as terminal:
            terminal.write(f"Error: {message}\n")
    except OSError:
        pass  # no terminal: the exit status (1) is all that can be said
    sys.stderr.flush()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stderr.fileno())
    os.close(devnull)


class _Stream:
    """A text file being filled; a failed write (a full disk) becomes :class:`OutputFailed`, naming the file.

    A write to stdout whose reader has gone (``| head``) stays a ``BrokenPipeError``: the command then
    stops quietly, as command-line tools do.
    """

    def __init__(self, handle: TextIO, shown: Path | str, device: bool = False) -> None:
        self.handle, self.shown, self.device, self.written = handle, shown, device, False

    def failed(self, err: OSError) -> OutputFailed:
        what = "" if self.device else "; the incomplete file was removed (an earlier file of that name is untouched)"
        return OutputFailed(f"writing {self.shown}: {err.strerror or err}{what}")

    def write(self, text: str) -> int:
        try:
            self.written = True
            return self.handle.write(text)
        except OSError as err:
            if isinstance(err, BrokenPipeError) and self.handle is sys.stdout:
                raise
            raise self.failed(err) from None

    def flush(self) -> None:
        try:
            self.handle.flush()
        except OSError as err:
            if isinstance(err, BrokenPipeError) and self.handle is sys.stdout:
                raise
            raise self.failed(err) from None


class OutputFailed(PysmtError):
    """Writing a streamed output failed (a full disk): the partial file is removed, an earlier one kept."""


def standard_output() -> _Stream:
    """stdout as a streamed output: a failed write (a full disk under ``> out.txt``) names stdout's file."""
    behind = standard_file(sys.stdout)
    return _Stream(sys.stdout, f"stdout ({behind})" if behind else "stdout", device=True)


@contextmanager
def streamed_output(path: PathLike | None) -> Iterator[_Stream | None]:
    """A text file written as results come, under a temporary name, moved to ``path`` when the run ends.

    * The move happens when the run ends, also when it is stopped part-way by Ctrl-C or SIGTERM:
      what was translated is kept (unless nothing was, then an earlier file stays untouched).
    * A run that fails (a bad input line, a plugin's error) keeps an earlier complete file of that
      name untouched and drops its partial output; with no earlier file, the partial output is kept.
    * A write that fails (a full disk) removes the partial file and keeps an earlier one.
    * Only a regular file (or a new name) is replaced: a symbolic link's target is written (the link
      stays), a device or FIFO (a named pipe, ``/dev/null``) is written to directly, as a stream, and the
      file behind this process' stdout or stderr (``/dev/stdout``, or ``out.txt`` under ``> out.txt``)
      is written through that stream, each sentence's lines after its translation
      (:func:`pysmt.files.textio.destination`).
    ``None`` gives ``None`` (no such output requested).
    """
    if path is None:
        yield None
        return
    shown = Path(path)
    where = destination(shown)
    if where.stream is not None:
        through = _Stream(where.stream, shown, device=True)
        yield through
        through.flush()
        return
    if where.special:  # a device, FIFO or socket: no file to replace
        with open(shown, "w", encoding="utf-8") as device:
            yield _Stream(device, shown, device=True)
        return
    target = where.target
    earlier = target.exists()
    fd, tmp = temporary_file(target)
    stream = _Stream(os.fdopen(fd, "w", encoding="utf-8"), shown)
    keep = False
    try:
        yield stream
        stream.flush()
        keep = True
    except OutputFailed:
        raise
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: keep what was done
        keep = stream.written or not earlier
        raise
    except BaseException:  # the run failed: an earlier complete file is worth more than a partial one
        keep = not earlier
        raise
    finally:
        try:
            stream.handle.close()
        except OSError as err:
            tmp.unlink(missing_ok=True)
            if keep:  # nothing else went wrong: this is the error to report
                raise stream.failed(err) from None
        if keep:
            os.chmod(tmp, 0o666 & ~current_umask())
            os.replace(tmp, target)
        else:
            tmp.unlink(missing_ok=True)
