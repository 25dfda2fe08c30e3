#!/usr/bin/env bash
# Fetch the kenlm source distribution from PyPI into third_party/kenlm/src (the compiled search
# core is built against it: see setup.py) and build KenLM's estimation tools (lmplz, build_binary)
# from it into third_party/kenlm/bin. No package ships them; `pysmt train` and `pysmt lm` need them.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=third_party/kenlm/bin
SRC=third_party/kenlm/src
KENLM_VERSION=0.3.0
# Boost for lmplz; zlib, bzip2 and xz so that KenLM (in the tools and in the search core) reads compressed models
PACKAGES="libboost-program-options-dev libboost-system-dev libboost-thread-dev libboost-test-dev zlib1g-dev libbz2-dev liblzma-dev cmake g++"
missing=$(for p in $PACKAGES; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "build-kenlm-tools: installing $missing"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
    else
        echo "build-kenlm-tools: please install: $missing (e.g. sudo apt-get install $missing), then rerun" >&2
        exit 1
    fi
fi
if [ ! -f "$SRC/lm/model.hh" ]; then
    rm -rf "$SRC" && mkdir -p "$SRC"
    .venv/bin/python -m pip download --quiet --no-deps --no-binary kenlm "kenlm==$KENLM_VERSION" -d "$SRC"
    tar xzf "$SRC"/kenlm-*.tar.gz -C "$SRC" --strip-components=1
fi
if [ -x "$BIN/lmplz" ] && [ -x "$BIN/build_binary" ]; then
    exit 0
fi
cmake -S "$SRC" -B "$SRC/build" -DCMAKE_BUILD_TYPE=Release -DKENLM_MAX_ORDER=7 >/dev/null
cmake --build "$SRC/build" --target lmplz build_binary -j "$(nproc)" >"$SRC/build.log" 2>&1 || { tail -30 "$SRC/build.log" >&2; exit 1; }
mkdir -p "$BIN"
cp "$SRC/build/bin/lmplz" "$SRC/build/bin/build_binary" "$BIN/"
rm -rf "$SRC/build"
echo "build-kenlm-tools: built $BIN/lmplz and $BIN/build_binary"
