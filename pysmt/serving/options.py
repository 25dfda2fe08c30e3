"""What ``pysmt serve`` is told: :class:`ServeOptions`, whose fields are also its command-line options."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import click

from pysmt.cli_options import POSITIVE, flat_keywords, nested, option
from pysmt.decoding.options import SystemOptions
from pysmt.running.memory_budget import MemorySize
from pysmt.shared_options import XML_INPUT

#: Every address of this machine: serving beyond it must be asked for (``--host 0.0.0.0``).
LOOPBACK = "127.0.0.1"


@flat_keywords("system")
@dataclass(kw_only=True)
class ServeOptions:
    """Everything ``pysmt serve`` is told: the fields with an option in their metadata are its command-line
    options (:mod:`pysmt.cli_options`), in its ``--help``'s order, after the system's (``-c``,
    ``--features``, ``--param``)."""

    weights: Path | None = field(
        default=None,
        metadata=option(
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            help="Weights in moses.ini [weight] syntax (Name= w1 w2 ...), overriding the config's.",
        ),
    )
    #: The system every worker loads, and its search (``--search``; the search settings, given on the command line
    #: after serve's own options, are every worker's).
    system: SystemOptions = field(metadata=nested(SystemOptions))
    prepared: bool = field(
        default=False,
        metadata=option(
            is_flag=True, help="Requests are already tokenized and truecased (as `decode --prepared`): no processing."
        ),
    )
    #: How markup in a request's text is read (as mosesserver run with ``-xml-input``).
    xml_input: str = field(default="pass-through", metadata=XML_INPUT)
    host: str = field(
        default=LOOPBACK,
        metadata=option(help="Address to listen on (0.0.0.0: every interface; only on a network you trust)."),
    )
    port: int = field(
        default=8080,
        metadata=option(type=click.IntRange(0, 65535), help="Port to listen on (0: any free one, said at start-up)."),
    )
    workers: int = field(
        default=1,
        metadata=option(
            type=POSITIVE,
            help="Decoding processes, each with the system loaded once (binarized tables are "
            "memory-mapped, so they share its pages).",
        ),
    )
    nbest_size: int = field(
        default=1,
        metadata=option(
            type=POSITIVE,
            help="N-best entries per sentence of the JSON interface (a request's n_best may ask for "
            "others, up to --max-nbest).",
        ),
    )
    max_nbest: int = field(
        default=1000, metadata=option(type=POSITIVE, help="The longest n-best list a request may ask for.")
    )
    max_request_bytes: int = field(
        default=1 << 20,
        metadata=option(
            "--max-request-size",
            type=MemorySize(minimum=1 << 10, what="request size"),
            default="1M",
            help="The largest request body (e.g. 64K, 1M).",
        ),
    )
    max_sentences: int = field(
        default=100, metadata=option(type=POSITIVE, help="The most sentences one request may hold.")
    )
    max_words: int = field(
        default=200,
        metadata=option(
            type=POSITIVE, help="The longest sentence a request may hold, in words (split at white space)."
        ),
    )
    timeout: float = field(
        default=60.0,
        metadata=option(
            type=click.FloatRange(min=0, min_open=True),
            help="Seconds a request may take before it is answered with an error (504, or a fault); also the time "
            "SIGTERM gives the requests in flight: the server exits by then, whatever its clients do.",
        ),
    )
    read_timeout: float = field(
        default=10.0,
        metadata=option(
            type=click.FloatRange(min=0, min_open=True),
            help="Seconds a client has to send a request's head (counted from connecting or from its previous answer: "
            "an idle connection is closed then), and then its body (else 408); a stalled connection is closed.",
        ),
    )
    write_timeout: float = field(
        default=60.0,
        metadata=option(
            type=click.FloatRange(min=0, min_open=True),
            help="Seconds a client may leave its answer unread (no byte of it taken, as nginx's send_timeout): "
            "then its connection is closed and the answer dropped.",
        ),
    )
    max_connections: int = field(
        default=256,
        metadata=option(
            type=POSITIVE,
            help="Connections held at once; beyond them a new connection is answered 503 at once and closed.",
        ),
    )
    max_pending: int = field(
        default=10_000,
        metadata=option(
            type=POSITIVE, help="Sentences waiting for a worker beyond which new requests are turned away (503)."
        ),
    )
    model_id: int = field(default=0, metadata=option(help="The JSON interface's model id (OpenNMT's `id`)."))
