"""The layers stay honest: the core never imports the UI, and only the model layer imports llama.cpp.

Each check imports modules in a fresh interpreter, so what earlier tests imported cannot hide a
layering mistake.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

CORE = [
    "appliance.tools.registry",
    "appliance.agent.engine",
    "appliance.store",
    "appliance.llm.runtime",
    "appliance.llm.chat_model",
    "appliance.eval.runner",
    "appliance.cli",
]


def imported_after(modules: list[str]) -> set[str]:
    code = "import sys\n" + "".join(f"import {m}\n" for m in modules) + "print('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_core_never_imports_textual():
    loaded = imported_after(CORE)
    assert not {m for m in loaded if m == "textual" or m.startswith("textual.")}


@pytest.mark.parametrize("module", ["appliance.tools.registry", "appliance.agent.engine", "appliance.store", "appliance.cli"])
def test_llama_cpp_is_imported_lazily(module):
    """Tools, engine, store and the CLI's start-up run without loading llama.cpp's shared library."""
    assert "llama_cpp" not in imported_after([module])


def test_tools_layer_imports_nothing_above_it():
    loaded = imported_after(["appliance.tools.registry"])
    above = {m for m in loaded if m.startswith(("appliance.agent", "appliance.store", "appliance.tui", "appliance.eval", "appliance.commands"))}
    assert not above
