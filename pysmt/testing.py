"""Helpers for testing features: a toy Moses system, in-process registration, a decoder, options.

A plugin's tests can build everything they need without installing the plugin or touching
pysmt's registry::

    from pysmt.testing import registered, toy_decoder, toy_options, write_toy_system

    def test_my_feature_decodes(tmp_path):
        system = write_toy_system(tmp_path)
        with registered(my_feature=MyFeature):
            decoder = toy_decoder(system, ["my-feature"], weights={"MyFeature0": [0.5]})
            assert decoder.translate("a b c").best
            options = toy_options(decoder, "a b c")  # what evaluate() and score_batch() see

The toy system translates the words ``a b c`` into ``x y z`` with a bigram LM whose log10
probabilities are round numbers, so expected scores can be worked out by hand (see the values
below). Feature names use dashes (``my-feature``); keyword arguments of :func:`registered` use
underscores, which become dashes.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np

from pysmt.config import SystemConfig

# for a plugin's tests: a system config built as --features, --param and --weights build it
from pysmt.config_files import configure_system as configure_system
from pysmt.decoder import Decoder, SystemRecipe
from pysmt.features import registry
from pysmt.features.base import FORBIDDEN, Feature, TranslationFeature
from pysmt.features.parameters import parameter, values_of
from pysmt.features.registry import checked_params
from pysmt.phrases import Sentence, SentenceOptions
from pysmt.search.distortion_limit import first_gap, gap_reachable, jump_allowed, span_mask
from pysmt.search.hypothesis import Hypothesis

#: A bigram LM over x, y, z with round log10 numbers.
TOY_ARPA = """\\data\\
ngram 1=6
ngram 2=5

\\1-grams:
-99\t<s>\t-0.3
-0.5\t</s>
-1.0\t<unk>
-0.6\tx\t-0.2
-0.7\ty\t-0.1
-0.9\tz\t-0.25

\\2-grams:
-0.2\t<s> x
-0.3\tx y
-0.25\ty z
-0.4\tz </s>
-0.35\ty x

