#!/usr/bin/env bash
# Install cubiclab (Rust extension built by maturin) with its test extras, then run
# the Rust tests and the Python tests. Used by `.ci/run` and the README.
set -euo pipefail
cd "$(dirname "$0")/.."
# The kernel comparison (tests/test_kernel_cubic.py) needs iproute2's ip and tc; as root
# on a machine without them, install them (the test skips, with the reason, otherwise).
if ! command -v ip >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq iproute2 >/dev/null
fi
# The BPF ports (crates/cubiclab-bpf) need clang and bpftool (to compile them against the
# kernel's BTF) and libelf/zlib headers (for the vendored libbpf): installed likewise; the
# crate still builds without clang/bpftool and its loader then says what is missing.
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
    && ! { command -v clang && command -v bpftool && [ -e /usr/include/gelf.h ] && [ -e /usr/include/zlib.h ]; } >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq clang bpftool libelf-dev zlib1g-dev >/dev/null
fi
python3 -m pip install --quiet --disable-pip-version-check -e '.[test,docs]'
cargo test --workspace --release
cargo build --release -p cubiclab-bpf
python3 -m pytest -q tests
