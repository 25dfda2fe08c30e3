"""Decoding speed with the ``cslm`` feature: without it, with it (self-normalized through its compiled
scorer, as ``pysmt decode`` runs it, and through the Python array interface; exact), and the speed-up
of the feature's buffered scoring over scoring each n-gram alone.

    python bench/cslm_decode.py -c SYSTEM/pysmt.toml --model SYSTEM/cslm --lines 200

The input (default: ``../shared/data/news/newstest2013.en``) is prepared by the system's
``[processing]`` before timing. Times are process time of decoding (loading and preparation
excluded), on one core, the fastest of ``--repeat`` runs, each from cold caches; decoding without the
CSLM is timed between the others' runs, so that all see the same machine. The CSLM's weight is
``--weight`` (untuned: these figures are about speed).

Printed per configuration: seconds, source words per second, the ratio to decoding without the
CSLM; requests, n-grams and contexts put through the network per sentence. For the array interface
(the feature called from the search through Python, a batch at a time), also the time spent in the
feature and its calls per sentence, and the per-n-gram baseline: a sample of the n-grams the decoder
requested, each scored alone (one context through the network, and the full softmax when exact, no
buffer, no cache); its cost per n-gram times the n-grams requested, over the feature's time, is the
buffered speed-up. And the effect of the CSLM's future-cost estimate (``future-cost = false``
searches as Moses' CSLM did, without one): the mean model score of the best translations with and
without it (same weights: the higher, the fewer search errors) and in how many sentences each search
found the better one.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def decode(decoder, lines: list[str], repeat: int = 1, reset=lambda: None) -> tuple[float, list]:
    """The least process time of ``repeat`` translations of ``lines`` from cold caches (``reset`` empties
    the feature's), and the best hypotheses."""
    times = []
    for _ in range(repeat):
        decoder.forget_options()  # options are built afresh, and with the estimates of the moment
        reset()
        start = time.process_time()
        best = [decoder.translate(line, k).hypotheses[0] for k, line in enumerate(lines)]
        times.append(time.process_time() - start)
    return min(times), best


def instrument(feature, stats: dict) -> None:
    """Count the feature's time and requests into ``stats``, and keep the n-grams it is asked for."""
    stats.update(seconds=0.0, calls=0, ngrams=[])
    score_batch, request_scores = feature.score_batch, feature.request_scores

    def timed(states, options, ends):
        start = time.process_time()
        result = score_batch(states, options, ends)
        stats["seconds"] += time.process_time() - start
        stats["calls"] += 1
        return result

    def recorded(rows, words, owners, requests):
        start = time.process_time()  # the record is not the feature's time
        stats["ngrams"].append(np.concatenate([feature.cache.table.contexts(rows), words[:, None]], 1))
        stats["seconds"] -= time.process_time() - start
        return request_scores(rows, words, owners, requests)

    feature.score_batch, feature.request_scores = timed, recorded


def per_ngram_seconds(feature, ngrams: np.ndarray, normalization: str, sample: int) -> float:
    """Process time per n-gram of scoring a seeded sample of ``ngrams`` one at a time."""
    rng = np.random.default_rng(0)
    picked = ngrams[rng.choice(len(ngrams), min(sample, len(ngrams)), replace=False)]
    c = feature.context
    start = time.process_time()
    for row in picked:
        feature.scorer.score(row[None, :c], row[c:], normalization)
    return (time.process_time() - start) / len(picked)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-c", "--config", required=True, help="system config (pysmt.toml)")
    parser.add_argument("--model", required=True, help="CSLM model folder")
    parser.add_argument(
        "-i", "--input", default=str(ROOT.parent / "shared/data/news/newstest2013.en"), help="raw source text"
    )
    parser.add_argument("--lines", type=int, default=200)
    parser.add_argument(
        "--exact-lines",
        type=int,
        default=20,
        help="lines decoded with exact normalization (the full softmax is slow on a CPU)",
    )
    parser.add_argument("--weight", type=float, default=0.5)
    parser.add_argument("--sample", type=int, default=2000, help="n-grams scored one at a time")
    parser.add_argument("--repeat", type=int, default=2, help="decodings per configuration (the fastest counts)")
    args = parser.parse_args()

    import torch

    from pysmt.config_files import configure_system
    from pysmt.decoder import Decoder
    from pysmt_cslm.features import CslmFeature

    torch.set_num_threads(1)
    plain = Decoder(configure_system(args.config))
    raw = Path(args.input).read_text(encoding="utf-8").splitlines()[: args.lines]
    lines = [plain.preprocess(line) for line in raw]

    def made(*params: str, compiled: bool = True) -> Decoder:
        """A decoder with the CSLM (its compiled scorer, or its Python array interface)."""
        config = configure_system(args.config, ["cslm"], [f"cslm.model={Path(args.model).resolve()}", *params])
        config = config.with_weights({"CSLM0": [args.weight]}, "--weight")
        if compiled:
            return Decoder(config)
        with without_compiled_scorer(CslmFeature):
            return Decoder(config)

    results: dict[str, dict] = {}
    bests: dict[str, list] = {}
    baselines: list[float] = []
    for label, params, count, compiled in (
        ("cslm self", [], args.lines, True),
        ("cslm self, array interface", [], args.lines, False),
        ("cslm self, array interface, no future cost", ["cslm.future-cost=false"], args.lines, False),
        ("cslm exact", ["cslm.normalization=exact"], args.exact_lines, False),
    ):
        subset = lines[:count]
        words = sum(len(line.split()) for line in subset)
        decoder = made(*params, compiled=compiled)
        feature = decoder.features[-1]
        baseline = decode(plain, subset, args.repeat)[0]
        if count == args.lines:
            baselines.append(baseline)
        stats: dict = {}

        def reset() -> None:  # the array interface: an empty cache and fresh counts for each run
            feature.cache = type(feature.cache)(feature.scorer, feature.cache.size)
            feature.requests = feature.ngrams = 0
            if stats:
                del feature.score_batch, feature.request_scores  # the class's own again
            instrument(feature, stats)

        seconds, bests[label] = decode(decoder, subset, args.repeat, (lambda: None) if compiled else reset)
        results[label] = {
            "lines": count,
            "decode_s": round(seconds, 2),
            "words_per_s": round(words / seconds, 1),
            "times_without_cslm": round(seconds / baseline, 2),
        }
        if compiled:  # the compiled scorer's own counts, added up over the runs
            scorer = feature.compiled
            results[label].update(
                {
                    "requests_per_sentence": round(scorer.requests / args.repeat / count),
                    "ngrams_per_sentence": round(scorer.ngrams / args.repeat / count),
                    "contexts_computed_per_sentence": round(scorer.computed / args.repeat / count),
                }
            )
            print(json.dumps({label: results[label]}), flush=True)
            continue
        del feature.score_batch, feature.request_scores
        ngrams = np.concatenate(stats["ngrams"])
        alone = per_ngram_seconds(feature, ngrams, feature.normalization, args.sample)
        results[label].update(
            {
                "feature_s": round(stats["seconds"], 2),
                "calls_per_sentence": round(stats["calls"] / count),
                "requests_per_sentence": round(feature.requests / count),
                "ngrams_per_sentence": round(len(ngrams) / count),
                "contexts_computed_per_sentence": round(feature.cache.computed / count),
                "ngrams_per_s": round(len(ngrams) / stats["seconds"]),
                "unique_contexts_per_s": round(feature.cache.computed / stats["seconds"]),
                "per_ngram_scoring_us": round(alone * 1e6, 1),
                "buffered_speedup": round(alone * len(ngrams) / stats["seconds"], 1),
            }
        )
        if not feature.future_cost:  # the same model, searched without the CSLM's estimates: which search finds more?
            other = bests["cslm self, array interface"]
            results[label]["mean_model_score"] = round(float(np.mean([h.total for h in bests[label]])), 4)
            results[label]["mean_model_score_with_future_cost"] = round(float(np.mean([h.total for h in other])), 4)
            results[label]["better_with_future_cost"] = sum(
                a.total > b.total + 1e-9 for a, b in zip(other, bests[label])
            )
            results[label]["better_without"] = sum(b.total > a.total + 1e-9 for a, b in zip(other, bests[label]))
        print(json.dumps({label: results[label]}), flush=True)
    words = sum(len(line.split()) for line in lines)
    results["no cslm"] = {
        "lines": args.lines,
        "decode_s": round(min(baselines), 2),
        "words_per_s": round(words / min(baselines), 1),
    }
    same = [a.total == b.total for a, b in zip(bests["cslm self"], bests["cslm self, array interface"])]
    results["cslm self"]["best_scores_equal_to_array_interface"] = all(same)
    print(json.dumps({"config": args.config, "model": args.model, "results": results}, indent=1))


@contextmanager
def without_compiled_scorer(feature_class: type) -> Iterator[None]:
    """Decoders made inside call the feature through its Python array interface (no compiled scorer)."""
    original = feature_class.compiled_scorer
    feature_class.compiled_scorer = lambda self: None
    try:
        yield
    finally:
        feature_class.compiled_scorer = original


if __name__ == "__main__":
    main()