\\end\\
"""

TOY_PHRASES = """a ||| x ||| 0.5 0.5 ||| 0-0
a ||| y ||| 0.25 0.25 ||| 0-0
b ||| y ||| 0.5 0.4 ||| 0-0
a b ||| x y ||| 0.3 0.2 ||| 0-0 1-1
c ||| z ||| 0.9 0.9 ||| 0-0
b c ||| z x ||| 0.1 0.1 ||| 0-1 1-0
"""

TOY_REORDERING = """a ||| x ||| 0.5 0.25 0.25 0.6 0.2 0.2
b ||| y ||| 0.4 0.4 0.2 0.5 0.25 0.25
c ||| z ||| 0.8 0.1 0.1 0.7 0.1 0.2
a b ||| x y ||| 0.5 0.3 0.2 0.5 0.3 0.2
"""


def write_toy_system(
    directory: Path,
    *,
    phrases: str = TOY_PHRASES,
    reordering: str | None = TOY_REORDERING,
    arpa: str = TOY_ARPA,
    features: Sequence[str] = (),
    weights: dict[str, str] | None = None,
    extra: str = "",
) -> Path:
    """Write a tiny Moses system (moses.ini and its models) into ``directory``; return the ini's path.

    ``features`` are more ``[feature]`` lines, such as a plugin's (``"my-feature model=my-model"``:
    its registered type and its parameters, paths relative to ``directory``); ``weights`` gives or
    replaces ``[weight]`` lines (``{"MyFeature0": "0.5"}``).
    """
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "phrases.txt").write_text(phrases, encoding="utf-8")
    (directory / "lm.arpa").write_text(arpa, encoding="utf-8")
    num_tm = len(phrases.splitlines()[0].split("|||")[2].split())
    lines = [
        "[feature]",
        "KENLM order=2 path=lm.arpa",
        "Distortion",
        "WordPenalty",
        "UnknownWordPenalty",
        f"PhraseDictionaryMemory path=phrases.txt num-features={num_tm} table-limit=20",
        *features,
    ]
    w = {
        "KENLM0": "0.5",
        "Distortion0": "0.3",
        "WordPenalty0": "-1",
        "PhraseDictionaryMemory0": " ".join(["0.2"] * num_tm),
    }
    if reordering is not None:
        (directory / "reordering.txt").write_text(reordering, encoding="utf-8")
        lines.insert(3, "LexicalReordering type=msd-bidirectional-fe num-features=6 path=reordering.txt")
        w["LexicalReordering0"] = "0.3 0.3 0.3 0.3 0.3 0.3"
    w.update(weights or {})
    lines += ["", "[weight]"] + [f"{name}= {value}" for name, value in w.items()]
    ini = directory / "moses.ini"
    ini.write_text("\n".join(lines) + "\n" + extra, encoding="utf-8")
    return ini


def installed_features() -> set[str]:
    """The feature types installed as entry points: what a plugin's test checks its distribution registers
    (the features of :func:`registered` are not among them)."""
    return set(registry.available())


@contextmanager
def registered(**features: type[Feature]) -> Iterator[None]:
    """Register feature classes in this process for the ``with`` block (``my_feature=MyFeature``)."""
    names = {name.replace("_", "-"): cls for name, cls in features.items()}
    saved = {name: registry.IN_PROCESS.get(name) for name in names}
    registry.IN_PROCESS.update(names)
    try:
        yield
    finally:
        for name, cls in saved.items():
            if cls is None:
                registry.IN_PROCESS.pop(name, None)
            else:
                registry.IN_PROCESS[name] = cls


def registered_for_commands(folder: Path, **features: type[Feature]) -> dict[str, str]:
    """The environment in which the commands a test starts (:func:`run_pysmt`, :func:`start_pysmt`, and the server
    workers and ``--cluster local`` actors they start in turn) find ``features`` (``my_feature=MyFeature``:
    underscores become dashes) as installed plugins: an entry-point record written into ``folder``, put first on
    ``PYTHONPATH``. Each class must be importable by its module's name (a class of a test module that the
    command cannot import, or one defined in a function, is refused)."""
    lines = ["[pysmt.features]"]
    for name, cls in features.items():
        if cls.__module__ == "__main__" or "<locals>" in cls.__qualname__:
            raise ValueError(f"{cls.__qualname__} cannot be imported by another process: define it in a module")
        lines.append(f"{name.replace('_', '-')} = {cls.__module__}:{cls.__qualname__}")
    record = folder / "pysmt_test_plugins-0.dist-info"
    record.mkdir(parents=True, exist_ok=True)
    (record / "METADATA").write_text("Metadata-Version: 2.1\nName: pysmt-test-plugins\nVersion: 0\n", encoding="utf-8")
    (record / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    path = os.pathsep.join(p for p in (str(folder.resolve()), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


@dataclass(frozen=True, kw_only=True)
class TargetWordsParameters:
    words: str = parameter("y", help="the target words a translation is scored for, separated by spaces")
    forbid: str = parameter("", help="target words that rule a translation out (scored -inf), separated by spaces")


class TargetWordsFeature(TranslationFeature):
    """A feature of complete translations for tests, whose scores are worked out by hand: a translation's count of
    the target ``words`` (default ``y``), or -inf when it holds one of the words ``forbid`` names. Its default
    weight is 1. ``calls`` records each call: the sentence's words and index, and the translations scored."""

    default_label = "TargetWords"
    parameters = TargetWordsParameters

    def __init__(self, name: str, words: frozenset[str], forbid: frozenset[str]) -> None:
        super().__init__(name, 1)
        self.words, self.forbid = words, forbid
        self.calls: list[tuple[tuple[str, ...], int, list[tuple[str, ...]]]] = []

    @classmethod
    def from_config(cls, name: str, params: TargetWordsParameters, system: SystemConfig) -> TargetWordsFeature:
        return cls(name, frozenset(params.words.split()), frozenset(params.forbid.split()))

    def default_weights(self) -> list[float]:
        return [1.0]

    def score_translations(self, sentence: Sentence, translations: Sequence[tuple[str, ...]]) -> np.ndarray:
        self.calls.append((sentence.words, sentence.index, list(translations)))
        scores = np.array([[float(sum(word in self.words for word in t))] for t in translations]).reshape(-1, 1)
        scores[[any(word in self.forbid for word in t) for t in translations]] = FORBIDDEN
        return scores


def toy_decoder(
    system: Path,
    features: Sequence[str] = (),
    *,
    params: Sequence[str] = (),
    weights: dict[str, list[float]] | None = None,
    search: Literal["normal", "cube"] | None = None,
    engine: Literal["auto", "python"] = "auto",
) -> Decoder:
    """A decoder for ``system`` with ``features`` added (as ``--features``), ``params`` set (as ``--param``:
    ``"my-feature.model=/path/to/model"``, relative paths from the working folder) and ``weights`` (as
    ``--weights``)."""
    recipe = SystemRecipe(str(system), tuple(features), tuple(params), algorithm=search, engine=engine)
    config = recipe.configure()
    return recipe.build(config.with_weights(weights, "toy_decoder(weights=...)") if weights else config)


def parameters_of(feature: type[Feature], values: dict[str, Any], base: Path | str = ".", name: str = "") -> Any:
    """A feature class's ``parameters`` instance from a config section's values (``{"model": "m", "buffer-size":
    7}``), checked, made absolute and defaulted as a config read from folder ``base`` makes them: what its
    ``check_config`` and ``from_config`` receive."""
    name = name or f"{feature.default_label}0"
    checked = checked_params(feature, name, name, values, Path(base), "parameters_of")
    return values_of(feature.parameters, name, checked, Path(base))


