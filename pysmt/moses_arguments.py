"""Moses' single-dash spellings of ``decode``'s options (``-config``, ``-threads``, ``-n-best-list FILE N distinct``),
read as the pysmt options they are (docs/tutorials/moses-users.md).

A Moses command line then works as it is: ``pysmt decode -f moses.ini -threads 4 -n-best-list nbest.txt 100``. Click
alone would read ``-config`` as ``-c onfig`` (``File 'onfig' does not exist``) and ``-threads`` as no option, so the
arguments are translated before click parses them (:class:`MosesCommand`). Only whole arguments that are options
are translated: a value (``--weight-overwrite '-stack'``) and whatever follows ``--`` stay as they are.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import click

#: Moses' options that are pysmt's under another name; their values follow as they are.
RENAMED = {
    "-config": "--config",
    "-f": "--config",
    "-input-file": "--input",
    "-weight-file": "--weights",
    "-weight-overwrite": "--weight-overwrite",
    "-stack": "--stack",
    "-s": "--stack",
    "-cube-pruning-pop-limit": "--pop-limit",
    "-beam-threshold": "--beam-threshold",
    "-b": "--beam-threshold",
    "-distortion-limit": "--distortion-limit",
    "-max-phrase-length": "--max-phrase-length",
    "-ttable-limit": "--table-limit",
    "-threads": "--threads",
    "-alignment-output-file": "--alignment",
    "-report-segmentation": "--report-segmentation",
    "-t": "--report-segmentation",
    "-print-alignment-info": "--print-alignment-info",
    "-mark-unknown": "--mark-unknown",
    "-unknown-word-prefix": "--unknown-word-prefix",
    "-drop-unknown": "--drop-unknown",
    "-mbr": "--mbr",
    "-mbr-size": "--mbr-size",
    "-mbr-scale": "--mbr-scale",
    "-consensus-decoding": "--consensus-decoding",
    "-constraint": "--constraint",
    "-xml-input": "--xml-input",
}

#: ``-search-algorithm``'s values and ``--search``'s.
SEARCH_ALGORITHMS = {"0": "normal", "1": "cube"}

#: Moses' options that pysmt does not offer, and what to give instead.
NOT_OFFERED = {"-lmbr": "lattice MBR is not offered: give --mbr or --consensus-decoding"}

#: Every option of Moses' decoder (moses/Parameter.cpp's AddParam names and abbreviations): one pysmt does not read
#: is answered as Moses', not as click would read it (``-context-string`` as ``-c ontext-string``).
MOSES_OPTIONS = frozenset(
    """
    I T Tall Ttree alignment-output-file alternate-weight-setting always-create-direct-transopt aws b beam-threshold
    bl cbd cbds cbls cbp clean-lm-cache con config consensus-decoding context-string context-weights context-window
    continue-partial-translation cpt cube-pruning-deterministic-search cube-pruning-diversity
    cube-pruning-lazy-scoring cube-pruning-pop-limit d da daemon dd decoding-graph-backoff
    default-non-term-for-empty-range-only description disable-discarding distortion distortion-file distortion-limit
    dl dlm dlm-model dpb drop-unknown du e early-discarding-threshold early-distortion-cost edc edt f
    factor-delimiter fd feature feature-add feature-name-overwrite feature-overwrite g generation-file gl glm
    glm-feature global-lexical-file i include-lhs-in-search-graph include-segmentation-in-n-best input-factors
    input-file input-scores inputtype labeled-n-best-list lattice-hypo-set lattice-samples lex lhssg
    link-param-count lm lmbr lmbr-map-weight lmbr-p lmbr-pruning-factor lmbr-r lmbr-thetas lminimum-bayes-risk
    lmodel-dub lmodel-file lmodel-oov-feature lr mapping mark-unknown max-chart-span max-partial-trans-opt
    max-phrase-length max-trans-opt-per-coverage mbr mbr-scale mbr-size minimum-bayes-risk minlexr-memory
    minphr-memory mira monotone-at-punctuation mp mu n-best-factor n-best-list n-best-list-file n-best-list-size
    n-best-trees no-cache non-terminals osg osgx output-factors output-hypo-score output-search-graph
    output-search-graph-extended output-search-graph-hypergraph output-search-graph-pb output-search-graph-slf
    output-unknowns output-word-graph owg pb phrase-boundary-source-feature phrase-boundary-target-feature
    phrase-drop-allowed phrase-length-feature phrase-pair-feature placeholder-factor pp print-alignment-info
    print-alignment-info-in-n-best print-all-derivations print-id print-passthrough print-passthrough-in-n-best r
    recover-input-path references report-all-factors report-all-factors-in-n-best report-segmentation
    report-segmentation-enriched rule-limit s s2t-parsing-algorithm sd segment-time-out serial server
    server-keepalive-maxconn server-keepalive-timeout server-log server-maxconn server-maxconn-backlog server-port
    server-timeout session-timeout show-weights slf slm slmodel-beam slmodel-factor slmodel-file sort-word-alignment
    source-label-overlap source-word-deletion-feature spe-aln spe-src spe-trg stack stack-diversity
    start-translation-id t target-word-insertion-feature text-type th threads time-out tm tot
    translation-all-details translation-details translation-option-threshold tree-translation-details tt ttable-file
    u unknown-lhs unknown-word-prefix unknown-word-suffix unpruned-search-graph usg v verbose version w weight
    weight-add weight-bl weight-d weight-dlm weight-e weight-file weight-generation weight-glm weight-i weight-l
    weight-lex weight-lr weight-overwrite weight-p weight-pb weight-pp weight-slm weight-t weight-u weight-w
    weight-wt wf word-translation-feature wt xb xi xml-brackets xml-input
    """.split()
)


def moses_arguments(args: Sequence[str], value_options: set[str], known: frozenset[str] = frozenset()) -> list[str]:
    """``args`` with Moses' spellings of options made pysmt's; ``value_options`` are the command's options that take
    a value (the argument after one is its value, never an option), ``known`` all its options' names. A Moses option
    given wrong (``-n-best-list`` without its size), or one pysmt does not read, is a usage error naming it."""
    out: list[str] = []
    k = 0
    while k < len(args):
        arg = args[k]
        if arg == "--":
            return [*out, *args[k:]]
        if arg in NOT_OFFERED:
            raise click.UsageError(f"Moses' {arg}: {NOT_OFFERED[arg]}")
        pysmt, used = moses_option(arg, args[k + 1 :], value_options)
        if pysmt is None and arg[1:] in MOSES_OPTIONS and arg not in known | value_options:
            raise click.UsageError(
                f"Moses' {arg}: pysmt decode does not offer it "
                "(docs/tutorials/moses-users.md: the Moses options it reads)"
            )
        if pysmt is None:  # not Moses': as it is, with its value
            used = 1 if arg in value_options else 0
            pysmt = [arg, *args[k + 1 : k + 1 + used]]
        out += pysmt
        k += 1 + used
    return out


def moses_option(arg: str, following: Sequence[str], value_options: set[str]) -> tuple[list[str] | None, int]:
    """The pysmt arguments of the Moses option ``arg`` and how many of the ``following`` arguments it took as its
    values, or (None, 0) when ``arg`` is no Moses option."""
    if arg == "-threads" and following and following[0] == "all":  # Moses': one thread per CPU
        return ["--threads", str(os.cpu_count() or 1)], 1
    if arg in RENAMED:  # a value follows as it is
        taken = 1 if RENAMED[arg] in value_options else 0
        return [RENAMED[arg], *following[:taken]], taken
    if arg == "-n-best-list":  # FILE N [distinct]
        if len(following) < 2 or not following[1].isdigit():
            raise click.UsageError("Moses' -n-best-list takes FILE N [distinct] (pysmt: --nbest FILE --nbest-size N)")
        distinct = len(following) > 2 and following[2] == "distinct"
        pysmt = ["--nbest", following[0], "--nbest-size", following[1]]
        return [*pysmt, "--distinct"] if distinct else pysmt, 2 + distinct
    if arg == "-search-algorithm":
        if not following or following[0] not in SEARCH_ALGORITHMS:
            raise click.UsageError(
                f"Moses' -search-algorithm {' '.join(following[:1])}: pysmt offers 0 (--search normal) and 1 "
                "(--search cube)"
            )
        return ["--search", SEARCH_ALGORITHMS[following[0]]], 1
    if arg == "-sort-word-alignment":  # 0: Moses' order (pysmt's default), 1: by target position
        if not following or following[0] not in ("0", "1"):
            raise click.UsageError("Moses' -sort-word-alignment takes 0 (Moses' order) or 1 (--sort-word-alignment)")
        return (["--sort-word-alignment"] if following[0] == "1" else []), 1
    if arg in ("-verbose", "-v"):  # 0: errors and warnings only; Moses' other levels are pysmt's default
        if not following or not following[0].isdigit():
            raise click.UsageError(f"Moses' {arg} takes a level (0: pysmt's --quiet)")
        return (["--quiet"] if following[0] == "0" else []), 1
    return None, 0


class MosesCommand(click.Command):
    """A click command that also reads Moses' spellings of its options (:func:`moses_arguments`)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        options = [param for param in self.get_params(ctx) if isinstance(param, click.Option)]
        value_options = {name for param in options if not param.is_flag and param.nargs > 0 for name in param.opts}
        known = frozenset(name for param in options for name in param.opts)
        return super().parse_args(ctx, moses_arguments(args, value_options, known))
