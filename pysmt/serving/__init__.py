"""``pysmt serve``: a system behind HTTP, for Moses' XML-RPC clients and OpenNMT-style JSON clients.

``options`` is what the command is told; ``workers`` the decoding processes and how sentences reach
them; ``moses_xmlrpc`` and ``json_api`` the two protocols; ``server`` the HTTP server (aiohttp) that
ties them together. aiohttp and defusedxml come with the optional extra ``pysmt-mt[serve]``.
"""
