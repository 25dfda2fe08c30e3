"""What ``pysmt decode`` does, callable from Python: :func:`decode` translates a text as :class:`DecodeOptions` say,
on local processes or a cluster, writing the translations, n-best list and alignments in input order."""

from __future__ import annotations

from functools import partial

from pysmt.decoder import text_processors
from pysmt.decoding.line_streams import STDOUT, OutputOptions, decode_file
from pysmt.decoding.mbr import MbrSettings
from pysmt.decoding.options import DecodeOptions, system_recipe
from pysmt.decoding.runner import translate_stream
from pysmt.errors import PysmtError
from pysmt.features.registry import system_inputs
from pysmt.files import progress
from pysmt.files.outputs import check_outputs, standard_inputs


def decode(o: DecodeOptions, chooser: MbrSettings | None = None) -> None:
    """Translate ``o.input_path`` (stdin when None) as ``o`` says; ``chooser``: MBR's or consensus decoding's choice
    from each n-best list (None: the best model score's translation). The outputs are checked against every input,
    the system's models included, before anything is decoded; a constraint file of another length than the input is
    an error."""
    progress.quiet = o.quiet  # no bar, and no model's loading messages
    best_line = o.nbest_path != "-"  # Moses' `-n-best-list -`: the n-best list alone on stdout, no 1-best lines
    nbest_path, alignment_path = (STDOUT if path == "-" else path for path in (o.nbest_path, o.alignment_path))
    outputs = {"--nbest": nbest_path, "--alignment": alignment_path}
    text = {"--input": o.input_path} if o.input_path else standard_inputs()
    check_outputs(outputs, {**text, "--config": o.system.config, "--weights": o.weights_path}, writes_stdout=True)
    constraints = constraint_lines(o.constraint_path, o.input_path)
    features, params = o.system.features, o.system.params
    if o.constraint_path:  # Moses' ConstrainedDecoding feature, reading the file (prepared as the target side)
        features = [*features, "constrained-decoding"]
        params = [
            *params,
            f"ConstrainedDecoding0.path={o.constraint_path}",
            f"ConstrainedDecoding0.prepared={o.prepared}",
        ]
    recipe = system_recipe(
        o.system.config,
        features,
        params,
        o.weights_path,
        search=o.system.search,
        overrides=o.system.search_settings,
        xml_input=o.xml_input,
        markup_as_text=not o.xml_strict,
    )
    config = recipe.configure()
    check_outputs(outputs, system_inputs(config), writes_stdout=True)
    shown = OutputOptions(
        o.report_segmentation,
        o.print_alignment_info,
        o.mark_unknown,
        o.unknown_word_prefix,
        o.drop_unknown,
        o.sort_word_alignment,
    )
    target_text = text_processors(config.processing)[1] if shown and not o.prepared else None
    text_of = partial(
        decode_file,
        input_path=o.input_path,
        nbest_path=nbest_path,
        nbest_size=o.nbest_size,
        distinct=o.distinct,
        alignment_path=alignment_path,
        best_line=best_line,
        process=not o.prepared,
        shown=shown,
        restore=target_text.restore if target_text else None,
        mbr=chooser,
    )
    if o.cluster:
        from pysmt.decoding.cluster import Cluster  # Ray loads only for --cluster

        with Cluster(o.cluster, recipe) as workers:
            done = text_of(workers.translate, workers.labels)
            if not o.quiet:
                workers.log(f"done: {workers.where()}")
    else:
        decoder = recipe.build(config)
        done = text_of(partial(translate_stream, decoder, threads=o.threads), decoder.nbest_labels())
    if constraints is not None and done != constraints:
        raise PysmtError(f"--constraint {o.constraint_path} has {constraints:,} lines, the input {done:,}")


def constraint_lines(constraint_path: str | None, input_path: str | None) -> int | None:
    """The lines of ``decode --constraint``'s file (None without one), checked against an input file's before anything
    loads (stdin's are counted as it is decoded)."""
    if constraint_path is None:
        return None
    from pysmt.files.textio import count_lines

    constraints = count_lines(constraint_path)
    if input_path is not None and (lines := count_lines(input_path)) != constraints:
        raise PysmtError(f"--constraint {constraint_path} has {constraints:,} lines, --input {input_path} {lines:,}")
    return constraints
