#!/usr/bin/env bash
# Benchmark 5 of issue #4: hurray-reader side by side with scipy, one run.
#
#   benches/peers/run.sh [--nnz N] [--runs R] [--process-runs P]
#
# 1. a virtualenv under the cache folder ($HURRAY_BENCH_DIR, else
#    ~/.cache/hurray-bench) with numpy + scipy from requirements.txt;
# 2. the matrix as .hry (`gen` bin: random10 CSC, float32, u64 indices,
#    100 M non-zeros by default) and, from the same bytes, as uncompressed .npz;
# 3. our in-process figures (`hurray-time` bin, Instant medians);
# 4. scipy's in-process figures and both whole processes (peers.py);
# 5. the comparison rows on stdout, everything in results/peers.json.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="${HURRAY_BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hurray-bench}"
nnz=100000000
runs=5
process_runs=10
while [ $# -gt 0 ]; do
  case "$1" in
    --nnz) nnz="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --process-runs) process_runs="$2"; shift 2 ;;
    *) echo "usage: $0 [--nnz N] [--runs R] [--process-runs P]" >&2; exit 2 ;;
  esac
done
mkdir -p "$cache/results"
export HURRAY_BENCH_DIR="$cache"

venv="$cache/venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt" >&2

cd "$root"
cargo build --release -q -p hurray-benches --bins -p hurray-inspect >&2
target="$(cargo metadata --format-version 1 --no-deps | "$venv/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
info="$cache/results/peers-matrix.json"
ours="$cache/results/hurray-time.json"
"$target/release/gen" --format csc --pattern random10 --values f32 --nnz "$nnz" > "$info"
hry="$("$venv/bin/python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["path"])' "$info")"
# hurray-time settles the .hry in the page cache, peers.py the .npz: warm reads on both sides.
"$target/release/hurray-time" "$hry" --runs "$runs" --out "$ours" > /dev/null
"$venv/bin/python" "$here/peers.py" --info "$info" --ours "$ours" --inspect "$target/release/hurray-inspect" \
  --runs "$runs" --process-runs "$process_runs" --out "$cache/results/peers.json"
