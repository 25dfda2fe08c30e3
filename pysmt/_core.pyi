"""
pysmt's compiled core: tables, KenLM queries, option building, the built-in features' twins, the search
"""
from __future__ import annotations
import collections.abc
import numpy
import numpy.typing
import typing
import typing_extensions
__all__: list[str] = ['Algorithm', 'BuiltOptions', 'CompiledFeature', 'DeferredFeature', 'Derivations', 'DistortionTwin', 'FeatureFault', 'IsolationScores', 'KenLMTwin', 'LanguageModel', 'LanguageModelEstimates', 'LexicalReorderingTwin', 'MARKUP_TABLE', 'MarkupPolicy', 'NbestRequest', 'OptionBuilder', 'Orientation', 'PhrasePenaltyScores', 'PhraseTableView', 'ReorderingModel', 'ReorderingTableView', 'SearchSettings', 'StringIndex', 'UNKNOWN_TABLE', 'UnknownWordScores', 'WordPenaltyScores', 'WordScores', 'first_orientation', 'orientation', 'orientation_count', 'search']
class StringIndex:
    """
    Strings in one UTF-8 blob with a hash index (a table's sources, keys, words): built here by add(), or a view of a binary table's arrays
    """
    def __contains__(self, text: typing.Any) -> bool:
        ...
    def __getitem__(self, index: typing.SupportsInt | typing.SupportsIndex) -> str:
        ...
    @typing.overload
    def __init__(self) -> None:
        ...
    @typing.overload
    def __init__(self, *, blob: typing.Annotated[numpy.typing.ArrayLike, numpy.uint8], offsets: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], slots: typing.Annotated[numpy.typing.ArrayLike, numpy.uint32]) -> None:
        """
        A view of stored strings: `slots` is their hash index (binary_table.py's format), or empty when they are sorted by their bytes
        """
    def __iter__(self) -> collections.abc.Iterator:
        ...
    def __len__(self) -> int:
        ...
    def add(self, text: str) -> int:
        """
        The index of `text`, added if new
        """
    def add_all(self, texts: collections.abc.Sequence) -> list[int]:
        """
        The indices of `texts`, each added if new
        """
    def find(self, text: str) -> int:
        """
        The index of `text`, or -1
        """
    def first_not_utf8(self) -> int:
        """
        The index of the first string that is not UTF-8 (encoded surrogates allowed, as they are read), or -1
        """
    def get(self, text: str, default: typing.Any = None) -> typing.Any:
        """
        The index of `text`, or `default` (a dict's get)
        """
    @property
    def memory(self) -> int:
        """
        Bytes held by strings built here (0 for a view)
        """
class PhraseTableView:
    """
    A phrase table's arrays as the compiled option builder reads them
    """
    def __init__(self, *, sources: StringIndex, vocabulary: StringIndex, alignments: StringIndex, block_start: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], target_start: typing.Annotated[numpy.typing.ArrayLike, numpy.int64], target_len: typing.Annotated[numpy.typing.ArrayLike, numpy.int32], target_ids: typing.Annotated[numpy.typing.ArrayLike, numpy.int32], scores: typing.Annotated[numpy.typing.ArrayLike, numpy.float32], alignment_id: typing.Annotated[numpy.typing.ArrayLike, numpy.int32]) -> None:
        ...