def toy_options(decoder: Decoder, line: str) -> SentenceOptions:
    """The translation options of a (tokenized) line, as the decoder builds and scores them."""
    return decoder.options.build(Sentence(tuple(line.split())))


def exhaustive_best(decoder: Decoder, words: tuple[str, ...]) -> float:
    """The best model score over every derivation the distortion rules allow (no pruning, no recombination).

    Plugin features' scores are asked for at once, hypothesis by hypothesis: the yardstick a search
    with a huge beam (:func:`huge_beam`) must reach, whatever a feature's states and batches.
    """
    options = decoder.options.build(Sentence(words))
    model, n, limit = decoder.model, len(words), decoder.search.distortion_limit
    best = -math.inf

    def expand(hyp: Hypothesis) -> None:
        nonlocal best
        if hyp.covered == n:
            best = max(best, hyp.score)
            return
        gap = first_gap(hyp.coverage)
        for (start, end), span_options in options.by_span.items():
            if hyp.coverage & span_mask(start, end) or not jump_allowed(hyp.end, hyp.option is not None, start, limit):
                continue
            if not gap_reachable(gap, start, end, limit):
                continue
            for option in span_options:
                new = model.extend(hyp, option, 0.0, hyp.covered + end - start == n, 0)
                model.resolve([new])
                expand(new)

    expand(model.initial_hypothesis(options, 0.0))
    model.end_sentence()
    return best


def huge_beam(decoder: Decoder, algorithm: Literal["normal", "cube"]) -> Decoder:
    """The decoder with no pruning at all (for comparing with :func:`exhaustive_best` on tiny inputs)."""
    decoder.search = replace(decoder.search, algorithm=algorithm, stack_size=10**9, beam_threshold=0.0, pop_limit=10**9)
    return decoder


@contextmanager
def single_torch_thread() -> Iterator[None]:
    """torch on one thread, and ``OMP_NUM_THREADS=1`` for the commands a test starts; both restored after.

    On tiny models, thread start-up and contention cost far more than threads give.
    """
    import torch

    saved = {name: os.environ.get(name) for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    os.environ.update({name: "1" for name in saved})
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


#: The ``pysmt`` command as tests run it: ``python -m pysmt`` of the interpreter running the tests, so that the
#: environment under test is the one whose command runs, whatever the PATH holds.
PYSMT_COMMAND = (sys.executable, "-m", "pysmt")


def run_pysmt(
    *args: str | Path, input: str | bytes | None = None, text: bool = True, timeout: float = 600, **popen: Any
) -> subprocess.CompletedProcess:
    """Run ``pysmt ARGS`` as a user would and wait for it, whatever its exit status.

    Its stdout and stderr are captured as UTF-8 text (bytes with ``text=False``: for output that must be seen
    byte for byte) unless ``popen`` gives them as files; ``input`` is its stdin (empty unless given: a
    command that reads stdin never waits on the terminal), or ``stdin=`` a file. The other ``popen``
    arguments (``env``, ``cwd``, ``preexec_fn``) go to :func:`subprocess.run`. A command still running after
    ``timeout`` seconds is killed and raises :class:`subprocess.TimeoutExpired`: a hang fails its test
    instead of stalling the whole run.
    """
    popen.setdefault("stdout", subprocess.PIPE)
    popen.setdefault("stderr", subprocess.PIPE)
    if "stdin" not in popen:
        popen["input"] = ("" if text else b"") if input is None else input
    return subprocess.run(
        [*PYSMT_COMMAND, *map(str, args)], encoding="utf-8" if text else None, timeout=timeout, check=False, **popen
    )


def start_pysmt(*args: str | Path, **popen: Any) -> subprocess.Popen:
    """Start ``pysmt ARGS`` and return at once, for a test that talks to the command while it runs, signals or
    kills it (a server, a run stopped midway): ``popen`` goes to :class:`subprocess.Popen` as given (pipes,
    ``start_new_session``, ``env``...)."""
    return subprocess.Popen([*PYSMT_COMMAND, *map(str, args)], **popen)


def one_line_error(proc: subprocess.CompletedProcess, *needles: str, status: int = 1) -> str:
    """Assert the command failed with ``status`` and one ``Error`` line (no traceback) holding every needle; the
    line. (Its stderr may be text or bytes, as :func:`run_pysmt` captured it.)"""
    stderr = proc.stderr if isinstance(proc.stderr, str) else proc.stderr.decode(errors="replace")
    assert proc.returncode == status, (proc.returncode, stderr)
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.startswith("Error")]
    assert len(lines) == 1, stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]
