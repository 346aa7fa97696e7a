#!/usr/bin/env bash
# The Python package beside scipy's load_npz and the reference binding
# (issue #30), one run:
#
#   benches/peers/python.sh [--nnz N] [--runs R]
#
# 1. a virtualenv under the cache folder ($HURRAY_BENCH_DIR, else
#    ~/.cache/hurray-bench) with the peers of python-requirements.txt and
#    this checkout's package with its dask extra;
# 2. the matrix (`gen` bin: random100 CSC, float32, 100 M non-zeros by
#    default: 1 M x 1 M, 1.2 GB) and, once, the same as an uncompressed .npz;
# 3. python.py: every case timed in rotation, each case's RSS in a fresh
#    process, A @ x against an in-memory copy; the ratios on stdout and
#    everything in results/python-peers.json.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="${HURRAY_BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hurray-bench}"
nnz=100000000
runs=5
while [ $# -gt 0 ]; do
  case "$1" in
    --nnz) nnz="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    *) echo "usage: $0 [--nnz N] [--runs R]" >&2; exit 2 ;;
  esac
done
mkdir -p "$cache/results"
export HURRAY_BENCH_DIR="$cache"

venv="$cache/venv-python"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q --disable-pip-version-check -r "$here/python-requirements.txt" "$root/crates/hurray-python[dask]" >&2

cd "$root"
cargo build --release -q -p hurray-benches --bin gen >&2
target="$(cargo metadata --format-version 1 --no-deps | "$venv/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
hry="$("$target/release/gen" --format csc --pattern random100 --values f32 --nnz "$nnz" | "$venv/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["path"])')"
"$venv/bin/python" "$here/python.py" --hry "$hry" --runs "$runs" --dask --out "$cache/results/python-peers.json"
