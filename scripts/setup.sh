#!/usr/bin/env bash
# Set up the appliance in .venv: create the virtual environment if it is missing, and install the
# package with its test tools when pyproject.toml changed since the last install. Idempotent: a
# second run only checks and says so. The first install compiles llama.cpp (llama-cpp-python has
# no binary wheels): about 5 minutes on 2 cores; pip's wheel cache makes later installs fast.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
VENV=.venv
STAMP="$VENV/.appliance-installed"

if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "setup: $PYTHON not found; install Python 3.10 or newer (or set PYTHON=/path/to/python3)" >&2
    exit 1
fi
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
    echo "setup: $("$PYTHON" --version 2>&1) is too old; the appliance needs Python 3.10 or newer" >&2
    exit 1
fi

if [ ! -x "$VENV/bin/python" ]; then
    echo "setup: creating the virtual environment $VENV ($("$PYTHON" --version 2>&1))"
    if ! "$PYTHON" -m venv "$VENV"; then
        echo "setup: could not create $VENV; on Debian/Ubuntu install the python3-venv package" >&2
        exit 1
    fi
fi

wanted="$(sha256sum pyproject.toml | cut -d' ' -f1)"
installed="$(cat "$STAMP" 2>/dev/null || true)"
if [ "$wanted" = "$installed" ] && "$VENV/bin/python" -c 'import appliance, llama_cpp' 2>/dev/null; then
    echo "setup: $VENV is up to date (pyproject.toml unchanged since the last install)"
    exit 0
fi

if [ -n "$installed" ]; then
    echo "setup: pyproject.toml changed since the last install: installing again"
fi
echo "setup: installing the appliance and its dependencies into $VENV"
echo "setup: (llama-cpp-python compiles llama.cpp from source the first time: about 5 minutes on 2 cores)"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}"
if ! "$VENV/bin/python" -m pip install --disable-pip-version-check -e '.[test]'; then
    echo "setup: the install failed; compiling llama-cpp-python needs a C/C++ compiler (gcc, g++) and cmake" >&2
    exit 1
fi
echo "$wanted" > "$STAMP"
echo "setup: done"
