"""``pysmt experiment``: the paper's Table 1 (Cho et al. 2014) reproduced in one resumable command.

``cli`` is the command, ``options`` what it is told; ``chain`` runs the stages (data, system, RNN,
CSLM, MERT per configuration and seed, decoding, analyses, scores), ``stages`` makes each one
resumable and measured, ``scoring`` and ``report`` turn the outputs into ``results.json`` and
``report.md``, ``run_folder`` says where the outputs are, ``settings`` holds the configurations and
the scales.
"""
