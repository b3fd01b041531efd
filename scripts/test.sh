#!/usr/bin/env bash
# Install cubiclab (Rust extension built by maturin) with its test extras, then run
# the Rust tests and the Python tests. Used by `.ci/run` and the README.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'
cargo test --workspace --release
python3 -m pytest -q tests
