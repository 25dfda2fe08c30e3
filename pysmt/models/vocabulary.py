"""Integer encoding of words, so large tables hold int32 arrays instead of Python strings."""

from __future__ import annotations


class Vocabulary:
    """A growing bijection between words and dense integer ids (0, 1, 2, ...)."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.words: list[str] = []

    def add(self, word: str) -> int:
        """The id of ``word``, assigning the next free one if it is new."""
        wid = self.ids.get(word)
        if wid is None:
            wid = len(self.words)
            self.ids[word] = wid
            self.words.append(word)
        return wid

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        return word in self.ids
