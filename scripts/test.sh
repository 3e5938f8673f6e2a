#!/usr/bin/env bash
# Run the whole test suite: set up if needed, pull the three models the real-model tests use
# (SmolLM2-135M, Qwen2.5-Coder-0.5B and 1.5B, verified and skipped when already there), check the
# types (mypy) and the layer contracts (lint-imports), both configured in pyproject.toml, then pytest.
# Extra arguments go to pytest (e.g. `bash scripts/test.sh tests/test_pull.py -x`).
# `bash scripts/test.sh --fast [args]`: set up, then only the fast tier (scripts/test_fast.sh: no
# model, no model pull, no type check; the tests that touch no machine-wide state in parallel, the
# machine tests one at a time, beside them or alone: its header says which).
# Exits non-zero when a check fails, else with pytest's exit code.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

# One test drives the real TUI in tmux, as a person would. Install tmux when it is missing and we
# may (root with apt-get); otherwise that test says loudly that it was skipped (and fails under CI).
if ! command -v tmux >/dev/null 2>&1; then
    if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
        echo "test: installing tmux (apt-get) for the TUI test"
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux) >/dev/null \
            || echo "test: !!! could not install tmux; the tmux-driven TUI test will not run" >&2
    else
        echo "test: !!! tmux is missing: install it (apt-get install tmux) for the tmux-driven TUI test" >&2
    fi
fi

if [ "${1:-}" = "--fast" ]; then
    shift
    exec bash scripts/test_fast.sh "$@"
fi

for model in smollm2-135m-instruct qwen2.5-coder-0.5b-instruct qwen2.5-coder-1.5b-instruct; do
    echo "test: making sure the test model $model is installed and verified"
    if ! .venv/bin/appliance models pull "$model" >/dev/null; then
        echo "test: !!! could not pull $model: its real-model tests will be skipped (or fail under CI)" >&2
    fi
done

echo "test: checking types (mypy)"
.venv/bin/mypy
echo "test: checking the layer contracts (lint-imports)"
.venv/bin/lint-imports --no-logo --no-cache

echo "test: running the test suite"
exec .venv/bin/python -m pytest -q "$@"
