"""Decoding speed and memory: source words per second on one core, peak memory, and a profile.

    python bench/decode.py                                   # the Moses fixture, normal and cube
    python bench/decode.py -c SYSTEM/pysmt.toml -i ../shared/data/news/newstest2013.en --lines 500 --prepared
    python bench/decode.py --profile                         # where the time goes (cProfile, top 20)
    python bench/decode.py --engine python --lines 50        # the Python reference search, for comparison
    python bench/decode.py --nbest-size 100                  # with 100-best lists, as MERT decodes
    python bench/decode.py --null-feature                    # plus a do-nothing plugin stateful feature:
                                                             #   what the plugin callback path costs
    python bench/decode.py --features rnn --param rnn.model=SYSTEM/rnn   # with plugin features
    python bench/decode.py --pop-limit 5000 --stack-size 500 # other search limits (bench/search_curves.py)

Speed is process time of decoding only (model loading excluded, as in the Moses figures we
compare with); each configuration runs in its own process so peak memory is its own. Also printed:
the mean model score of the best translations (the search's objective: higher is better at equal
weights), hypotheses scored per second, and KenLM word queries per source word beside the words the
LM scored (the rest came from the compiled search's per-sentence (state, phrase) cache).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT.parent / "shared" / "data" / "fixtures" / "moses" / "lexicalized-reordering"


def null_feature() -> type:
    """A plugin stateful feature that does nothing (zeros, one state, weight 0), through the array interface."""
    import numpy as np

    from pysmt.plugin import BatchedStatefulFeature

    class NullFeature(BatchedStatefulFeature):
        default_label = "Null"

        @classmethod
        def from_config(cls, name, params, system):  # noqa: ANN001, ANN206
            return cls(name, 1)

        def default_weights(self) -> list[float]:
            return [0.0]

        def start(self, sentence, options) -> int:  # noqa: ANN001
            return 0

        def score_batch(self, states, options, ends):  # noqa: ANN001, ANN201
            return np.zeros((len(states), 1)), np.zeros(len(states), dtype=np.int64)

    return NullFeature


def lm_counts(decoder) -> tuple[int, int]:  # noqa: ANN001 - any version's Decoder
    """KenLM word queries of the compiled search's LM twins so far, and the words they scored (asked of
    KenLM or from their cache); (0, 0) where the twins do not count."""
    twins = [core for _, core in getattr(decoder.compiled, "twins", [])]
    return (sum(getattr(t, "queries", 0) for t in twins), sum(getattr(t, "words", 0) for t in twins))


def measure(
    config: str,
    input_path: str,
    lines: int,
    algorithm: str,
    profile: bool,
    engine: str,
    nbest_size: int,
    null: bool,
    features: list[str],
    params: list[str],
    limits: dict[str, int],
) -> dict:
    from dataclasses import replace

    from pysmt.config_files import configure_system
    from pysmt.decoder import Decoder
    from pysmt.testing import registered

    start = time.process_time()
    with registered(null=null_feature()):
        system = configure_system(config, features + (["null"] if null else []), params)
        system = replace(system, search=replace(system.search, **limits))
        decoder = Decoder(system, algorithm=algorithm, engine=engine, missing_weight=0.1)
    load = time.process_time() - start
    sentences = Path(input_path).read_text(encoding="utf-8").splitlines()[:lines]
    if hasattr(decoder, "preprocess"):
        sentences = [decoder.preprocess(s) for s in sentences]
    words = sum(len(s.split()) for s in sentences)
    profiler = cProfile.Profile() if profile else None
    start = time.process_time()
    if profiler:
        profiler.enable()
    best = [
        decoder.translate(sentence, k, nbest_size=nbest_size).hypotheses[0].total
        for k, sentence in enumerate(sentences)
    ]
    if profiler:
        profiler.disable()
    seconds = time.process_time() - start
    queries, scored = lm_counts(decoder)
    hypotheses = getattr(decoder.compiled, "hypotheses", 0)
    result = {
        "algorithm": algorithm + ("+null" if null else ""),
        "nbest_size": nbest_size,
        **limits,
        "sentences": len(sentences),
        "source_words": words,
        "ms_per_sentence": round(1000 * seconds / len(sentences), 2),
        "load_s": round(load, 2),
        "decode_s": round(seconds, 3),
        "words_per_s": round(words / seconds, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "model_score": sum(best) / len(best),
        "hypotheses_per_s": round(hypotheses / seconds),
        "lm_queries_per_word": round(queries / words, 1),
        "lm_words_per_word": round(scored / words, 1),
    }
    if profiler:
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(20)
        result["profile"] = text.getvalue()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-c", "--config", default=str(FIXTURE / "moses.ini"))
    parser.add_argument("-i", "--input", default=str(FIXTURE / "to-translate.txt"))
    parser.add_argument("--lines", type=int, default=500)
    parser.add_argument("--algorithms", default="normal,cube")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument(
        "--engine",
        choices=["auto", "python"],
        default="auto",
        help="auto: the compiled search core; python: the Python reference search",
    )
    parser.add_argument("--nbest-size", type=int, default=1, help="n-best list size asked for (default 1)")
    parser.add_argument(
        "--null-feature",
        action="store_true",
        help="also decode with a do-nothing plugin stateful feature (the callback path's cost)",
    )
    parser.add_argument("--features", default="", help="features to add, as decode's --features (e.g. rnn,cslm)")
    parser.add_argument("--param", action="append", default=[], help="as decode's --param (repeatable)")
    parser.add_argument("--pop-limit", type=int, help="cube pruning's pop limit (default: the system's)")
    parser.add_argument("--stack-size", type=int, help="the stack size (default: the system's)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    limits = {
        key: value
        for key, value in (("pop_limit", args.pop_limit), ("stack_size", args.stack_size))
        if value is not None
    }
    if args.one:
        algorithm, _, null = args.one.partition("+")
        print(
            json.dumps(
                measure(
                    args.config,
                    args.input,
                    args.lines,
                    algorithm,
                    args.profile,
                    args.engine,
                    args.nbest_size,
                    bool(null),
                    [f for f in args.features.split(",") if f],
                    args.param,
                    limits,
                )
            )
        )
        return
    print(
        f"system: {args.config}\ninput:  {args.input} (first {args.lines} lines)\nengine: {args.engine}, "
        f"{args.nbest_size}-best"
    )
    print(
        f"{'search':12} {'sent':>5} {'words':>6} {'load s':>7} {'decode s':>9} {'ms/sent':>8} {'words/s':>8} "
        f"{'peak MB':>8} {'model score':>11} {'hyps/s':>9} {'LM queries/word':>15}"
    )
    runs = args.algorithms.split(",")
    if args.null_feature:
        runs = [run for algorithm in runs for run in (algorithm, algorithm + "+null")]
    for algorithm in runs:
        cmd = [
            sys.executable,
            __file__,
            "--one",
            algorithm,
            "-c",
            args.config,
            "-i",
            args.input,
            "--lines",
            str(args.lines),
            "--engine",
            args.engine,
            "--nbest-size",
            str(args.nbest_size),
            "--features",
            args.features,
            *[f"--param={p}" for p in args.param],
        ]
        cmd += ["--profile"] if args.profile else []
        cmd += [f"--{key.replace('_', '-')}={value}" for key, value in limits.items()]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode:
            sys.exit(f"{algorithm}: failed: {done.stderr.strip().splitlines()[-1]}")
        out = done.stdout
        r = json.loads(out.strip().splitlines()[-1])
        print(
            f"{r['algorithm']:12} {r['sentences']:5d} {r['source_words']:6d} {r['load_s']:7.2f} "
            f"{r['decode_s']:9.2f} {r['ms_per_sentence']:8.2f} {r['words_per_s']:8.1f} {r['peak_rss_mb']:8.1f} "
            f"{r['model_score']:11.4f} {r['hypotheses_per_s']:9,d} "
            f"{r['lm_queries_per_word']:6.1f} of {r['lm_words_per_word']:6.1f}"
        )
        if "profile" in r:
            print(r["profile"])


if __name__ == "__main__":
    main()
