"""Perplexity of a CSLM beside a KenLM n-gram model on the same held-out text, on the same tokens.

    python plugins/cslm/bench/cslm_perplexity.py --model DIR --kenlm LM.bin --text held-out.txt

Per token, ``</s>`` included. Rows:

* all tokens: the CSLM with the back-off for words outside its shortlist (exact and
  self-normalized), KenLM with its ``<unk>`` probability for the words it never saw;
* shortlist tokens only: the tokens inside the CSLM's shortlist (``</s>`` included), both models,
  which is the comparison the paper's convention allows (WP counts the others);
* tokens outside the shortlist: the mean log-probability each model gives them.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True)
    parser.add_argument("--kenlm", required=True)
    parser.add_argument("--text", required=True)
    args = parser.parse_args()

    import kenlm
    from pysmt_cslm.data import encode_text
    from pysmt_cslm.scoring import Scorer, score_text
    from pysmt_cslm.store import load_model

    loaded = load_model(Path(args.model))
    encoded = encode_text(Path(args.text), loaded.shortlist, loaded.model.hp.context, backoff=loaded.backoff)
    scorer = Scorer(loaded.model)
    exact, log_z = score_text(scorer, encoded, "exact", with_log_z=True)
    selfn, _ = score_text(scorer, encoded, "self")
    lm = kenlm.Model(args.kenlm)
    ken = []
    for line in Path(args.text).read_text(encoding="utf-8").splitlines():
        ken.extend(prob * math.log(10) for prob, _, _ in lm.full_scores(" ".join(line.split()), bos=True, eos=True))
    ken = np.array(ken)
    assert len(ken) == len(exact)
    inside = encoded.ids != 1

    def ppl(values: np.ndarray) -> float:
        return round(math.exp(-values.mean()), 2)

    print(json.dumps({
        "tokens": len(exact), "outside_shortlist": int((~inside).sum()),
        "all tokens": {"cslm exact": ppl(exact), "cslm self-normalized": ppl(selfn), "kenlm": ppl(ken)},
        "shortlist tokens": {"cslm exact": ppl(exact[inside]), "cslm self-normalized": ppl(selfn[inside]),
                             "kenlm": ppl(ken[inside])},
        "outside tokens, mean log p": {"cslm": round(float(exact[~inside].mean()), 3),
                                       "kenlm": round(float(ken[~inside].mean()), 3)},
        "log Z": {"mean": round(float(log_z.mean()), 4), "std": round(float(log_z.std()), 4)},
    }, indent=1))


if __name__ == "__main__":
    main()
