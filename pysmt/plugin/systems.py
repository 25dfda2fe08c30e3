"""A trained system as pysmt reads it, for a plugin that works on one outside the decoder (training
pairs drawn from its tables, a model that translates as it prepares text): its config
(:func:`load_config`), its phrase table (:class:`PhraseTable`: a Moses text table or a binary table's
folder, whose stored scores lie in its subfolder ``STORED``), the text preparation it was trained with
(:func:`text_processors`), and its phrase table cut down to the phrases of an input
(:func:`input_phrases`, :func:`filter_table`).

Imports the decoder and pysmt's compiled core: import it where it is used, inside a function."""

from pysmt.config_files import load_config
from pysmt.decoder import text_processors
from pysmt.filtering import filter_table, input_phrases
from pysmt.models.binary_table import STORED
from pysmt.models.phrase_table import PhraseTable

__all__ = ["STORED", "PhraseTable", "filter_table", "input_phrases", "load_config", "text_processors"]
