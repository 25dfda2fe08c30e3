"""Decoding's text in and out, one line per sentence, for ``decode`` and ``tune`` (and whatever decodes a file):
the input's lines read, and each translation's lines written as it comes, in input order.

Reading: each line decoded as UTF-8 (a byte-order mark dropped, compressed files read); the first
line that cannot be read becomes a :class:`BadLine` and ends the stream, so that everything before it
is translated and written before the error is raised in its turn. Writing
(:class:`TranslationLines`): a translation's line, its n-best entries (Moses' format) and its word
alignment (Pharaoh's), each flushed at once, so that whoever reads the outputs (``| head``, a FIFO,
one file shared through stdout) sees each sentence complete and in order.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO, Protocol

from tqdm import tqdm

from pysmt.errors import PysmtError
from pysmt.files.formats import alignment_line, nbest_line
from pysmt.files.outputs import standard_output, streamed_output
from pysmt.files.textio import count_lines, decode_line, open_binary, raw_lines

if TYPE_CHECKING:
    from pysmt.decoder import Translation

#: (label, first, last + 1) of each feature in a score vector (:meth:`pysmt.decoder.Decoder.nbest_labels`).
Labels = list[tuple[str, int, int]]
#: What translates a stream of input items and hands each translation, in input order, to ``emit``
#: (:func:`pysmt.decoding.runner.translate_stream`, :meth:`pysmt.decoding.cluster.Cluster.translate`).
Translate = Callable[..., int]


class Writable(Protocol):
    def write(self, text: str, /) -> int: ...

    def flush(self) -> None: ...


@dataclass
class BadLine:
    """Stands in the stream for an input line that could not be read; raised when its turn comes."""

    error: PysmtError


def input_lines(handle: BinaryIO, name: str) -> Iterator[tuple[int, str] | BadLine]:
    """(index, text) per input line; the first line that cannot be read (not UTF-8, or where compressed input
    is cut short) becomes a :class:`BadLine` and ends the stream."""
    try:
        for line_no, raw in raw_lines(handle, name):
            yield line_no - 1, decode_line(raw, name, line_no)
    except PysmtError as err:
        yield BadLine(err)


class TranslationLines:
    """Writes each translation it is given (an ``emit`` callback): its line to ``output``, its first ``nbest_size``
    entries to ``nbest`` and its best derivation's word alignment to ``alignment`` (each when given), flushed
    as written; ``progress`` counts the sentences."""

    def __init__(
        self,
        output: Writable,
        labels: Labels,
        *,
        nbest: Writable | None = None,
        nbest_size: int = 0,
        alignment: Writable | None = None,
        progress: tqdm | None = None,
    ) -> None:
        self.output, self.labels, self.nbest, self.nbest_size = output, labels, nbest, nbest_size
        self.alignment, self.progress = alignment, progress

    def __call__(self, translation: Translation) -> None:
        self.output.write(translation.output + "\n")
        self.output.flush()
        if self.nbest:
            for candidate in translation.hypotheses[: self.nbest_size]:
                self.nbest.write(nbest_line(translation.index, candidate, self.labels) + "\n")
            self.nbest.flush()
        if self.alignment:
            self.alignment.write((alignment_line(translation.hypotheses[0]) if translation.hypotheses else "") + "\n")
            self.alignment.flush()
        if self.progress is not None:
            self.progress.update(1)


def decode_file(
    translate: Translate,
    labels: Labels,
    *,
    input_path: str | None = None,
    nbest_path: str | None = None,
    nbest_size: int = 1,
    distinct: bool = False,
    alignment_path: str | None = None,
    process: bool = True,
) -> None:
    """``pysmt decode``'s text: ``input_path`` (or stdin) translated to stdout, with an n-best list and alignments
    when asked (streamed outputs: :func:`pysmt.files.outputs.streamed_output`), with a progress bar over a file's
    lines. ``process`` applies the system's preparation (not for ``--prepared`` text)."""
    handle = open_binary(input_path) if input_path else sys.stdin.buffer
    total = count_lines(input_path) if input_path else None
    with (
        streamed_output(nbest_path) as nbest,
        streamed_output(alignment_path) as alignment,
        tqdm(total=total, unit=" sent", desc="decode", disable=total is None, file=sys.stderr) as progress,
    ):
        emit = TranslationLines(
            standard_output(), labels, nbest=nbest, nbest_size=nbest_size, alignment=alignment, progress=progress
        )
        translate(
            input_lines(handle, input_path or "<stdin>"),
            emit,
            nbest_size=nbest_size if nbest_path else 1,
            distinct=distinct,
            process=process,
        )
