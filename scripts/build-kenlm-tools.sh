#!/usr/bin/env bash
# KenLM, built once for everything that uses it: its source distribution (PyPI's kenlm, the version
# pyproject.toml's [tool.pysmt.kenlm] names) fetched into third_party/kenlm/src; its query libraries
# (static, position-independent) in third_party/kenlm/lib, which setup.py links into the search core;
# and its estimation tools (lmplz, build_binary; no package ships them; `pysmt train` and `pysmt lm`
# need them) in third_party/kenlm/bin, linked against the same libraries. All with CMake, on all cores,
# at the core's KENLM_MAX_ORDER.
# Usage: bash scripts/build-kenlm-tools.sh [--libraries]   (--libraries: Debian's packages, the sources
# and the libraries only, what the core's build needs; setup.sh builds the tools while the core compiles)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=third_party/kenlm/bin
LIB=third_party/kenlm/lib
SRC=third_party/kenlm/src
BUILD=$SRC/build
read -r KENLM_VERSION KENLM_MAX_ORDER < <("${PYTHON:-python3}" -c 'import tomllib
kenlm = tomllib.load(open("pyproject.toml", "rb"))["tool"]["pysmt"]["kenlm"]
print(kenlm["version"], kenlm["max-order"])')
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
    "${PYTHON:-python3}" -m pip download --quiet --no-deps --no-binary kenlm "kenlm==$KENLM_VERSION" -d "$SRC"
    tar xzf "$SRC"/kenlm-*.tar.gz -C "$SRC" --strip-components=1
fi
# What the libraries were built from and with: setup.py links them only when it asks for the same
stamp="kenlm $KENLM_VERSION KENLM_MAX_ORDER=$KENLM_MAX_ORDER"
build() {  # targets...
    # hidden symbols and no fused multiply-adds, as the core's own code is compiled (setup.py)
    cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DKENLM_MAX_ORDER="$KENLM_MAX_ORDER" \
        -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_CXX_FLAGS="-fvisibility=hidden -ffp-contract=off" >/dev/null
    cmake --build "$BUILD" --target "$@" -j "$(nproc)" >"$BUILD.$1.log" 2>&1 || { tail -30 "$BUILD.$1.log" >&2; exit 1; }
}
if [ "$(cat "$LIB/stamp" 2>/dev/null)" != "$stamp" ]; then
    rm -rf "$LIB" "$BIN"  # tools built at another order or version go too
    build kenlm kenlm_util
    mkdir -p "$LIB"
    cp "$BUILD/lib/libkenlm.a" "$BUILD/lib/libkenlm_util.a" "$LIB/"
    echo "$stamp" >"$LIB/stamp"
fi
if [ "${1:-}" = --libraries ] || { [ -x "$BIN/lmplz" ] && [ -x "$BIN/build_binary" ]; }; then
    exit 0
fi
build lmplz build_binary
mkdir -p "$BIN"
cp "$BUILD/bin/lmplz" "$BUILD/bin/build_binary" "$BIN/"
rm -rf "$BUILD" "$BUILD".*.log
echo "build-kenlm-tools: built $BIN/lmplz and $BIN/build_binary"
