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

# llama.cpp is compiled for this CPU (-march=native). On a CPU that reports AMX, its AMX kernels crash
# the process with a general protection fault inside virtual machines that do not hand the tile state
# to processes (seen on this project's machines: every prompt evaluation segfaulted). There the build
# leaves AMX out (AVX-512 and the rest stay). pip's own wheel cache cannot tell such a build from an
# earlier one, so it is built once into a cache of the appliance's own and installed from there.
# The runtime requirement, not the test extra's "llama-cpp-python[server]" line below it.
LLAMA_SPEC="$(grep -o '"llama-cpp-python[>=<][^"]*"' pyproject.toml | head -n 1 | tr -d '"')"
NO_AMX_FLAGS="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
NO_AMX_WHEELS="${XDG_CACHE_HOME:-$HOME/.cache}/appliance/wheels-no-amx"
needs_no_amx() {
    grep -qw amx_tile /proc/cpuinfo 2>/dev/null && echo 'int main(void){return 0;}' \
        | ${CC:-cc} $NO_AMX_FLAGS -x c -o /dev/null - 2>/dev/null
}
llama_has_amx() {
    "$VENV/bin/python" -c 'import sys, llama_cpp; sys.exit(0 if b"AMX_INT8 = 1" in llama_cpp.llama_print_system_info() else 1)' 2>/dev/null
}
install_llama_without_amx() {
    if ! ls "$NO_AMX_WHEELS"/llama_cpp_python-*.whl >/dev/null 2>&1; then
        echo "setup: this CPU reports AMX: compiling llama.cpp without its AMX kernels (about 5 minutes on 2 cores)"
        mkdir -p "$NO_AMX_WHEELS"
        CFLAGS="${CFLAGS:-} $NO_AMX_FLAGS" CXXFLAGS="${CXXFLAGS:-} $NO_AMX_FLAGS" \
            "$VENV/bin/python" -m pip wheel --disable-pip-version-check --no-deps --no-cache-dir \
            -w "$NO_AMX_WHEELS" "$LLAMA_SPEC" || return 1
    fi
    "$VENV/bin/python" -m pip install --disable-pip-version-check --no-deps --force-reinstall --no-index \
        --find-links "$NO_AMX_WHEELS" llama-cpp-python
}

wanted="$(sha256sum pyproject.toml | cut -d' ' -f1)"
installed="$(cat "$STAMP" 2>/dev/null || true)"
if [ "$wanted" = "$installed" ] && "$VENV/bin/python" -c 'import appliance, llama_cpp' 2>/dev/null \
        && ! { needs_no_amx && llama_has_amx; }; then
    echo "setup: $VENV is up to date (pyproject.toml unchanged since the last install)"
    exit 0
fi

if [ -n "$installed" ]; then
    echo "setup: pyproject.toml changed since the last install: installing again"
fi
echo "setup: installing the appliance and its dependencies into $VENV"
echo "setup: (llama-cpp-python compiles llama.cpp from source the first time: about 5 minutes on 2 cores)"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}"
if needs_no_amx && ! install_llama_without_amx; then
    echo "setup: compiling llama-cpp-python without AMX failed; it needs a C/C++ compiler (gcc, g++) and cmake" >&2
    exit 1
fi
if ! "$VENV/bin/python" -m pip install --disable-pip-version-check -e '.[test]'; then
    echo "setup: the install failed; compiling llama-cpp-python needs a C/C++ compiler (gcc, g++) and cmake" >&2
    exit 1
fi
if needs_no_amx && llama_has_amx; then
    echo "setup: llama-cpp-python was installed with AMX kernels, which crash on this machine; delete $NO_AMX_WHEELS and run again" >&2
    exit 1
fi
echo "$wanted" > "$STAMP"
echo "setup: done"
