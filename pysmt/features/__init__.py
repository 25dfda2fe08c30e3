"""The feature-plugin contract (``base``), the registry (``registry``) and the built-in features."""
