"""``pysmt decode`` and the streams every decoding command shares: what decode is told (``options``: also the system
``tune`` and ``serve`` decode with) and what it does (``command``); lines read and written in input order
(``line_streams``), on local processes (``runner``) or on a Ray cluster (``cluster``, ``--cluster``); MBR's choice
from an n-best list (``mbr``)."""
