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
# The oldest Python pyproject's requires-python claims (from pyenv, no download): the extension
# built above is abi3, so its tree is installed there as built (a .pth, as pip's editable
# install does) with the package's dependencies as pip resolves them for that Python; then
# the default run and the tests of the simulation, its snapshots (bit-identical) and errors.
oldest=$(python3 -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["requires-python"].removeprefix(">="))')
old_python=$(ls -d "$(pyenv root 2>/dev/null)"/versions/"$oldest".*/bin/python3 2>/dev/null | sort -V | tail -1)
[ -n "$old_python" ] || old_python=$(command -v "python$oldest") \
    || { echo "test.sh: Python $oldest (requires-python) not found: pyenv install $oldest"; exit 1; }
old_venv=target/ci-python$oldest
rm -rf "$old_venv" && "$old_python" -m venv "$old_venv"
python3 -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]))' \
    > "$old_venv/requirements.txt"
"$old_venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$old_venv/requirements.txt" pytest hypothesis
"$old_venv/bin/python" -c 'import site, sys; open(site.getsitepackages()[0] + "/cubiclab.pth", "w").write(sys.argv[1])' "$PWD/python"
"$old_venv/bin/python" -m cubiclab.cli run --out "$old_venv/out" --quiet
"$old_venv/bin/python" -m pytest -q -p no:cacheprovider tests/test_simulate.py tests/test_snapshots.py tests/test_cwnd_snapshots.py tests/test_suggest.py \
    tests/test_results_schema.py
