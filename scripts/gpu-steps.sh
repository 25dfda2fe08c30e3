# The steps of a neural model's training on a lent GPU machine (pack here, train there, unpack here), sourced by
# scripts/gpu-rnn.sh and scripts/gpu-sentence.sh after they set MODULE (the Python module whose pack, train and
# unpack subcommands do the work) and BUNDLE (the folder, ignored by git, that the device run carries).
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
export PYTHONPATH="$PWD:$PWD/plugins/rnn_feature${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
script=$(basename "$0")
command=${1:?usage: $script pack MODEL_DIR [RETURNED_DIR] | train [MINUTES [ARGS...]] | unpack RETURNED_DIR MODEL_DIR}
shift
case "$command" in
  pack)
    "$PYTHON" -m "$MODULE" pack "${1:?MODEL_DIR}" "$BUNDLE" ${2:+--start "$2"}
    du -sh "$BUNDLE" ;;
  train)
    minutes=${1:-7}
    shift || true
    [ -n "${OUT:-}" ] || { echo "$script train: \$OUT (the folder that comes back) is not set" >&2; exit 2; }
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
    "$PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())'
    "$PYTHON" -m "$MODULE" train "$BUNDLE" "$OUT" --minutes "$minutes" "$@" ;;
  unpack)
    "$PYTHON" -m "$MODULE" unpack "${1:?RETURNED_DIR}" "${2:?MODEL_DIR}" ;;
  *)
    echo "$script: unknown step $command (pack, train or unpack)" >&2
    exit 2 ;;
esac
