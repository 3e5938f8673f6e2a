"""The check a final answer must pass before the engine accepts it.

Why: small models "finish" with an empty answer, with "I cannot determine that" while the tools
work fine, or with a plausible process name, PID or path that no tool ever showed (often copied
from the prompt's example). Each of these is sent back once with the reason, which is usually
enough for the model to fix it. The check is lexical on purpose: it compares the answer with the
values the observations actually contained, so it needs no model and cannot be argued with.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
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


def _appears(key: str, value: Any, haystack: str) -> bool:
    """An exact field is backed when its value occurs in an observation as a whole token; a small
    number (a model's favourite filler, e.g. port 1) must appear next to its own key."""
    text = str(value).strip().lower()
    if not text:
        return True
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 100:
            return re.search(rf"{key}\W{{0,3}}{value}(?![\d.])", haystack) is not None
        return re.search(rf"(?<![\w.]){value}(?![\w.])", haystack) is not None
    return text in haystack


def _loosely_backed(value: Any, haystack: str) -> bool:
    words = [w for w in _words(str(value)) if len(w) >= 2 and w not in _TRIVIAL]
    return not words or any(w in haystack for w in words)


@dataclass(frozen=True)
class Verdict:
    """problem: None when the answer is accepted. result: the result to keep (fields no
    observation backs are dropped when the main claim is backed). dropped: what was removed."""

    problem: str | None
    result: dict
    dropped: tuple[str, ...] = ()
    invented: bool = False  # the problem is a fact no observation shows (never passed on as is)


MAIN_FIELDS = ("culprit", "process")


def check_answer(
    answer: str,
    result: Mapping[str, Any],
    bodies: list[str],
    *,
    tools_worked: bool,
) -> Verdict:
    """Accept, accept with unbacked minor fields dropped, or reject with the reason for the model."""
    result = {k: v for k, v in dict(result).items() if v not in (None, "")}
    if not answer.strip():
        return Verdict("the answer is empty; write one or two sentences that answer the question", result)
    if REFUSAL.search(answer) and tools_worked:
        return Verdict("the answer refuses, but the tools work; answer with what the observations showed "
                       "or use another tool", result)
    haystack = "\n".join(bodies).lower()
    unbacked = [
        key for key, value in result.items()
        if (key in EXACT_FIELDS and not _appears(key, value, haystack))
        or (key in LOOSE_FIELDS and not _loosely_backed(value, haystack))
    ]
    if unbacked and (len(unbacked) == len(result) or any(k in MAIN_FIELDS for k in unbacked)):
        key = next((k for k in unbacked if k in MAIN_FIELDS), unbacked[0])
        return Verdict(f"result.{key} {result[key]!r} does not appear in any observation; "
                       "use only values the observations show", result, invented=True)
    kept = {k: v for k, v in result.items() if k not in unbacked}
    if bodies:
        stated = " ".join([answer, *(str(v) for v in kept.values())])
        if not _mentions(stated, haystack, observed_facts(bodies)):
            return Verdict("the answer does not mention any fact from the observations; name the process, "
                           "path, number or message that the evidence shows", result)
    return Verdict(None, kept, tuple(unbacked))
