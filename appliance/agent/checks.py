"""The check a final answer must pass before the engine accepts it.

Why: small models "finish" with an empty answer, with "I cannot determine that" while the tools
work fine, or with a plausible process name, PID or path that no tool ever showed (often copied
from the prompt's example). Each of these is sent back once with the reason, which is usually
enough for the model to fix it. The check is lexical on purpose: it compares the answer with the
values the observations actually contained, so it needs no model and cannot be argued with.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

# Fields that must be copied exactly from an observation, and those that may be phrased freely
# (then at least one of their words or numbers must come from an observation).
EXACT_FIELDS = ("process", "pid", "path", "port")
LOOSE_FIELDS = ("culprit", "value", "error")

REFUSAL = re.compile(
    r"\b(i\s+(cannot|can't|can\s*not|am\s+unable|am\s+not\s+able|don't\s+have\s+access|do\s+not\s+have\s+access)"
    r"|unable\s+to\s+(determine|find|access|help|check)|as\s+an\s+ai|i\s+don't\s+know|i\s+do\s+not\s+know)\b",
    re.I,
)
_VALUE = re.compile(r"=(\"[^\"]*\"|[^\s,\]\[]+)")
_PATH = re.compile(r"(?<![\w])(/[\w.@+\-]+(?:/[\w.@+\-]*)*)")
_WORD = re.compile(r"[A-Za-z0-9_./@+:%-]+")
_TRIVIAL = {"yes", "no", "-", "?", "0", "0.0", "none", "true", "false", "ok", "root", "/", "", "s", "r"}


def observed_facts(bodies: Iterable[str]) -> set[str]:
    """The values the observations established: `key=value` values, paths, and the integer form
    of decimal numbers (a model writes 97% for cpu_pct=97.0)."""
    facts: set[str] = set()
    for body in bodies:
        for match in _VALUE.finditer(body):
            value = match.group(1).strip('"').lower()
            facts.add(value)
            if re.fullmatch(r"\d+\.\d+", value):
                facts.add(value.split(".")[0])
        facts.update(m.group(1).lower().rstrip("/.") for m in _PATH.finditer(body))
    return {f for f in facts if f not in _TRIVIAL and len(f) >= 2}


def _words(text: str) -> list[str]:
    return [w.strip(".,:;%()").lower() for w in _WORD.findall(text)]


def _mentions(text: str, haystack: str, facts: set[str]) -> bool:
    """True when the text names an observed value, or quotes three words in a row of an
    observation (free-text lines such as log messages have no key=value form)."""
    lowered = text.lower()
    if any(re.search(rf"(?<![\w.]){re.escape(f)}(?![\w])", lowered) for f in facts if len(f) >= 3 or f.isdigit()):
        return True
    if any(len(w) >= 3 and w not in _TRIVIAL and (w in facts) for w in _words(text)):
        return True
    words = [w for w in _words(text) if w]
    flat = " ".join(_words(haystack))
    return any(" ".join(words[i : i + 3]) in flat for i in range(len(words) - 2))


def _appears(value: Any, haystack: str) -> bool:
    text = str(value).strip().lower()
    if not text:
        return True
    if isinstance(value, int) and not isinstance(value, bool):
        return re.search(rf"(?<![\d.]){text}(?![\d])", haystack) is not None
    return text in haystack


def check_answer(
    answer: str,
    result: Mapping[str, Any],
    bodies: list[str],
    *,
    tools_worked: bool,
) -> str | None:
    """None when the answer may be accepted, else the reason to give the model."""
    if not answer.strip():
        return "the answer is empty; write one or two sentences that answer the question"
    if REFUSAL.search(answer) and tools_worked:
        return ("the answer refuses, but the tools work; answer with what the observations showed "
                "or use another tool")
    haystack = "\n".join(bodies).lower()
    facts = observed_facts(bodies)
    for key in EXACT_FIELDS:
        if key in result and result[key] not in (None, "") and not _appears(result[key], haystack):
            return (f"result.{key} {result[key]!r} does not appear in any observation; "
                    "use only values the observations show")
    for key in LOOSE_FIELDS:
        value = result.get(key)
        if value in (None, ""):
            continue
        words = [w for w in _words(str(value)) if len(w) >= 2 and w not in _TRIVIAL]
        if words and not any(w in haystack for w in words):
            return (f"result.{key} {value!r} is not backed by any observation; "
                    "use only what the observations show")
    if bodies:
        stated = " ".join([answer, *(str(v) for v in result.values())])
        if not _mentions(stated, haystack, facts):
            return ("the answer does not mention any fact from the observations; name the process, "
                    "path, number or message that the evidence shows")
    return None
