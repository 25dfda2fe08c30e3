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
MODULE=rnn_feature.device_run
BUNDLE=${RNN_BUNDLE:-.device-rnn}
source "$(dirname "$0")/gpu-steps.sh"
