"""The sentence model: the RNN Encoder-Decoder with attention (Bahdanau et al. 2014) over subword units,
trained on a system's prepared bitext, scoring complete translations to re-rank the decoder's n-best lists.

``subwords`` (the sentencepiece model), ``data`` (the bitext as subword ids), ``model`` (the network),
``training`` (``pysmt sentence train``), ``scoring`` (batched log p(e | f) of hypotheses), ``feature``
(the ``sentence`` and ``sentence-r2l`` features of complete translations), ``cli`` (``pysmt sentence``).
"""
