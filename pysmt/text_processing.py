"""Raw text to model tokens and back, as the Moses baseline does it with sacremoses: normalize,
tokenize, truecase; and detruecase, detokenize.

The preparation ``pysmt train`` applied to its corpus is stored in the system (``[processing]``) and
applied by ``pysmt decode`` to raw input, and its inverse to the output, so users give and get raw
text. ``|`` is the one character Moses' file formats reserve that a token may contain; it is escaped
as ``&#124;`` (as Moses' tokenizer escapes it) in prepared text and restored on output.
"""

from __future__ import annotations

from pathlib import Path

from sacremoses import MosesDetokenizer, MosesDetruecaser, MosesPunctNormalizer, MosesTokenizer, MosesTruecaser

PIPE = "|"
PIPE_ESCAPE = "&#124;"


def escape_pipes(text: str) -> str:
    return text.replace(PIPE, PIPE_ESCAPE)


def unescape_pipes(text: str) -> str:
    return text.replace(PIPE_ESCAPE, PIPE)


class TextProcessor:
    """One language's preparation: raw text to model tokens (``prepare``) and back (``restore``).

    ``tokenize=False`` is for text that is already tokenized and cased as wanted: only ``|`` is
    escaped. Without a truecase model, casing is left alone.
    """

    def __init__(self, lang: str, truecase_model: str | Path | None = None, tokenize: bool = True) -> None:
        self.lang = lang
        self.tokenize = tokenize
        self.normalizer = MosesPunctNormalizer(lang=lang)
        self.tokenizer = MosesTokenizer(lang=lang)
        self.detokenizer = MosesDetokenizer(lang=lang)
        self.truecaser = MosesTruecaser(load_from=str(truecase_model)) if truecase_model else None
        self.detruecaser = MosesDetruecaser()

    def tokens(self, line: str) -> str:
        """Normalized, tokenized text (no truecasing), pipes escaped."""
        if not self.tokenize:
            return escape_pipes(" ".join(line.split()))
        normalized = self.normalizer.normalize(line)
        return escape_pipes(" ".join(self.tokenizer.tokenize(normalized, escape=False)))

    def truecase(self, text: str) -> str:
        """Truecase tokenized text (unchanged without a truecase model)."""
        if self.truecaser is not None and text:
            return self.truecaser.truecase(text, return_str=True)
        return text

    def prepare(self, line: str) -> str:
        """Raw text to the tokens the models were trained on."""
        return self.truecase(self.tokens(line))

    def restore(self, line: str) -> str:
        """Model tokens back to raw text: detruecase and detokenize (only unescape when not tokenizing)."""
        if not self.tokenize:
            return unescape_pipes(line)
        tokens = [unescape_pipes(t) for t in line.split()]
        if self.truecaser is not None and tokens:
            tokens = self.detruecaser.detruecase(" ".join(tokens))
        return self.detokenizer.detokenize(tokens)
