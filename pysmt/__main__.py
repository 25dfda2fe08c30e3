"""``python -m pysmt``: the ``pysmt`` command, for environments where its script is not on the PATH."""

from pysmt.cli import main

main(prog_name="pysmt")
