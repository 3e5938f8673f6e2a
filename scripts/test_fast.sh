#!/usr/bin/env bash
# The fast tier: every test that loads no model, aimed at two minutes on 2 cores (measured:
# docs/architecture.md#the-fast-tier). Most of the suite waits (analyzer windows, subprocesses,
# sockets) rather than computes, so it runs in parallel under pytest-xdist; the tests that plant or
# read machine-wide state (the `machine` marker, tests/conftest.py MACHINE_FILES) never run beside
# each other, one at a time in their own process. Those of them that assert only about what they
# planted (the `beside` marker, tests/conftest.py BESIDE, each with its reason) run beside the
# parallel tests, which read no machine-wide state; the rest run last, with nothing beside them:
# Phase 2 itself runs in two lanes at once (tests/conftest.py PLANTS_LANE), one test at a time in each:
#   phase 1: -m "not model and not machine" -n WORKERS                      } at the same time
#   phase 2: -m "not model and machine and beside" -n 2 --dist loadgroup     } (its report after phase 1's)
#   phase 3: -m "not model and machine and not beside"                       alone
# Each phase collects only the modules that can hold its tests (phase 1 `--machine-modules skip`,
# phases 2 and 3 `--machine-modules only`: tests/conftest.py MACHINE_MODULES).
# Usage: bash scripts/test_fast.sh [--workers N] [pytest arguments for every phase...]
# WORKERS defaults to 4 (twice the cores: the tests mostly wait). Python: $PYTHON or .venv/bin/python.
# Exits non-zero when any phase fails (all always run).
# Compiled bytecode is kept in a cache folder of the tier's own ($PYTHONPYCACHEPREFIX, by default
# under $TMPDIR), also where the environment turns writing it off (PYTHONDONTWRITEBYTECODE, which
# keeps __pycache__ out of a tree; this folder is outside it): hundreds of test processes and
# `appliance` commands would otherwise each compile the same modules again.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-${TMPDIR:-/tmp}/appliance-pycache-$(id -u)}"
unset PYTHONDONTWRITEBYTECODE

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

# The machine phases load no plugin their modules do not use (Hypothesis, Textual's snapshots,
# syrupy, anyio: a third of each pytest process's start-up); phase 1's tests use them.
UNUSED_BY_MACHINE_TESTS=(-p no:hypothesispytest -p no:textual-snapshot -p no:syrupy -p no:anyio)

start=$SECONDS
beside_log="$(mktemp -t appliance-test-fast-beside.XXXXXX)"
trap 'rm -f "$beside_log"' EXIT
echo "test_fast: phase 1, the tests that touch no machine-wide state, $WORKERS workers in parallel;"
echo "test_fast: phase 2 beside it, the machine tests that assert only about their own plants, in two lanes of one at a time"
"$PYTHON" -m pytest -q -m "not model and machine and beside" -n 2 --dist loadgroup --machine-modules only "${UNUSED_BY_MACHINE_TESTS[@]}" "$@" >"$beside_log" 2>&1 &
beside_pid=$!
"$PYTHON" -m pytest -q -m "not model and not machine" -n "$WORKERS" --machine-modules skip "$@"
parallel=$?
wait "$beside_pid"
beside=$?
echo "test_fast: phase 2 (ran beside phase 1):"
cat "$beside_log"
echo "test_fast: phase 3, the other machine tests, one at a time, alone ($((SECONDS - start)) s so far)"
"$PYTHON" -m pytest -q -m "not model and machine and not beside" --machine-modules only "${UNUSED_BY_MACHINE_TESTS[@]}" "$@"
alone=$?
echo "test_fast: phase 1 exit $parallel, phase 2 exit $beside, phase 3 exit $alone, $((SECONDS - start)) s"
# pytest's 5 (no test collected, e.g. a file list with no test of that phase) is not a failure
for code in $parallel $beside $alone; do
    if [ "$code" -ne 0 ] && [ "$code" -ne 5 ]; then
        exit "$code"
    fi
done
exit 0
