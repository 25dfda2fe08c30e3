"""Decoding a stream of lines: in input order, one output line per input line, written as it is done.

With ``threads > 1`` sentences are decoded by worker processes (:mod:`pysmt.running.parallel`: forked ones
share the loaded models copy-on-write); results are still written in input order. An input line
that is not valid UTF-8 stops the run with an error naming the line, after everything before it
has been written.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from pysmt.decoder import Decoder, MalformedMarkup, Translation
from pysmt.decoding.line_streams import BadLine
from pysmt.decoding.mbr import MbrSettings, choose
from pysmt.errors import PysmtError
from pysmt.running.parallel import WorkerDied, ordered_results, shared, sharing, worker_pool


def translate_line(
    decoder: Decoder,
    index: int,
    line: str,
    nbest_size: int,
    distinct: bool,
    process: bool,
    mbr: MbrSettings | None = None,
) -> Translation:
    """One input line translated, with the system's preparation applied when ``process`` (its inverse to the output).

    With ``mbr`` the translation written is the MBR (or consensus) choice among the first ``mbr.size`` distinct
    entries of the n-best list (:func:`pysmt.decoding.mbr.choose`): the list is extracted distinct unless an n-best list
    of repeated strings was asked for, and long enough for both; its first ``nbest_size`` entries stay as they are.

    A line whose markup does not read (``--xml-input``) is refused (:class:`~pysmt.decoder.MalformedMarkup`) unless
    the decoder reads such a line as text (``markup_as_text``, as Moses does): then it is translated with its tags as
    words, and the translation carries a warning naming the line. So does a line too long to translate
    (:meth:`~pysmt.decoder.Decoder.too_long`), written empty.
    """
    if why := decoder.too_long(0, len(line)):  # before the line is prepared: tokenizing 2 MB took a minute
        return decoder.untranslated(index, why)
    try:
        translation = _translated(decoder, index, line, nbest_size, distinct, process, mbr, as_text=False)
    except MalformedMarkup as err:
        if not decoder.markup_as_text:
            raise
        translation = _translated(decoder, index, line, nbest_size, distinct, process, mbr, as_text=True)
        translation.warning = f"{err}; the line translated as text"
    return translation


def _translated(
    decoder: Decoder,
    index: int,
    line: str,
    nbest_size: int,
    distinct: bool,
    process: bool,
    mbr: MbrSettings | None,
    as_text: bool,
) -> Translation:
    """:func:`translate_line`'s translation, its markup read as the decoder says or (``as_text``) as words."""
    text = decoder.preprocess(line, index, as_text) if process else line
    if mbr is None:
        translation = decoder.translate(text, index, nbest_size, distinct, as_text)
    else:
        size, unique = max(nbest_size, mbr.size), distinct or nbest_size <= 1
        translation = decoder.translate(text, index, size, unique, as_text)
        hypotheses = translation.hypotheses
        translation.chosen = choose([c.words for c in hypotheses], [c.total for c in hypotheses], mbr)
        del hypotheses[max(nbest_size, translation.chosen + 1) :]  # the rest only mattered to the choice
    translation.output = decoder.postprocess(translation.best) if process else translation.best
    return translation


def _translate(item: tuple[int, str] | BadLine) -> Translation | BadLine:
    if isinstance(item, BadLine):
        return item
    decoder, nbest_size, distinct, process, mbr = shared()
    return translate_line(decoder, *item, nbest_size, distinct, process, mbr)


def translate_stream(
    decoder: Decoder,
    items: Iterable[tuple[int, str] | BadLine],
    emit: Callable[[Translation], None],
    *,
    threads: int = 1,
    nbest_size: int = 1,
    distinct: bool = False,
    process: bool = True,
    mbr: MbrSettings | None = None,
) -> int:
    """Translate every item and ``emit`` each result in input order; return how many were translated.

    With ``process`` the system's preparation is applied to the input and its inverse to the output; with ``mbr``
    each translation is chosen by MBR (:func:`translate_line`).
    """
    work = (decoder, nbest_size, distinct, process, mbr)
    done = 0
    if threads > 1:
        with worker_pool(threads, shared=work) as pool:
            try:
                for result in ordered_results(pool, _translate, items, 2 * threads):
                    done += _emit(result, emit)
            except WorkerDied:
                raise PysmtError(
                    f"input line {done + 1}: a decoding worker process died (killed, or out of "
                    f"memory?); the {done:,} lines before it were written"
                ) from None
    else:
        with sharing(work):
            for item in items:
                done += _emit(_translate(item), emit)
    return done


def _emit(result: Translation | BadLine, emit: Callable[[Translation], None]) -> int:
    if isinstance(result, BadLine):
        raise result.error
    emit(result)
    return 1
