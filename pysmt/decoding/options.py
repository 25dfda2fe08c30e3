"""What ``pysmt decode`` is told: :class:`DecodeOptions`, whose fields are also its command-line options;
:class:`SystemOptions`, the system every decoding command decodes with (``decode``, ``tune``, ``serve``: a field of
each one's options); and :func:`system_recipe`, the one way a command's system options (``-c``, ``--features``,
``--param``, ``--weights``, ``--search``, the search settings, ``--xml-input``) become a
:class:`~pysmt.decoder.SystemRecipe` (``decode``, ``tune``, ``serve``).

Apart from what decoding does (:mod:`pysmt.decoding.command`), so that the command line is built without importing
the decoder.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, cast

import click

from pysmt.cli_options import CORE_INT, POSITIVE, flat_keywords, nested, option
from pysmt.config import SearchOverrides
from pysmt.files.markup import XML_INPUTS, XmlInput
from pysmt.shared_options import ALGORITHMS, CLUSTER, DECODING_THREADS, SEARCH, XML_INPUT

if TYPE_CHECKING:
    from pysmt.decoder import SystemRecipe


@dataclass(kw_only=True)
class SystemOptions:
    """The system a decoding command decodes with, as ``decode``, ``tune`` and ``serve`` are told it alike: a
    :func:`~pysmt.cli_options.nested` field of their options (``system``), declared here once. Its options are
    ``--search`` (where the field sits in each command's ``--help``) and, given by the command, the system's
    (``-c``, ``--features``, ``--param``: :func:`~pysmt.shared_options.system_options`, which ``filter``,
    ``binarize`` and ``rescore`` share) and the search settings (``--stack`` ... ``--weight-overwrite``:
    :func:`~pysmt.shared_options.search_setting_options`, after options of the command's own in some)."""

    config: Path
    features: list[str] = field(default_factory=list)
    #: ``FEATURE.key=value`` parameter settings (``--param``).
    params: list[str] = field(default_factory=list)
    search: str | None = field(default=None, metadata=SEARCH)
    #: The search settings given on the command line (``--stack`` ... ``--weight-overwrite``).
    search_settings: SearchOverrides = field(default_factory=SearchOverrides)


@flat_keywords("system")
@dataclass(kw_only=True)
class DecodeOptions:
    """Everything ``pysmt decode`` is told: the fields with an option in their metadata are its command-line options
    (:mod:`pysmt.cli_options`), in its ``--help``'s order, after the system's (``-c``, ``--features``, ``--param``);
    the search settings (``--stack`` ... ``--weight-overwrite``) come between ``--search`` (``system``'s) and
    ``--prepared``."""

    input_path: str | None = field(
        default=None,
        metadata=option(
            "-i", "--input", type=click.Path(exists=True, dir_okay=False), help="Input file (default: stdin)."
        ),
    )
    weights_path: str | None = field(
        default=None,
        metadata=option(
            "--weights",
            type=click.Path(exists=True, dir_okay=False),
            help="Weights in moses.ini [weight] syntax (Name= w1 w2 ...), overriding the config's.",
        ),
    )
    nbest_path: str | None = field(
        default=None,
        metadata=option(
            "--nbest",
            type=click.Path(dir_okay=False),
            help="Write an n-best list (Moses format); -: on stdout instead of the translations (Moses' -n-best-list "
            "-).",
        ),
    )
    nbest_size: int = field(
        default=100, metadata=option(type=POSITIVE, help="Entries per sentence in the n-best list.")
    )
    distinct: bool = field(
        default=False, metadata=option(is_flag=True, help="N-best list with distinct target strings only.")
    )
    alignment_path: str | None = field(
        default=None,
        metadata=option(
            "--alignment",
            type=click.Path(dir_okay=False),
            help="Write source-target word alignments of the best translations (Pharaoh format; -: on stdout, each "
            "after its translation). They count the model's tokens, as Moses' and the n-best list's do: on a system "
            "with [processing], the prepared input's and the translation's before it is restored (the "
            "--report-segmentation line's).",
        ),
    )
    threads: int = field(default=1, metadata=DECODING_THREADS)
    cluster: str | None = field(default=None, metadata=CLUSTER)
    system: SystemOptions = field(metadata=nested(SystemOptions))
    prepared: bool = field(
        default=False,
        metadata=option(
            is_flag=True,
            help="Input is already tokenized and truecased; output stays tokenized (skips [processing]).",
        ),
    )
    report_segmentation: bool = field(
        default=False,
        metadata=option(
            is_flag=True,
            help="After each phrase of the translation its source words, first and last from 0 (Moses' -t: "
            "'x y |0-1|'). The line is then the model's tokens.",
        ),
    )
    print_alignment_info: bool = field(
        default=False,
        metadata=option(
            is_flag=True,
            help="The word alignment after the translation on its line (Moses': 'x y ||| 0-0 1-1'). "
            "The line is then the model's tokens.",
        ),
    )
    sort_word_alignment: bool = field(
        default=False,
        metadata=option(
            is_flag=True,
            help="Word alignments (--alignment, --print-alignment-info) sorted by target position (Moses' "
            "-sort-word-alignment 1); default: Moses' order, phrase by phrase, each phrase's links by source position.",
        ),
    )
    mark_unknown: bool = field(
        default=False,
        metadata=option(is_flag=True, help="Prefix each unknown word passed through (Moses' -mark-unknown)."),
    )
    unknown_word_prefix: str = field(
        default="UNK",
        metadata=option(help="The prefix of --mark-unknown (Moses' -unknown-word-prefix)."),
    )
    drop_unknown: bool = field(
        default=False,
        metadata=option(
            is_flag=True,
            help="Leave unknown words out of the translation, its n-best entries and alignments (Moses' "
            "-drop-unknown; a word with a digit is kept).",
        ),
    )
    mbr: bool = field(
        default=False,
        metadata=option(
            is_flag=True,
            help="Minimum Bayes risk decoding (Moses' -mbr): of the n-best list's distinct translations, the one of "
            "least expected loss 1 - BLEU against the others, under the posterior exp(scale * model score).",
        ),
    )
    mbr_size: int | None = field(
        default=None,
        metadata=option(
            type=CORE_INT,
            help="The distinct translations MBR chooses among (Moses' -mbr-size).  [default: 200]",
        ),
    )
    mbr_scale: float | None = field(
        default=None,
        metadata=option(
            type=float, help="The model score's scale in MBR's posterior (Moses' -mbr-scale).  [default: 1]"
        ),
    )
    consensus_decoding: bool = field(
        default=False,
        metadata=option(
            is_flag=True,
            help="Consensus decoding (Moses' -consensus-decoding): the translation of highest BLEU against the "
            "expected n-gram counts of MBR's list (--mbr-size, --mbr-scale).",
        ),
    )
    quiet: bool = field(
        default=False,
        metadata=option(
            "--quiet",
            "-q",
            is_flag=True,
            help="Only errors and warnings on stderr: no progress bar, no messages.",
        ),
    )
    xml_input: str | None = field(default=None, metadata=XML_INPUT)
    xml_strict: bool = field(
        default=False,
        metadata=option(
            is_flag=True,
            help="A malformed tag stops the run with an error naming its line (default: a warning naming the line, "
            "which is translated as text, tags as words, as Moses does).",
        ),
    )
    constraint_path: str | None = field(
        default=None,
        metadata=option(
            "--constraint",
            type=click.Path(exists=True, dir_okay=False),
            help="Forced decoding (Moses' -constraint): only translations equal to this file's line survive (one "
            "target line per input line, as the output reads; model tokens with --prepared). A line no translation "
            "reaches gives an empty line and a warning.",
        ),
    )


def system_recipe(
    config: str | os.PathLike[str],
    features: Sequence[str],
    params: Sequence[str],
    weights: str | os.PathLike[str] | None,
    *,
    search: str | None,
    overrides: SearchOverrides,
    xml_input: str | None,
    missing_weight: float | None = None,
    markup_as_text: bool = False,
) -> SystemRecipe:
    """The recipe of a command's system options: ``--search`` and ``--xml-input`` as their options give them (one of
    their choices, which click checked, or None) become the recipe's algorithm and markup mode here, once for every
    command that decodes."""
    from pysmt.decoder import SystemRecipe

    if search is not None and search not in ALGORITHMS or xml_input is not None and xml_input not in XML_INPUTS:
        raise ValueError(f"--search {search!r} or --xml-input {xml_input!r} is none of the option's choices")
    return SystemRecipe(
        os.fspath(config),
        tuple(features),
        tuple(params),
        os.fspath(weights) if weights is not None else None,
        cast(Literal["normal", "cube"] | None, search),
        missing_weight,
        overrides=overrides,
        xml_input=cast(XmlInput | None, xml_input),
        markup_as_text=markup_as_text,
    )
