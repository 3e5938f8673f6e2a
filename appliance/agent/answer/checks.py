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

from appliance.agent.answer.misfit import Kind, Misfit
from appliance.agent.answer.repeats import copies, normalized
from appliance.agent.answer.quantities import number_forms, quantities
from appliance.agent.answer.said import CULPRIT_FIELDS, says_all_clear
from appliance.analyzers.base import Finding

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
    """The values the observations established: `key=value` values, paths, numbers in the forms
    an answer may state them (`number_forms`)."""
    facts: set[str] = set()
    for body in bodies:
        for match in _VALUE.finditer(body):
            value = match.group(1).strip('"').lower()
            facts |= number_forms(value)
        facts.update(m.group(1).lower().rstrip("/.") for m in _PATH.finditer(body))
        # numbers of 3+ digits anywhere (a port or pid in a headline or a sentence, not key=value),
        # decimals anywhere (a share or a size a verdict or headline states: "/ 25.4% used") and
        # any share in percent ("/ (ext4) is 26 % used")
        facts.update(re.findall(r"(?<![\w.])\d{3,}(?![\w])", body))
        for number in re.findall(r"(?<![\w.])(\d+\.\d+|\d+(?=\s?%))(?![\w.])", body):
            facts |= number_forms(number)
        facts.update(quantities(body))
        # a process a verdict names in prose: "reaper (pid 4242)"
        for name, pid in re.findall(r"([\w.\-]{2,}) \(pid (\d+)\)", body):
            facts.update((name.lower(), pid))
    return {f for f in facts if f not in _TRIVIAL and len(f) >= 2}


def _words(text: str) -> list[str]:
    return [w.strip(".,:;%()").lower() for w in _WORD.findall(text)]


def _mentions(text: str, haystack: str, facts: set[str]) -> bool:
    """True when the text names an observed value, or quotes three words in a row of an
    observation (free-text lines such as log messages have no key=value form)."""
    lowered = text.lower()
    if quantities(text) & facts:
        return True
    if any(re.search(rf"(?<![\w.]){re.escape(f)}(?![\w])", lowered) for f in facts if len(f) >= 3 or f.isdigit()):
        return True
    if any(len(w) >= 3 and w not in _TRIVIAL and (w in facts) for w in _words(text)):
        return True
    words = [w for w in _words(text) if w]
    flat = " ".join(w for w in _words(haystack) if w)
    return any(" ".join(words[i : i + 3]) in flat for i in range(len(words) - 2))


def _paths_in(answer: str) -> list[str]:
    """Absolute paths of two or more parts that the answer names (lowercased, without trailing
    punctuation). Each must occur in an observation, whole or as the start of a longer one: Qwen
    1.5B "found" /…/share/000000… after looking only at disk_usage."""
    paths = []
    for match in _PATH.finditer(answer):
        path = match.group(1).rstrip("/.,:;").lower()
        if path.count("/") >= 2:
            paths.append(path)
    return paths


def unobserved_path(text: str, haystack: str) -> str | None:
    """The first absolute path `text` names that no observation shows (`haystack`: the
    observations joined, lowercased); a small model copying a long path often doubles a word in it."""
    return next((p for p in _paths_in(text) if p not in haystack), None)


def _quotes(value: str, padded_words: str) -> bool:
    """True when a result value is a phrase an observation shows word for word (at least six
    letters): result.error "quota exceeded" from "…failed: quota exceeded (507…" names what
    the machine showed, though it is two words, not the three in a row `_mentions` asks of prose.
    padded_words: the observations' words joined by spaces, with a space at each end."""
    phrase = " ".join(w for w in _words(value) if w)
    if len(phrase.replace(" ", "")) < 6:
        return False
    return f" {phrase} " in padded_words


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
    copied: bool = False  # the answer copies the prompt's example or the engine's own words
    kind: Kind | None = None  # what the problem is (agent/answer/misfit.py)
    own: str = ""  # the problem's own words, without the value it quotes from the answer
    finding: Finding | None = None  # the verdict the problem rests on
    rule: str = ""  # the answer rule that found it (agent/answer/rules.py)
    name: str = ""  # what the retry must name, when the rule knows it

    @property
    def misfit(self) -> Misfit | None:
        """The problem as a value (what steering and the engine's own answer act on)."""
        if self.problem is None or self.kind is None:
            return None
        return Misfit(self.kind, self.problem, self.finding, own=self.own, invented=self.invented, rule=self.rule,
                      name=self.name)


MAIN_FIELDS = ("culprit", "process")
# A result value that names nobody: what a model writes into `culprit` when nothing is at fault.
_NO_ONE = re.compile(r"^(?:none|nothing|nobody|no one|unknown|n/?a|null|-|no\b.*)$", re.I)
# A value of any field that states nothing.
_PLACEHOLDER = re.compile(r"^(?:unknown|n/?a|null|none|-|\?|not (?:known|available|applicable))$", re.I)


