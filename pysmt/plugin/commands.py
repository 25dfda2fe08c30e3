"""A plugin's own commands (``pysmt rnn``, ``pysmt cslm``), made as pysmt makes its: click options
declared once on a dataclass's fields (:func:`option` in a field's metadata, :data:`POSITIVE` counts;
:func:`options_of` puts them on a command, :func:`from_command` builds the dataclass back from what
was given), and torch's threads (:func:`threads_option` for ``--threads``, :func:`use_training_threads`
to apply it).

Imports no compiled code, as :mod:`pysmt.plugin.neural`."""

from pysmt.cli_options import POSITIVE, from_command, option, options_of
from pysmt.running.torch_threads import threads_option, use_training_threads

__all__ = ["POSITIVE", "from_command", "option", "options_of", "threads_option", "use_training_threads"]
