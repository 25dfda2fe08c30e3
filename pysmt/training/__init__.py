"""The training pipeline: a raw bitext turned into a Moses-compatible system (``pysmt train``)."""
