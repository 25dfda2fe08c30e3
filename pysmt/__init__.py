"""pysmt: phrase-based statistical machine translation with Moses-compatible models and feature plugins."""

__version__ = "0.1.0"
