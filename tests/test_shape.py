"""The house rules of issue 16 that a reviewer would otherwise count by hand: no module of
`appliance/` over 400 lines unless its docstring says why splitting would hurt ("over 400 lines"),
and no function over 60 lines. (Import circles and layers: the import-linter contracts in
pyproject.toml, run by scripts/test.sh.)"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "appliance"
MODULE_LINES, FUNCTION_LINES = 400, 60


def _modules() -> list[Path]:
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 50  # the package, not an empty folder
    return modules


def test_no_module_over_400_lines_without_saying_why():
    long = []
    for path in _modules():
        text = path.read_text()
        if text.count("\n") > MODULE_LINES and "over 400 lines" not in (ast.get_docstring(ast.parse(text)) or ""):
            long.append(f"{path.relative_to(PACKAGE)}: {text.count(chr(10))} lines")
    assert not long, long


def test_no_function_over_60_lines():
    long = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > FUNCTION_LINES:
                    long.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}: {lines} lines")
    assert not long, long
