#!/usr/bin/env bash
# Issue 38's go/no-go: does the RNN, added as a phrase-table column, improve the news system?
#
#   bash bench/rnn_go_no_go.sh SYSTEM MODEL OUT [SEED [ITERATIONS]]
#
# SYSTEM: a system folder (`pysmt train --preset news`); MODEL: an RNN model folder trained on the
# pairs for newstest2012 + 2013 (`pysmt rnn train --pairs-for ...`, or scripts/gpu-rnn.sh's unpack).
# It binarizes SYSTEM into OUT/system-bin, stores MODEL's scores of the pairs for newstest2012 and
# 2013 as the table's column (`pysmt rnn score --pairs-for`), tunes Baseline and RNN (`--features rnn
# --param rnn.mode=column`) on newstest2012 with kbmira (seed SEED, default 0; ITERATIONS, default 3),
# decodes newstest2013 with each and prints sacrebleu's BLEU with the paired bootstrap test of RNN
# against Baseline (OUT/evaluation.txt). Every step resumes or is skipped when its output is there,
# so rerunning the command continues; THREADS (default 2) decoding processes. BASELINE=DIR takes the
# Baseline's tune and test output from another OUT of this script (same system, seed and iterations).
# CONFIGS (default "rnn"): the configurations beside the Baseline, of "rnn", "rnn-wp" (RNN + WP:
# the word penalty of the target words the network does not know, its shortlist MODEL's), "cslm-rnn"
# and "cslm-rnn-wp" (the CSLM in CSLM=DIR, `pysmt cslm train --shortlist MODEL/target.vocab`, added).
# TUNE_OPTIONS: more `pysmt tune` options for every tuning, e.g. "--mira-c 0.1".
set -euo pipefail
SYSTEM=$(realpath "${1:?SYSTEM}") MODEL=$(realpath "${2:?MODEL}") OUT=${3:?OUT}
SEED=${4:-0} ITERATIONS=${5:-3} THREADS=${THREADS:-2}
DATA=$(realpath "${DATA:-$(dirname "$0")/../../shared/data}")/news
PYSMT=${PYSMT:-pysmt}
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
[ -f "$OUT/system-bin/pysmt.toml" ] || "$PYSMT" binarize -c "$SYSTEM/pysmt.toml" -o "$OUT/system-bin"
TABLE=$(python3 -c '
import sys, tomllib
config = tomllib.load(open(sys.argv[1], "rb"))
print(next(f["path"] for f in config["feature"] if f["type"] == "phrase-table"))' "$OUT/system-bin/pysmt.toml")
case "$TABLE" in /*) ;; *) TABLE="$OUT/system-bin/$TABLE" ;; esac
"$PYSMT" rnn score --model "$MODEL" --phrase-table "$TABLE" --threads "$THREADS" \
  --pairs-for "$DATA/newstest2012.en" --pairs-for "$DATA/newstest2013.en"
tune() {  # NAME FEATURE-OPTIONS...
  local name=$1
  shift
  # shellcheck disable=SC2086  # TUNE_OPTIONS is split into words on purpose
  "$PYSMT" tune -c "$OUT/system-bin/pysmt.toml" --src "$DATA/newstest2012.en" --ref "$DATA/newstest2012.fr" \
    --out "$OUT/tune-$name" --optimizer kbmira --seed "$SEED" --max-iterations "$ITERATIONS" \
    --threads "$THREADS" --quiet ${TUNE_OPTIONS:-} "$@"
  if [ ! -s "$OUT/test-$name.fr" ]; then
    "$PYSMT" decode -c "$OUT/tune-$name/pysmt.toml" -i "$DATA/newstest2013.en" --threads "$THREADS" \
      > "$OUT/test-$name.fr.part"
    mv "$OUT/test-$name.fr.part" "$OUT/test-$name.fr"
  fi
}
if [ -n "${BASELINE:-}" ] && [ ! -e "$OUT/tune-baseline" ]; then
  ln -s "$(realpath "$BASELINE")/tune-baseline" "$OUT/tune-baseline"
  cp "$BASELINE/test-baseline.fr" "$OUT/test-baseline.fr"
fi
[ -n "${BASELINE:-}" ] || tune baseline  # a Baseline taken from another OUT was tuned on that OUT's system-bin
CONFIGS=${CONFIGS:-rnn}
for config in $CONFIGS; do
  case "$config" in
    rnn | rnn-wp | cslm-rnn | cslm-rnn-wp) ;;
    *) echo "rnn_go_no_go.sh: CONFIGS: unknown configuration $config (rnn, rnn-wp, cslm-rnn, cslm-rnn-wp)" >&2; exit 2 ;;
  esac
  params=()  # a configuration's name is its features, joined by "-"
  for feature in ${config//-/ }; do
    case "$feature" in
      cslm) params+=(--param "cslm.model=$(realpath "${CSLM:?CSLM}")") ;;
      rnn) params+=(--param "rnn.model=$MODEL" --param rnn.mode=column) ;;
      wp) params+=(--param "wp.model=$MODEL") ;;
    esac
  done
  tune "$config" --features "${config//-/,}" "${params[@]}"
done
for name in baseline $CONFIGS; do
  echo "$name: dev BLEU per iteration $(cut -f2 "$OUT/tune-$name/summary.tsv" | tail -n +2 | paste -sd' ')"
done | tee "$OUT/evaluation.txt"
tests=()
for name in baseline $CONFIGS; do tests+=("$OUT/test-$name.fr"); done
"$PYSMT" evaluate -r "$DATA/newstest2013.fr" "${tests[@]}" | tee -a "$OUT/evaluation.txt"
