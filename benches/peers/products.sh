#!/usr/bin/env bash
# The sparse products beside scipy and MKL on the suite of shapes
# (issue #34), one command:
#
#   benches/peers/products.sh [--runs R] [--shapes l2-d2,far-d100,..]
#
# 1. the virtualenv of python.sh ($HURRAY_BENCH_DIR/venv-python), with the
#    peers of products-requirements.txt (MKL through sparse_dot_mkl) and,
#    if missing, this checkout's package (hurray_reader, for the mapped
#    scipy arrays);
# 2. the `gen` and `hurray-products` bins, release;
# 3. products.py: each shape's file (cached by name), the routines timed
#    in rotation, MKL's code path (MKL_VERBOSE=1); the table on stdout,
#    everything in results/products.json.
#
# MKL reads int64 indices only through its ILP64 interface
# (MKL_INTERFACE_LAYER=ILP64), and finds its libraries in the venv's lib.
# Its OpenMP threads sleep as soon as a call returns (KMP_BLOCKTIME=0):
# by default they spin for 200 ms, on the cores the next routine of the
# rotation (often ours, in the other process) is timed on.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="${HURRAY_BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hurray-bench}"
mkdir -p "$cache/results"
export HURRAY_BENCH_DIR="$cache"

venv="$cache/venv-python"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q --disable-pip-version-check -r "$here/products-requirements.txt" >&2
if ! "$venv/bin/python" -c 'import hurray_reader' 2>/dev/null; then
  "$venv/bin/pip" install -q --disable-pip-version-check "$root/crates/hurray-python" >&2
fi

cd "$root"
cargo build --release -q -p hurray-benches --bin gen --bin hurray-products >&2
target="$(cargo metadata --format-version 1 --no-deps | "$venv/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
export LD_LIBRARY_PATH="$venv/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MKL_INTERFACE_LAYER=ILP64
export KMP_BLOCKTIME=0
exec "$venv/bin/python" "$here/products.py" --gen "$target/release/gen" --ours "$target/release/hurray-products" \
  --dir "$cache" --out "$cache/results/products.json" "$@"
