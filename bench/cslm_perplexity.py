"""Perplexity of CSLMs beside a KenLM n-gram model on the same held-out text, on the same tokens.

    python bench/cslm_perplexity.py --model DIR [--model DIR2] --kenlm LM.bin --text held-out.txt

The text must be prepared as the models' training text was (tokenized, truecased). Per token,
``</s>`` included. Rows per model:

* all tokens: the CSLM with the back-off for words outside its shortlist (exact and
  self-normalized), KenLM with its ``<unk>`` probability for the words it never saw;
* shortlist tokens only: the tokens inside the CSLM's shortlist (``</s>`` included), both models,
  which is the comparison the paper's convention allows (WP counts the others);
* the mean and spread of ``log Z`` (how far self-normalization strays).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np


def kenlm_token_scores(path: str, text: Path) -> np.ndarray:
    """Natural-log probability of every token of ``text`` (``</s>`` included) under a KenLM model."""
    from pysmt.models.language_model import load_kenlm

    lm = load_kenlm(path)
    scores = []
    for line in text.read_text(encoding="utf-8").splitlines():
        state = lm.begin_state()
        for word in line.split():
            score, state = lm.extend(state, [word])
            scores.append(score)
        scores.append(lm.final(state))
    return np.array(scores)


def perplexity(values: np.ndarray) -> float:
    return round(math.exp(-values.mean()), 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, action="append", help="CSLM model folder (repeatable)")
    parser.add_argument("--kenlm", required=True)
    parser.add_argument("--text", required=True)
    args = parser.parse_args()

    from pysmt_cslm.data import encode_text
    from pysmt_cslm.scoring import Scorer, score_text
    from pysmt_cslm.store import load_model

    text = Path(args.text)
    ken = kenlm_token_scores(args.kenlm, text)
    report: dict = {"text": args.text, "tokens": len(ken), "kenlm": {"all tokens": perplexity(ken)}, "cslm": {}}
    for model in args.model:
        loaded = load_model(Path(model), "cpu")
        encoded = encode_text(text, loaded.shortlist, loaded.model.hp.context, backoff=loaded.backoff)
        assert len(encoded) == len(ken), "the CSLM and KenLM count tokens differently"
        scorer = Scorer(loaded.model)
        exact, log_z = score_text(scorer, encoded, "exact", with_log_z=True)
        self_normalized, _ = score_text(scorer, encoded, "self")
        assert log_z is not None
        inside = encoded.ids != 1
        report["cslm"][model] = {
            "preset": loaded.model.hp.preset,
            "shortlist": len(loaded.shortlist.words),
            "outside_shortlist": int((~inside).sum()),
            "all tokens": {
                "exact": perplexity(exact),
                "self-normalized": perplexity(self_normalized),
                "kenlm": perplexity(ken),
            },
            "shortlist tokens": {
                "exact": perplexity(exact[inside]),
                "self-normalized": perplexity(self_normalized[inside]),
                "kenlm": perplexity(ken[inside]),
            },
            "log Z": {"mean": round(float(log_z.mean()), 4), "std": round(float(log_z.std()), 4)},
        }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
