#!/usr/bin/env bash
# The RNN Encoder-Decoder trained on a lent GPU machine, in one short device run (issue 38).
#
#   here:        scripts/gpu-rnn.sh pack MODEL_DIR [RETURNED_DIR]
#                    MODEL_DIR: prepared by `pysmt rnn train --pairs-for ... --out MODEL_DIR --max-updates 1`
#                    (its encoded pairs and shortlists are copied to .device-rnn/, which git ignores);
#                    RETURNED_DIR: an earlier run's returned folder, whose model this run continues
#   the device:  run tool, carry [".device-rnn"], command: bash scripts/gpu-rnn.sh train [MINUTES [ARGS...]]
#                    trains the paper preset on the GPU for MINUTES (default 7: the device's 15 minutes
#                    hold a start, this and the transfers), minibatches of 512, then scores every pair;
#                    $OUT gets weights-N.pt (float16, < 16 MiB each), scores.npy (float32), log.tsv,
#                    summary.json (pairs/s, updates, epochs, validation perplexity)
#   here:        scripts/gpu-rnn.sh unpack RETURNED_DIR MODEL_DIR
#                    MODEL_DIR/model.pt from the returned weights: `pysmt rnn score`, the features use it
#
# ARGS go to `python -m rnn_feature.device_run train` (--preset, --batch-size, --device, --hp NAME=VALUE):
# tests/ runs the whole round trip on the CPU with a tiny model and budget.
set -euo pipefail
cd "$(dirname "$0")/.."
BUNDLE=${RNN_BUNDLE:-.device-rnn}
PYTHON=${PYTHON:-python3}
export PYTHONPATH="$PWD:$PWD/plugins/rnn_feature${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
command=${1:?usage: gpu-rnn.sh pack MODEL_DIR [RETURNED_DIR] | train [MINUTES [ARGS...]] | unpack RETURNED_DIR MODEL_DIR}
shift
case "$command" in
  pack)
    "$PYTHON" -m rnn_feature.device_run pack "${1:?MODEL_DIR}" "$BUNDLE" ${2:+--start "$2"}
    du -sh "$BUNDLE" ;;
  train)
    minutes=${1:-7}
    shift || true
    [ -n "${OUT:-}" ] || { echo "gpu-rnn.sh train: \$OUT (the folder that comes back) is not set" >&2; exit 2; }
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
    "$PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())'
    "$PYTHON" -m rnn_feature.device_run train "$BUNDLE" "$OUT" --minutes "$minutes" "$@" ;;
  unpack)
    "$PYTHON" -m rnn_feature.device_run unpack "${1:?RETURNED_DIR}" "${2:?MODEL_DIR}" ;;
  *)
    echo "gpu-rnn.sh: unknown step $command (pack, train or unpack)" >&2
    exit 2 ;;
esac
