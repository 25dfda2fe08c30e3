"""pysmt-cslm: a continuous-space 7-gram language model as a pysmt decoder feature (``cslm``) and ``pysmt cslm``."""
