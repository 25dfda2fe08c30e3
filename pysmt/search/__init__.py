"""The phrase-based stack decoder: options, future cost, hypotheses, stacks, normal and cube-pruning search, n-best."""
