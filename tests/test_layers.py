"""The layers stay honest at run time: the core never loads the UI, only the model layer loads
llama.cpp, and no layer loads one above it.

The static contracts (`lint-imports`, pyproject.toml) see every import statement; these checks see
what really gets loaded, including imports done through importlib (the CLI's lazy commands). Each
check imports modules in a fresh interpreter, so what earlier tests imported cannot hide a
layering mistake.
"""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import pytest

import appliance

CORE = [
    "appliance.tools.registry",
    "appliance.agent.engine",
    "appliance.store",
    "appliance.llm.runtime",
    "appliance.llm.chat_model",
    "appliance.eval.runner",
    "appliance.cli",
]

# Lowest first; a package may load the ones before it, never one after it.
LAYERS = ["tools", "analyzers", "llm", "agent", "store", "eval", "tui", "commands"]
SIBLINGS = {"analyzers": {"llm"}, "llm": {"analyzers"}, "eval": {"tui"}, "tui": {"eval"}}


def imported_after(modules: list[str]) -> set[str]:
    code = "import sys\n" + "".join(f"import {m}\n" for m in modules) + "print('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def modules_of(layer: str) -> list[str]:
    package = f"appliance.{layer}"
    path = [f"{appliance.__path__[0]}/{layer}"]
    return [package] + [info.name for info in pkgutil.walk_packages(path, prefix=package + ".")]


def test_core_never_imports_textual():
    loaded = imported_after(CORE)
    assert not {m for m in loaded if m == "textual" or m.startswith("textual.")}


@pytest.mark.parametrize("module", ["appliance.tools.registry", "appliance.agent.engine", "appliance.store", "appliance.cli"])
def test_llama_cpp_is_imported_lazily(module):
    """Tools, engine, store and the CLI's start-up run without loading llama.cpp's shared library."""
    assert "llama_cpp" not in imported_after([module])


@pytest.mark.parametrize("layer", LAYERS[:-1])
def test_a_layer_loads_nothing_above_it(layer):
    """Every module of the layer imported at once loads no module of a higher layer (or a sibling)."""
    mine = modules_of(layer)
    above = {f"appliance.{name}" for name in LAYERS[LAYERS.index(layer) + 1:]} | {
        f"appliance.{name}" for name in SIBLINGS.get(layer, ())}
    loaded = imported_after(mine)
    assert len(mine) > 1 and set(mine) <= loaded
    assert not {m for m in loaded if ".".join(m.split(".")[:2]) in above}
    if layer != "tui":
        assert not {m for m in loaded if m.split(".")[0] in ("textual", "rich")}
