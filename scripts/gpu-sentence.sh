#!/usr/bin/env bash
# The sentence model (the attention encoder-decoder over subwords, issue 51) trained on a lent GPU machine, in one
# short device run, as scripts/gpu-rnn.sh trains the phrase RNN.
#
#   here:        scripts/gpu-sentence.sh pack MODEL_DIR [RETURNED_DIR]
#                    MODEL_DIR: prepared by `pysmt sentence train --system SYSTEM --out MODEL_DIR --preset gpu
#                    --max-updates 1` (its subword model, job record and encoded bitext, compacted, go to
#                    .device-sentence/, which git ignores; one line if that is more than a device run carries);
#                    RETURNED_DIR: an earlier run's returned folder, whose model this run continues
#   the device:  run tool, carry [".device-sentence"], command: bash scripts/gpu-sentence.sh train [MINUTES [ARGS...]]
#                    trains the gpu preset on the GPU for MINUTES (default 7: the device's 15 minutes hold a
#                    start, this and the transfers), minibatches of the preset's 80 pairs unless --batch-size;
#                    $OUT gets weights-N.pt (< 16 MiB each: float16, the largest matrices int8 so that the gpu
#                    preset's 56 M weights come back at all), log.tsv, summary.json (updates, pairs/s, epochs,
#                    the validation perplexity of the trained and of the returned weights)
#   here:        scripts/gpu-sentence.sh unpack RETURNED_DIR MODEL_DIR
#                    MODEL_DIR/model.pt from the returned weights: the sentence feature and `pysmt sentence
#                    translate` use it
#
# ARGS go to `python -m rnn_feature.sentence.device_run train` (--preset, --batch-size, --valid-every, --device,
# --hp NAME=VALUE): tests/ runs the whole round trip on the CPU with a tiny model and budget.
set -euo pipefail
MODULE=rnn_feature.sentence.device_run
BUNDLE=${SENTENCE_BUNDLE:-.device-sentence}
source "$(dirname "$0")/gpu-steps.sh"
