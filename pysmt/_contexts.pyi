"""
Numbered n-gram contexts: the states of an n-gram feature written as a plugin (pysmt.plugin.ContextTable)
"""
from __future__ import annotations
import numpy
import numpy.typing
import typing
__all__: list[str] = ['ContextTable']
class ContextTable:
    """
    Every distinct context of `width` word ids, numbered in order of arrival
    """
    def __init__(self, width: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __len__(self) -> int:
        ...
    def clear(self) -> None:
        """
        Forget every context
        """
    def contexts(self, ids: typing.Annotated[numpy.typing.ArrayLike, numpy.int64]) -> numpy.typing.NDArray[numpy.int32]:
        """
        The word ids of contexts (n x width)
        """
    def extend(self, states: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], words: typing.Annotated[numpy.typing.ArrayLike, numpy.int32], lengths: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], ends: typing.Annotated[numpy.typing.ArrayLike, numpy.bool], end_word: typing.SupportsInt | typing.SupportsIndex) -> tuple:
        """
        (context ids, words, request of each n-gram) of the requests' n-grams, their new states, and the contexts used for the first time
        """
    def intern(self, contexts: typing.Annotated[numpy.typing.ArrayLike, numpy.int32]) -> numpy.typing.NDArray[numpy.int64]:
        """
        The ids of contexts (n x width word ids), numbering new ones
        """
    @property
    def width(self) -> int:
        ...
