#!/usr/bin/env bash
# The fast tier: every test that loads no model, aimed at two minutes on 2 cores (measured: docs/architecture.md#the-fast-tier). Most of the
# suite waits (analyzer windows, subprocesses, sockets) rather than computes, so it runs in
# parallel under pytest-xdist; the tests that plant or read machine-wide state (the `machine`
# marker, tests/conftest.py MACHINE_FILES) cannot run beside each other and run after, serially.
#   phase 1: -m "not model and not machine" -n WORKERS
#   phase 2: -m "not model and machine"
# Usage: bash scripts/test_fast.sh [--workers N] [pytest arguments for both phases...]
# WORKERS defaults to 4 (twice the cores: the tests mostly wait). Python: $PYTHON or .venv/bin/python.
# Exits non-zero when either phase fails (both always run).
set -uo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-.venv/bin/python}"
WORKERS=4
if [ "${1:-}" = "--workers" ]; then
    if ! [[ "${2:-}" =~ ^[1-9][0-9]*$ ]]; then
        echo "test_fast: --workers needs a positive whole number, got '${2:-}'" >&2
        exit 2
    fi
    WORKERS="$2"
    shift 2
fi

start=$SECONDS
echo "test_fast: phase 1, the tests that touch no machine-wide state, $WORKERS workers in parallel"
"$PYTHON" -m pytest -q -m "not model and not machine" -n "$WORKERS" "$@"
parallel=$?
echo "test_fast: phase 2, the machine tests, one at a time"
"$PYTHON" -m pytest -q -m "not model and machine" "$@"
serial=$?
echo "test_fast: phase 1 exit $parallel, phase 2 exit $serial, $((SECONDS - start)) s"
# pytest's 5 (no test collected, e.g. a file list with no test of that phase) is not a failure
for code in $parallel $serial; do
    if [ "$code" -ne 0 ] && [ "$code" -ne 5 ]; then
        exit "$code"
    fi
done
exit 0