class ReorderingTableView:
    """
    A reordering table's keys and logged scores, as the twin reads them
    """
    def __init__(self, *, keys: StringIndex, scores: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        ...
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
    @property
    def queries(self) -> int:
        """
        Words asked of KenLM so far
        """
    @property
    def words(self) -> int:
        """
        Words scored so far: asked of KenLM, or taken from the sentence's (state, phrase) cache
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
    def __init__(self, num_scores: typing.SupportsInt | typing.SupportsIndex, model: ReorderingModel, backward: bool, forward: bool, backward_slots: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], forward_slots: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], forward_table_offset: typing.SupportsInt | typing.SupportsIndex, table: ReorderingTableView, source_only: bool, default_scores: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex]) -> None:
        ...
class IsolationScores:
    """
    A context-free feature's scores in isolation, computed by the compiled option builder
    """
    @property
    def num_scores(self) -> int:
        ...
class WordPenaltyScores(IsolationScores):
    """
    Minus the number of target words
    """
    def __init__(self) -> None:
        ...
class PhrasePenaltyScores(IsolationScores):
    """
    1 per phrase pair
    """
    def __init__(self) -> None:
        ...
class UnknownWordScores(IsolationScores):
    """
    `value` for an unknown word passed through, 0 for a phrase pair
    """
    def __init__(self, value: typing.SupportsFloat | typing.SupportsIndex) -> None:
        ...
class WordScores(IsolationScores):
    """
    A score, or with estimate=True an estimate, that sums a value per target word (`fallback` for words not listed), in word order from 0: a plugin's per-word feature computed by the option builder
    """
    def __init__(self, *, words: collections.abc.Sequence, values: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex], fallback: typing.SupportsFloat | typing.SupportsIndex, estimate: bool) -> None:
        ...
class LanguageModelEstimates(IsolationScores):
    """
    The KenLM feature's estimate of a phrase: its log probability without left context
    """
    def __init__(self, model: LanguageModel) -> None:
        ...
class FeatureFault(RuntimeError):
    pass
class DeferredFeature(CompiledFeature):
    """
    A plugin's stateful feature, asked a batch at a time: through its array interface in Python, or through the compiled scorer it offers (include/pysmt/compiled_scorer.h), whose faults are FeatureFaults naming it
    """
    @typing.overload
    def __init__(self, calls: typing.Any, num_scores: typing.SupportsInt | typing.SupportsIndex, buffer_size: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    @typing.overload
    def __init__(self, *, scorer: typing_extensions.CapsuleType, name: str, buffer_size: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def set_initial(self, state: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        Per sentence: the empty hypothesis' state id
        """
class BuiltOptions:
    """
    One sentence's translation options as the compiled option builder made them (see pysmt/phrases.py's SentenceOptions): spans by start then end, each span's options best first
    """
    def __len__(self) -> int:
        ...
    def add_contextual(self, scores: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], isolation: typing.Annotated[numpy.typing.ArrayLike, numpy.float64], future: typing.Annotated[numpy.typing.ArrayLike, numpy.float64]) -> None:
        """
        Add per-sentence features' scores (options x the model's width) and their weighted sums, then sort each span's options best first again
        """
    def alignment(self, option: typing.SupportsInt | typing.SupportsIndex) -> str:
        """
        The word alignment inside an option's pair (Moses' i-j pairs)
        """
    def set_reordering(self, *, walls: collections.abc.Sequence[bool], local_walls: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], zone_first: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], zone_last: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        """
        The markup's reordering constraints (pysmt/search/reordering_constraint.py): a wall after each word, the zone whose local wall each word is (-1: none), each zone's first and last word
        """
    def target(self, option: typing.SupportsInt | typing.SupportsIndex) -> list:
        """
        An option's target words
        """
    @property
    def end(self) -> numpy.typing.NDArray[numpy.int32]:
        ...
    @property
    def entry(self) -> numpy.typing.NDArray[numpy.int64]:
        """
        The entry of each option's pair in its table (-1: an unknown word)
        """
    @property
    def future(self) -> numpy.typing.NDArray[numpy.float64]:
        ...
    @property
    def isolation(self) -> numpy.typing.NDArray[numpy.float64]:
        ...
    @property
    def length(self) -> int:
        """
        Source words
        """
    @property
    def scores(self) -> numpy.typing.NDArray[numpy.float64]:
        """
        options x the model's scores: each option's unweighted scores in isolation
        """
    @property
    def span_end(self) -> numpy.typing.NDArray[numpy.int32]:
        ...
    @property
    def span_offsets(self) -> numpy.typing.NDArray[numpy.int64]:
        ...
    @property
    def span_options(self) -> numpy.typing.NDArray[numpy.int32]:
        """
        Each span's options, best first: span_options[span_offsets[s]:span_offsets[s + 1]]
        """
    @property
    def span_start(self) -> numpy.typing.NDArray[numpy.int32]:
        ...
    @property
    def start(self) -> numpy.typing.NDArray[numpy.int32]:
        ...
    @property
    def table(self) -> numpy.typing.NDArray[numpy.int32]:
        """
        The phrase table (the builder's number) of each option's pair; UNKNOWN_TABLE: an unknown word, MARKUP_TABLE: a markup translation
        """
