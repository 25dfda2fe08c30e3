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
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, BinaryIO, Protocol

from tqdm import tqdm

from pysmt.errors import PysmtError
from pysmt.files.formats import alignment_line, nbest_line
from pysmt.files.outputs import standard_output, streamed_output
from pysmt.files.progress import progress_bar
from pysmt.files.textio import count_lines, decode_line, open_binary, raw_lines

if TYPE_CHECKING:
    from pysmt.decoder import Candidate, Translation
    from pysmt.decoding.mbr import MbrSettings

#: Where an output named ``-`` goes (Moses' ``-n-best-list -``): written through stdout, in order.
STDOUT = "/dev/stdout"
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


@dataclass(frozen=True)
class OutputOptions:
    """What Moses' output options change in ``decode``'s lines (``-report-segmentation``, ``-print-alignment-info``,
    ``-mark-unknown``, ``-unknown-word-prefix``, ``-drop-unknown``, ``-sort-word-alignment``).

    The unknown words (passed through: no table translates them) are marked or dropped in the translation,
    its n-best entries and its word alignment alike (a dropped word's links go, the target positions after
    it move down), as Moses' output has them; a word with a digit in it is kept, as Moses keeps it. The
    segmentation marks (`` |i-j|`` after each phrase: its source words, first and last, from 0) and the
    alignment after `` ||| `` count the model's tokens, so with either the line is the model's tokens (as with
    ``--prepared``); marked or dropped words alone are detokenized with the rest of the line.
    """

    report_segmentation: bool = False
    print_alignment_info: bool = False
    mark_unknown: bool = False
    unknown_word_prefix: str = "UNK"
    drop_unknown: bool = False
    #: Word alignments sorted by target position (Moses' ``-sort-word-alignment 1``), not in Moses' default order.
    sort_word_alignment: bool = False

    @property
    def changes_words(self) -> bool:
        return self.mark_unknown or self.drop_unknown

    @property
    def tokens(self) -> bool:
        """Whether the 1-best line is the model's tokens (its marks count them), not restored text."""
        return self.report_segmentation or self.print_alignment_info

    def __bool__(self) -> bool:
        return self.changes_words or self.tokens

    def candidate(self, candidate: Candidate) -> Candidate:
        """``candidate`` with its unknown words marked or dropped (itself when neither is asked or none is unknown)."""
        if not self.changes_words or not candidate.unknown:
            return candidate
        unknown = set(candidate.unknown)
        dropped = (
            {t for t in unknown if not any(c.isdigit() for c in candidate.words[t])} if self.drop_unknown else set()
        )
        position: list[int] = []  # position[t]: t's place in the new words (or where the next word goes)
        words: list[str] = []
        for t, word in enumerate(candidate.words):
            position.append(len(words))
            if t not in dropped:
                words.append(self.unknown_word_prefix + word if self.mark_unknown and t in unknown else word)
        position.append(len(words))
        return replace(
            candidate,
            words=words,
            alignment=[(s, position[t]) for s, t in candidate.alignment if t not in dropped],
            phrases=[(s0, s1, position[t0], position[t1]) for s0, s1, t0, t1 in candidate.phrases],
            unknown=sorted(position[t] for t in unknown - dropped),
        )

    def line(self, candidate: Candidate, restore: Callable[[str], str] | None) -> str:
        """The 1-best line of ``candidate`` (already marked or dropped): restored (``restore``) unless it has marks."""
        words = candidate.words
        if self.report_segmentation:
            text = " ".join(
                " ".join([*words[t0:t1], f"|{s0}-{s1 - 1}|"]) for s0, s1, t0, t1 in candidate.phrases if t1 > t0
            )
        else:
            text = " ".join(words)
            if restore is not None and not self.tokens:
                text = restore(text)
        if self.print_alignment_info:
            text = f"{text} ||| {self.alignment(candidate)}"
        return text

    def alignment(self, candidate: Candidate) -> str:
        """``candidate``'s word alignment line, in the order asked (``--sort-word-alignment``)."""
        return alignment_line(candidate, by_target=self.sort_word_alignment)


