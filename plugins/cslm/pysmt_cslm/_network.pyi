"""
The CSLM's compiled forward pass and compiled scorer (see pysmt_cslm/scoring.py, features.py)
"""
from __future__ import annotations
import collections.abc
import numpy
import numpy.typing
import typing
import typing_extensions
__all__: list[str] = ['CompiledCslm', 'HiddenStore', 'Network', 'kernel_versions']
class Network:
    """
    The CSLM's weights, as the decoder's forward pass uses them
    """
    def __init__(self, first: typing.Annotated[numpy.typing.ArrayLike, numpy.float32], width: typing.SupportsInt | typing.SupportsIndex, w2t: typing.Annotated[numpy.typing.ArrayLike, numpy.float32], b2: typing.Annotated[numpy.typing.ArrayLike, numpy.float32], w3: typing.Annotated[numpy.typing.ArrayLike, numpy.float32], b3: typing.Annotated[numpy.typing.ArrayLike, numpy.float32]) -> None:
        ...
    def hidden(self, contexts: typing.Annotated[numpy.typing.ArrayLike, numpy.int32], version: str = '') -> numpy.typing.NDArray[numpy.float32]:
        """
        h2 (float32, n x hidden) of contexts (n x width word ids), by the inner loops of `version` (one of
        kernel_versions(); empty: the fastest), which all give the same numbers
        """
    def logits(self, hidden: typing.Annotated[numpy.typing.ArrayLike, numpy.float32], words: typing.Annotated[numpy.typing.ArrayLike, numpy.int64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        W3[w] . h2 + b3[w] (float64) for each row of hidden and its word
        """
class HiddenStore:
    """
    The hidden layers of numbered contexts (a ContextTable's numbers)
    """
    def __init__(self, network: Network) -> None:
        ...
    def compute(self, ids: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], contexts: typing.Annotated[numpy.typing.ArrayLike, numpy.int32]) -> None:
        """
        Compute and keep the hidden layers of contexts (n x width) as ids
        """
    def rows(self, ids: typing.Annotated[numpy.typing.ArrayLike, numpy.int64]) -> numpy.typing.NDArray[numpy.float32]:
        """
        The kept hidden layers of context ids (a copy)
        """
    def sums(self, rows: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], words: typing.Annotated[numpy.typing.ArrayLike, numpy.int32], owners: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], requests: typing.SupportsInt | typing.SupportsIndex, minus: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> numpy.typing.NDArray[numpy.float64]:
        """
        Per request, its n-grams' logits minus `minus`, summed in order
        """
class CompiledCslm:
    """
    The CSLM as a compiled scorer for pysmt's search (self-normalized scores; see _scorer.hpp)
    """
    def __init__(self, *, network: Network, words: collections.abc.Sequence[str], ids: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], backoff: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], unknown_id: typing.SupportsInt | typing.SupportsIndex, unseen: typing.SupportsFloat | typing.SupportsIndex, begin_id: typing.SupportsInt | typing.SupportsIndex, end_id: typing.SupportsInt | typing.SupportsIndex, cache_size: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def capsule(self) -> typing_extensions.CapsuleType:
        """
        The scorer as pysmt's search takes it: a PyCapsule named pysmt.compiled_scorer
        """
    @property
    def computed(self) -> int:
        """
        Contexts put through the network so far
        """
    @property
    def coverage(self) -> tuple[int, int]:
        """
        The first sentence's option words (the first with ten or more) and how many the shortlist has; (0, 0) until then
        """
    @property
    def ngrams(self) -> int:
        """
        N-grams scored so far
        """
    @property
    def requests(self) -> int:
        """
        Requests scored so far
        """
def kernel_versions() -> list[str]:
    """
    The versions of the hidden layers' inner loops this processor runs, fastest first
    """
