#!/usr/bin/env bash
# Every test, Rust and Python: README's test command, and what .ci/run runs.
#
# 1. `cargo test --workspace` (the reader, the writer, the CLI, the benches'
#    smoke tests).
# 2. The Python package installed as a user installs it, with its test and
#    dask extras (`pip install "./crates/hurray-python[test,dask]"`), into a
#    virtualenv of its own
#    (target/venv; HURRAY_VENV to put it elsewhere, PYTHON to pick the
#    interpreter, 3.11 or newer), then pytest on crates/hurray-python/tests
#    and on the verdicts of the products suite (benches/peers).
#
# The corpus tests of both read HURRAY_INTEROP_DIR and HURRAY_CASES_DIR, and
# the citation test HURRAY_SPEC_DIR, when they are set (README: "Set-up").
set -euo pipefail
cd "$(dirname "$0")"

cargo test --workspace --locked

venv="${HURRAY_VENV:-target/venv}"
if [ ! -x "$venv/bin/python" ]; then
  "${PYTHON:-python3}" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "./crates/hurray-python[test,dask]"
"$venv/bin/python" -m pytest -q crates/hurray-python/tests benches/peers/test_products.py
