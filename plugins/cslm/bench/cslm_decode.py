"""Decoding speed with the cslm feature: without it, self-normalized, exact.

    python plugins/cslm/bench/cslm_decode.py -c SYSTEM/pysmt.toml --model SYSTEM/cslm \\
        -i ../shared/data/moses-news/inputs/newstest2013.first500.tok.true.en --lines 50

Input lines are taken as prepared (tokenized, truecased). Times are process time of decoding only
(loading excluded). The CSLM's weight is ``--weight`` (untuned: the figures are about speed); the
n-gram cache starts empty for each configuration. Also printed: requests and n-grams per sentence,
how many n-grams the network computed (the rest came from the batch's duplicates or the cache), and
how many translations differ between the two normalizations.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def run(decoder, lines: list[str]) -> tuple[float, list[str]]:
    start = time.process_time()
    out = [" ".join(decoder.translate(line, k).hypotheses[0].words) for k, line in enumerate(lines)]
    return time.process_time() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-c", "--config", required=True)
    parser.add_argument("-i", "--input", required=True)
    parser.add_argument("--model", required=True, help="CSLM model folder")
    parser.add_argument("--lines", type=int, default=50)
    parser.add_argument("--weight", type=float, default=0.5)
    parser.add_argument("--search", choices=["cube", "normal"], default=None)
    parser.add_argument("--skip-baseline", action="store_true")
    args = parser.parse_args()

    from pysmt.decoder import Decoder
    from pysmt.features.registry import configure_system

    lines = Path(args.input).read_text(encoding="utf-8").splitlines()[:args.lines]
    words = sum(len(line.split()) for line in lines)
    results: dict[str, dict] = {}
    if not args.skip_baseline:
        seconds, _ = run(Decoder(configure_system(args.config), algorithm=args.search), lines)
        results["no cslm"] = {"decode_s": round(seconds, 2), "words_per_s": round(words / seconds, 1)}
    config = configure_system(args.config, ["cslm"], [f"cslm.model={Path(args.model).resolve()}"])
    decoder = Decoder(config.with_weights({"CSLM0": [args.weight]}, "--weight"), algorithm=args.search)
    feature = decoder.features[-1]
    outputs = {}
    for normalization in ("self", "exact"):
        feature.normalization = normalization
        feature.cache.clear()
        feature.log_z.clear()
        feature.requests = feature.ngrams = feature.computed = feature.contexts_normalized = 0
        seconds, outputs[normalization] = run(decoder, lines)
        results[f"cslm {normalization}"] = {
            "decode_s": round(seconds, 2), "words_per_s": round(words / seconds, 1),
            "requests_per_sentence": round(feature.requests / len(lines)),
            "ngrams_per_sentence": round(feature.ngrams / len(lines)),
            "computed_per_sentence": round(feature.computed / len(lines)),
            "softmax_contexts_per_sentence": round(feature.contexts_normalized / len(lines)),
            "cache_entries": len(feature.cache)}
    differ = sum(a != b for a, b in zip(outputs["self"], outputs["exact"]))
    print(json.dumps({"sentences": len(lines), "source_words": words, "results": results,
                      "translations_differing_self_vs_exact": differ}, indent=1))


if __name__ == "__main__":
    main()
