"""Decoding streams of lines: read and written in input order (``line_streams``), on local processes (``runner``)
or on a Ray cluster (``cluster``, ``--cluster``)."""