class TranslationLines:
    """Writes each translation it is given (an ``emit`` callback): its line to ``output``, its first ``nbest_size``
    entries to ``nbest`` and its best derivation's word alignment to ``alignment`` (each when given), flushed
    as written; ``progress`` counts the sentences. With ``shown`` (Moses' output options) the line is made here
    from the translation's words (``restore``: the system's post-processing, for a line without marks), and its
    unknown words are marked or dropped in all three."""

    def __init__(
        self,
        output: Writable | None,
        labels: Labels,
        *,
        nbest: Writable | None = None,
        nbest_size: int = 0,
        alignment: Writable | None = None,
        progress: tqdm | None = None,
        shown: OutputOptions | None = None,
        restore: Callable[[str], str] | None = None,
    ) -> None:
        self.output, self.labels, self.nbest, self.nbest_size = output, labels, nbest, nbest_size
        self.alignment, self.progress = alignment, progress
        self.shown, self.restore = shown if shown is not None else OutputOptions(), restore

    def __call__(self, translation: Translation) -> None:
        hypotheses = translation.hypotheses
        if translation.warning:  # a malformed tag read as text, a line too long to translate
            print(f"pysmt: warning: {translation.warning}", file=sys.stderr, flush=True)
        if not hypotheses:  # only under --constraint: no translation reaches the line's constraint
            print(
                f"pysmt: warning: input line {translation.index + 1}: no translation reaches its constraint; "
                "an empty line written",
                file=sys.stderr,
                flush=True,
            )
        text, chosen = translation.output, translation.chosen
        if self.shown:
            hypotheses = [self.shown.candidate(c) for c in hypotheses[: max(self.nbest_size, chosen + 1)]]
            text = self.shown.line(hypotheses[chosen], self.restore) if hypotheses else ""
        if self.output is not None:
            self.output.write(text + "\n")
            self.output.flush()
        if self.nbest:
            for candidate in hypotheses[: self.nbest_size]:
                self.nbest.write(nbest_line(translation.index, candidate, self.labels) + "\n")
            self.nbest.flush()
        if self.alignment:
            self.alignment.write((self.shown.alignment(hypotheses[chosen]) if hypotheses else "") + "\n")
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
    best_line: bool = True,
    process: bool = True,
    shown: OutputOptions | None = None,
    restore: Callable[[str], str] | None = None,
    mbr: MbrSettings | None = None,  # each line the MBR (or consensus) translation of its n-best list
) -> int:
    """``pysmt decode``'s text: ``input_path`` (or stdin) translated to stdout, with an n-best list and alignments
    when asked (streamed outputs: :func:`pysmt.files.outputs.streamed_output`), with a progress bar over a file's
    lines (on a terminal); without ``best_line`` no translation's line is written (Moses' ``-n-best-list -``: the
    n-best list alone on stdout). ``process`` applies the system's preparation (not for ``--prepared`` text);
    ``shown`` and ``restore`` are :class:`TranslationLines`'. Returns the number of lines translated."""
    handle = open_binary(input_path) if input_path else sys.stdin.buffer
    total = count_lines(input_path) if input_path else None
    with (
        streamed_output(nbest_path) as nbest,
        streamed_output(alignment_path) as alignment,
        progress_bar(total=total, unit=" sent", desc="decode", shown=total is not None) as progress,
    ):
        emit = TranslationLines(
            standard_output() if best_line else None,
            labels,
            nbest=nbest,
            nbest_size=nbest_size,
            alignment=alignment,
            progress=progress,
            shown=shown,
            restore=restore if process else None,
        )
        return translate(
            input_lines(handle, input_path or "<stdin>"),
            emit,
            nbest_size=nbest_size if nbest_path else 1,
            distinct=distinct,
            process=process,
            mbr=mbr,
        )