def _not_an_answer(answer: str, result: dict, *, tools_worked: bool, looked: bool,
                   copied_texts: Iterable[str], rejected: Iterable[str]) -> Verdict | None:
    """The refusals that need no observation: empty, a repeat of a refused answer, copied text, an
    answer before looking, a refusal while the tools work."""
    if not answer.strip():
        return Verdict("[empty-answer]", result, kind=Kind.EMPTY)
    if normalized(answer) in set(rejected):
        return Verdict("[same-answer-as-rejected]", result, copied=True, kind=Kind.SAME_AS_REJECTED)
    if copies(answer, copied_texts):
        return Verdict("[copied-text: not from this machine]", result, copied=True, kind=Kind.COPIED)
    if not looked:
        return Verdict("[no-tool-used-yet: call a tool first]", result, kind=Kind.NO_TOOL_YET)
    if REFUSAL.search(answer) and tools_worked:
        return Verdict("[refusal-while-tools-work]", result, kind=Kind.REFUSAL)
    return None


def check_answer(answer: str, result: Mapping[str, Any], bodies: list[str], *, tools_worked: bool,
                 looked: bool = True, copied_texts: Iterable[str] = (), rejected: Iterable[str] = ()) -> Verdict:
    """Accept, accept with unbacked minor fields dropped, or reject with the reason for the model.

    looked: a tool was called beyond the snapshot, or the snapshot plainly answers the question.
    copied_texts: texts an answer must not repeat (the prompt's examples, the engine's messages).
    rejected: answers already sent back (normalized); the same one again is never accepted.

    The reasons are short labels, not sentences that read like an answer (SmolLM2 copied the
    earlier prose reasons as its answer)."""
    result = {k: v for k, v in dict(result).items() if v not in (None, "")}
    refused = _not_an_answer(answer, result, tools_worked=tools_worked, looked=looked,
                             copied_texts=copied_texts, rejected=rejected)
    if refused is not None:
        return refused
    # "none", "unknown" or "no process" as the culprit names nobody: the answer has no culprit;
    # "unknown" or "n/a" in any field states nothing at all
    result = {k: v for k, v in result.items()
              if not (_NO_ONE if k in CULPRIT_FIELDS else _PLACEHOLDER).match(str(v).strip())}
    haystack = "\n".join(bodies).lower()
    unbacked = [
        key for key, value in result.items()
        if (key in EXACT_FIELDS and not _appears(key, value, haystack))
        or (key in LOOSE_FIELDS and not _loosely_backed(value, haystack))
    ]
    # A free-text culprit of the model's own wording ("server" for "503 Service Unavailable") is
    # dropped, not a reason to send the answer back, when another field quotes an observation.
    padded_words = f" {' '.join(_words(haystack))} "
    grounded = any(_quotes(str(v), padded_words) for k, v in result.items() if k not in unbacked and isinstance(v, str))
    # ... and so is one when the answer itself names what the observations showed ("the disk is
    # full: /data/incoming 100 % used" with culprit "disk").
    names_observed = any(k in LOOSE_FIELDS for k in unbacked) and _mentions(answer, haystack, observed_facts(bodies))
    fatal = [k for k in unbacked if k in MAIN_FIELDS and not (k in LOOSE_FIELDS and (grounded or names_observed))]
    # every field unbacked: the answer rests on nothing, unless they are all the model's own words
    # beside an answer that names what the observations showed ("up 3 h 37 min since 20:19" with
    # value "no reboot"), which the fields' going leaves whole
    nothing_backed = len(unbacked) == len(result) and not (names_observed and all(k in LOOSE_FIELDS for k in unbacked))
    if unbacked and (nothing_backed or fatal):
        key = (fatal or unbacked)[0]
        return Verdict(f"[result.{key}={result[key]!r} not-in-any-observation]", result, invented=True,
                       kind=Kind.UNBACKED_FIELD, own=f"[result.{key} not-in-any-observation]")
    invented_path = unobserved_path(answer, haystack)
    if invented_path is not None:
        return Verdict(f"[answer-path {invented_path!r} not-in-any-observation]", result, invented=True,
                       kind=Kind.UNBACKED_PATH, own="[answer-path not-in-any-observation]")
    kept = {k: v for k, v in result.items() if k not in unbacked}
    # An answer that says nothing is wrong contradicts a culprit in its result (Qwen 1.5B: "The
    # weekly backup log does not report any errors." with culprit "backup log"): the culprit goes,
    # also when the answer is accepted unchecked at the last step.
    contradicting = [k for k in CULPRIT_FIELDS if k in kept] if says_all_clear(answer) else []
    final = {k: v for k, v in kept.items() if k not in contradicting}
    dropped = tuple(unbacked + contradicting)
    if bodies:
        stated = " ".join([answer, *(str(v) for v in kept.values())])
        # `grounded` already asked whether a kept value quotes an observation
        if not grounded and not _mentions(stated, haystack, observed_facts(bodies)):
            return Verdict("[no-observed-fact-named]", final, dropped, kind=Kind.NO_FACT)
    return Verdict(None, final, dropped)
