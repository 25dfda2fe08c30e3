"""
pysmt's compiled core: KenLM queries, the built-in stateful features' twins, and the search
"""
from __future__ import annotations
import collections.abc
import numpy
import numpy.typing
import typing
__all__: list[str] = ['Algorithm', 'CompiledFeature', 'DeferredFeature', 'Derivations', 'DistortionTwin', 'KenLMTwin', 'LanguageModel', 'LexicalReorderingTwin', 'NbestRequest', 'OptionArrays', 'Orientation', 'ReorderingModel', 'SearchSettings', 'first_orientation', 'orientation', 'orientation_count', 'search']
class LanguageModel:
    """
    A KenLM model (ARPA or binary), loaded once and shared by both search engines
    """
    def __init__(self, path: str) -> None:
        ...
    def begin_state(self) -> bytes:
        """
        The sentence-start state
        """
    def estimate(self, words: collections.abc.Sequence[str]) -> float:
        """
        log p of a phrase without left context (natural log; KenLM's float accumulation)
        """
    def extend(self, state: bytes, words: collections.abc.Sequence[str]) -> tuple[float, bytes]:
        """
        (log p of the words after the state (natural log), the state after them)
        """
    def final(self, state: bytes) -> float:
        """
        log p of </s> after the state (natural log)
        """
    def ids(self, words: collections.abc.Sequence[str]) -> numpy.typing.NDArray[numpy.uint32]:
        """
        The words' ids in the model's vocabulary
        """
    @property
    def order(self) -> int:
        ...
class ReorderingModel:
    """
    The orientation classes of a lexicalized reordering model
    
    Members:
    
      msd
    
      mslr
    
      monotonicity
    
      leftright
    """
    __members__: typing.ClassVar[dict[str, ReorderingModel]]
    leftright: typing.ClassVar[ReorderingModel]
    monotonicity: typing.ClassVar[ReorderingModel]
    msd: typing.ClassVar[ReorderingModel]
    mslr: typing.ClassVar[ReorderingModel]
    @typing.overload
    def __eq__(self, other: ReorderingModel) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: ReorderingModel) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class Orientation:
    """
    Moses' ReorderingType values: a table row's column of each orientation
    
    Members:
    
      M
    
      S
    
      D
    
      DL
    
      DR
    
      NM
    
      R
    
      L
    """
    D: typing.ClassVar[Orientation]
    DL: typing.ClassVar[Orientation]
    DR: typing.ClassVar[Orientation]
    L: typing.ClassVar[Orientation]
    M: typing.ClassVar[Orientation]
    NM: typing.ClassVar[Orientation]
    R: typing.ClassVar[Orientation]
    S: typing.ClassVar[Orientation]
    __members__: typing.ClassVar[dict[str, Orientation]]
    @typing.overload
    def __eq__(self, other: Orientation) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: Orientation) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class CompiledFeature:
    """
    A stateful feature as the compiled search sees it
    """
    def set_weights(self, weights: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex]) -> None:
        ...
    @property
    def num_scores(self) -> int:
        ...
class KenLMTwin(CompiledFeature):
    """
    The KenLM feature's compiled twin
    """
    def __init__(self, model: LanguageModel) -> None:
        ...
    def set_options(self, ids: typing.Annotated[numpy.typing.ArrayLike, numpy.uint32], offsets: typing.Annotated[numpy.typing.ArrayLike, numpy.int64]) -> None:
        """
        Per sentence: option k's target words as LM ids are ids[offsets[k]:offsets[k + 1]]
        """
class DistortionTwin(CompiledFeature):
    """
    The distortion feature's compiled twin
    """
    def __init__(self) -> None:
        ...