class MarkupPolicy:
    """
    How a sentence's markup options meet the tables' options of the spans they overlap (--xml-input; pysmt/search/markup_options.py)
    
    Members:
    
      exclusive
    
      inclusive
    
      constraint
    """
    __members__: typing.ClassVar[dict[str, MarkupPolicy]]
    constraint: typing.ClassVar[MarkupPolicy]
    exclusive: typing.ClassVar[MarkupPolicy]
    inclusive: typing.ClassVar[MarkupPolicy]
    @typing.overload
    def __eq__(self, other: MarkupPolicy) -> bool:
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
    def __ne__(self, other: MarkupPolicy) -> bool:
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
class OptionBuilder:
    """
    Builds sentences' translation options from phrase tables (pysmt/search/options.py's OptionBuilder is the specification), keeping each source phrase's ranked pairs across sentences
    """
    def __init__(self, *, dims: typing.SupportsInt | typing.SupportsIndex, max_phrase_length: typing.SupportsInt | typing.SupportsIndex) -> None:
        ...
    def add_scores(self, *, scores: IsolationScores, column: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        A context-free feature's compiled scores, the model's columns from `column`
        """
    def add_stored(self, *, table: typing.SupportsInt | typing.SupportsIndex, column: typing.SupportsInt | typing.SupportsIndex, values: numpy.typing.NDArray[numpy.float32]) -> None:
        """
        Scores stored with table `table` (its number) that count as its own columns from `column`: float32, its entries x scores, NaN where an entry has none (a per-sentence feature's StoredColumns)
        """
    def add_table(self, *, table: PhraseTableView, column: typing.SupportsInt | typing.SupportsIndex, limit: typing.SupportsInt | typing.SupportsIndex) -> None:
        """
        A phrase table supplying candidates; its scores are the model's columns from `column`
        """
    def clear(self) -> None:
        """
        Forget the ranked pairs
        """
    def finish(self, options: BuiltOptions, scores: typing.Annotated[numpy.typing.ArrayLike, numpy.float64] | None = None, estimates: typing.Annotated[numpy.typing.ArrayLike, numpy.float64] | None = None) -> None:
        """
        Step 2: rank the pending pairs (with the Python features' scores and estimates of them: pending() x the model's width) and lay the sentence's options out
        """
    def lookup(self, words: collections.abc.Sequence) -> BuiltOptions:
        """
        Step 1 of a sentence: look its spans up; the pairs of new source phrases wait in pending()
        """
    def pending(self) -> list:
        """
        The pairs Python features must score: (table, entry, source phrase), or (-1, word number, word)
        """
    def set_markup(self, *, policy: MarkupPolicy, starts: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], ends: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex], targets: collections.abc.Sequence[collections.abc.Sequence], values: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex]) -> None:
        """
        The next sentence's markup options (pysmt/search/markup_options.py): spans [start, end), target words, and the value of each of the first table's columns, placed as `policy` says
        """
    def set_python_columns(self, columns: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        """
        The model's columns context-free Python features score (finish() is given them)
        """
    def set_weights(self, weights: collections.abc.Sequence[typing.SupportsFloat | typing.SupportsIndex]) -> None:
        """
        New weights; the ranked pairs are forgotten
        """
    @property
    def kept(self) -> int:
        """
        Ranked pairs kept across sentences
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
class NbestRequest:
    """
    What the n-best list needs besides the search graph
    """
    def __init__(self, *, size: typing.SupportsInt | typing.SupportsIndex, budget: typing.SupportsInt | typing.SupportsIndex, distinct: bool, stateful_columns: collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None:
        ...
class Derivations:
    """
    The n-best derivations: derivation i applies options[offsets[i]:offsets[i + 1]], first to last, with model score score[i] and unweighted scores scores[i]; `hypotheses`: how many the search built
    """
    @property
    def hypotheses(self) -> int:
        ...
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
def search(options: BuiltOptions, settings: SearchSettings, features: collections.abc.Sequence[CompiledFeature], nbest: NbestRequest) -> Derivations:
    """
    Run normal search or cube pruning over one sentence's options; return its n-best derivations
    """
MARKUP_TABLE: int = -2
UNKNOWN_TABLE: int = -1
