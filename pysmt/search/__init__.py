"""The phrase-based stack decoder: options, future cost, hypotheses, stacks, normal and cube-pruning search, n-best;
the compiled core's Python side; and the one seam through which the decoder calls either engine (``engine``)."""