class LexicalReorderingTwin(CompiledFeature):
    """
    The lexicalized reordering feature's compiled twin
    """
    def __init__(self, num_scores: typing.SupportsInt | typing.SupportsIndex, model: ReorderingModel, backward: bool, forward: bool, backward_slots: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], forward_slots: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], forward_table_offset: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def set_options(self, row_of_option: typing.Annotated[numpy.typing.ArrayLike, numpy.int32], rows: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        """
        Per sentence: each option's row of logged table scores (-1: none)
        """
class DeferredFeature(CompiledFeature):
    """
    A Python stateful feature, asked through its array interface a batch at a time
    """
    def __init__(self, calls: typing.Any, num_scores: typing.SupportsInt | typing.SupportsIndex, buffer_size: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def set_initial(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Per sentence: the empty hypothesis' state id
        """
class Algorithm:
    """
    The search algorithms
    
    Members:
    
      normal
    
      cube
    """
    __members__: typing.ClassVar[dict[str, Algorithm]]
    cube: typing.ClassVar[Algorithm]
    normal: typing.ClassVar[Algorithm]
    @typing.overload
    def __eq__(self, other: Algorithm) -> bool:
        ...
    @typing.overload
    def __eq__(self, other: typing.Any) -> bool:
        ...
    def __getstate__(self) -> int:
        ...
    def __hash__(self) -> int:
        ...
    def __index__(self) -> int:
        ...
    def __init__(self, value: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __int__(self) -> int:
        ...
    @typing.overload
    def __ne__(self, other: Algorithm) -> bool:
        ...
    @typing.overload
    def __ne__(self, other: typing.Any) -> bool:
        ...
    def __repr__(self) -> str:
        ...
    def __setstate__(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def __str__(self) -> str:
        ...
    @property
    def name(self) -> str:
        ...
    @property
    def value(self) -> int:
        ...
class SearchSettings:
    """
    The [search] settings the core uses
    """
    def __init__(self, *, algorithm: Algorithm, stack_size: typing.SupportsInt | typing.SupportsIndex, beam_threshold: typing.SupportsFloat | typing.SupportsIndex, pop_limit: typing.SupportsInt | typing.SupportsIndex, distortion_limit: typing.SupportsInt | typing.SupportsIndex, pops_per_round: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @property
    def algorithm(self) -> Algorithm:
        ...
    @property
    def beam_threshold(self) -> float:
        ...
    @property
    def distortion_limit(self) -> int:
        ...
    @property
    def pop_limit(self) -> int:
        ...
    @property
    def pops_per_round(self) -> int:
        ...
    @property
    def stack_size(self) -> int:
        ...
class OptionArrays:
    """
    One sentence's options: spans sorted by (start, end), each span's options best first
    """
    def __init__(self, *, length: typing.SupportsInt | typing.SupportsIndex, start: typing.Annotated[numpy.typing.ArrayLike, numpy.int32], end: typing.Annotated[numpy.typing.ArrayLike, numpy.int32], isolation: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], span_start: typing.Annotated[numpy.typing.ArrayLike, numpy.int32], span_end: typing.Annotated[numpy.typing.ArrayLike, numpy.int32], span_offsets: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], span_options: typing.Annotated[numpy.typing.ArrayLike, numpy.int32], future_table: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        ...
class NbestRequest:
    """
    What the n-best list needs: its size and every option's scores
    """
    def __init__(self, *, size: typing.SupportsInt | typing.SupportsIndex, budget: typing.SupportsInt | typing.SupportsIndex, distinct: bool, option_scores: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], stateful_columns: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], target_offsets: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], target_ids: typing.Annotated[numpy.typing.ArrayLike, numpy.int32]) -> None:
        ...
class Derivations:
    """
    The n-best derivations: derivation i applies options[offsets[i]:offsets[i + 1]], first to last, with model score score[i] and unweighted scores scores[i]
    """
    @property
    def offsets(self) -> numpy.typing.NDArray[numpy.int64]:
        ...
    @property
    def options(self) -> numpy.typing.NDArray[numpy.int32]:
        ...
    @property
    def score(self) -> numpy.typing.NDArray[numpy.float64]:
        ...
    @property
    def scores(self) -> numpy.typing.NDArray[numpy.float64]:
        ...
def first_orientation(model: ReorderingModel, start: typing.SupportsInt | typing.SupportsIndex) -> Orientation:
    """
    The orientation of a first phrase starting at `start` (the twin's; the Python feature's is the spec)
    """
def orientation(model: ReorderingModel, prev_start: typing.SupportsInt | typing.SupportsIndex, prev_end: typing.SupportsInt | typing.SupportsIndex, start: typing.SupportsInt | typing.SupportsIndex, end: typing.SupportsInt | typing.SupportsIndex) -> Orientation:
    """
    The orientation of [start, end) after [prev_start, prev_end) (the twin's; the Python feature's is the spec)
    """
def orientation_count(model: ReorderingModel) -> int:
    """
    How many orientations (columns per direction)
    """
def search(options: OptionArrays, settings: SearchSettings, features: collections.abc.Sequence[CompiledFeature], nbest: NbestRequest) -> Derivations:
    """
    Run normal search or cube pruning over one sentence's options; return its n-best derivations
    """
