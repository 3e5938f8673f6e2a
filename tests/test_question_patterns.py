"""Few patterns read English in the engine: the question's reader keeps the exact mentions and a
handful of structural words; the rest is the model's labels and the typed facts (issue 55)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

AGENT = Path(__file__).resolve().parents[1] / "appliance" / "agent"
LIMIT = 15
_RE_CALLS = {"compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"}
# an English word in a pattern: three letters or more once escapes, classes and group names are out
_ESCAPES = re.compile(r"\\[a-zA-Z]|\(\?P?<[^>]*>|\(\?[:!=<]+|\[[^\]]*\]|\{[^}]*\}")
_WORD = re.compile(r"[a-zA-Z]{3,}")
# The engine's own formats are not natural language: the tools' record keys and units ("pid=4711
# name=x", "12 bytes") and the prompt's tags (<observation>, <reply>, <plan>).
FORMAT_WORDS = re.compile(r"\b(?:pid|name|bytes|observation|reply|plan)\b")


def _pattern(node: ast.AST) -> str | None:
    """The literal text of a pattern argument (an f-string's literal parts), or None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
    if isinstance(node, ast.BinOp):
        parts = [_pattern(node.left), _pattern(node.right)]
        return "".join(p for p in parts if p)
    return None


def natural_language_patterns() -> list[tuple[str, int, str]]:
    """Every regular expression in agent/ whose pattern holds an English word."""
    found = []
    for path in sorted(AGENT.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in _RE_CALLS and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "re" and node.args):
                continue
            text = _pattern(node.args[0])
            if text and _WORD.search(FORMAT_WORDS.sub(" ", _ESCAPES.sub(" ", text))):
                found.append((str(path.relative_to(AGENT)), node.lineno, text[:60]))
    return found


def test_the_counter_sees_an_english_pattern_and_not_a_shape():
    assert _WORD.search(_ESCAPES.sub(" ", r"\bhow\s+many\b"))
    assert not _WORD.search(_ESCAPES.sub(" ", r"(?<![\w.])(\d+(?:[.,]\d+)*)(?P<unit>%)?"))
    assert not _WORD.search(FORMAT_WORDS.sub(" ", _ESCAPES.sub(" ", r"\bpid=(\d+) name=(\S+)")))


def test_few_regular_expressions_read_natural_language_in_the_engine():
    found = natural_language_patterns()
    print(f"\n{len(found)} regular expressions over natural-language text in appliance/agent (limit {LIMIT}):")
    for path, line, text in found:
        print(f"  {path}:{line}  {text}")
    assert len(found) <= LIMIT
