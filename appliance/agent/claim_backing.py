"""What a claim's sentence states — pids, numbers with their units, paths, addresses, the names
the facts know — and which shown facts hold each: the backing the claim checks judge.

Why apart from the checks: finding where a stated thing stands is one job (the engine uses it to
complete a claim's cites); judging the claim is another (agent/claim_checks.py).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Callable, Protocol, Sequence

from appliance.agent.claim import Claim
from appliance.agent.facts import MACHINE, NUMBER, PATH, Fact, FactBook, Quantity


class Shown(Protocol):
    """What the backing reads of a judgment's situation (claim_checks.Situation is one): the facts
    shown, the question's text, and the facts a claim cites."""

    @property
    def book(self) -> FactBook: ...

    @property
    def question_text(self) -> str: ...

    def cited(self, claim: Claim) -> list[Fact]: ...

# Token shapes an answer states, not words: an IPv4 address, a number with its unit (facts.NUMBER),
# a path (facts.PATH). A small count ("one", "1") needs no backing.
PID = re.compile(r"\bpid (\d+)\b", re.I)
ADDRESS = re.compile(r"(?<![\w.])(\d{1,3}(?:\.\d{1,3}){3})(?![\w.])")
_BYTES = {"B": 1, "bytes": 1, "kB": 1e3, "KB": 1e3, "KiB": 1024, "MB": 1e6, "MiB": 1024 ** 2, "GB": 1e9,
          "GiB": 1024 ** 3, "TB": 1e12, "TiB": 1024 ** 4, "PB": 1e15, "PiB": 1024 ** 5}


def _scaled(q: float, unit: str) -> float | None:
    factor = _BYTES.get(unit)
    return q * factor if factor is not None else None


def same_number(said: float, said_unit: str, held: Quantity) -> bool:
    """A stated number matches a fact's: equal, equal at the precision stated (98.7 said as 99), or
    the same amount of bytes in another unit (within 10 %)."""
    if said_unit and held.unit and said_unit != held.unit:
        a, b = _scaled(said, said_unit), _scaled(held.number, held.unit)
        return a is not None and b is not None and abs(a - b) <= 0.1 * max(abs(a), abs(b))
    if said == held.number:
        return True
    text = f"{said:g}"
    decimals = len(text.split(".", 1)[1]) if "." in text else 0
    if round(held.number, decimals) == said:
        return True
    return said_unit == held.unit != "" and abs(said - held.number) <= 0.05 * said  # "about 22 GiB" of 22.7


def stated_numbers(text: str) -> list[tuple[float, str]]:
    """The numbers a sentence states, without those inside paths and addresses."""
    text = ADDRESS.sub(" ", PATH.sub(" ", text))
    out = []
    for match in NUMBER.finditer(text):
        try:
            out.append((float(match.group(1).replace(",", "")), match.group(2) or ""))
        except ValueError:
            continue
    return out


def _in_question(number: float, question: str) -> bool:
    return any(n == number for n, _ in stated_numbers(question))


def _names_in(text: str, labels: Sequence[str]) -> list[str]:
    lowered = text.lower()
    return [name for name in labels if len(name) >= 3
            and re.search(rf"(?<![\w./-]){re.escape(name.lower())}(?![\w/-])", lowered)]


# ---- the checks ------------------------------------------------------------------------------------

def _shows_pid(pid: int) -> Callable[[Fact], bool]:
    shows = re.compile(rf"\bpid[ =]{pid}\b", re.I)
    return lambda f: shows.search(f.text) is not None


def _holds_number(number: float, unit: str) -> Callable[[Fact], bool]:
    return lambda f: any(same_number(number, unit, q) for q in f.quantities)


def _holds_text(text: str) -> Callable[[Fact], bool]:
    return lambda f: text in f.text.lower()


def _stated(claim: Claim, s: Shown) -> list[tuple[str, Callable[[Fact], bool]]]:
    """What the sentence states that needs backing, each with the test a fact holding it passes:
    pids, numbers with their units, paths and addresses, and the names the facts know."""
    question = s.question_text.lower()
    out: list[tuple[str, Callable[[Fact], bool]]] = []
    for pid in PID.findall(claim.answer):
        if not _in_question(float(pid), s.question_text):
            out.append((f"pid {pid}", _shows_pid(int(pid))))
    for number, unit in stated_numbers(claim.answer):
        if number > 1 and not _in_question(number, s.question_text):
            out.append((f"{number:g}{(' ' + unit) if unit else ''}", _holds_number(number, unit)))
    for token in [*PATH.findall(claim.answer), *ADDRESS.findall(claim.answer)]:
        token = token.rstrip(".,;:)").lower()
        if len(token) > 1 and token not in question:
            out.append((token, _holds_text(token)))
    others = [label for label in s.book.known if label not in (claim.subject, MACHINE)]
    names = {label.split(" (pid ", 1)[0] for label in others if not label.startswith(("/", "port "))}
    for name in _names_in(claim.answer, sorted(names)):
        if name.lower() not in question:
            out.append((name, _holds_text(name.lower())))
    return out


def unbacked(claim: Claim, s: Shown) -> list[str]:
    """What the sentence states that no cited fact holds."""
    cited = s.cited(claim)
    return [token for token, holds in _stated(claim, s) if not any(holds(f) for f in cited)]


MAX_COMPLETED = 5


def completed(claim: Claim, s: Shown) -> Claim:
    """The claim with the shown facts that hold what its sentence states added to its cites: a small
    model often cites the line nearest its answer, not the one it read, and the engine can find the
    line itself. The sentence is untouched; a value or subject no fact holds is still refused."""
    cites = list(claim.cites)
    for _, holds in _stated(claim, s):
        if any(holds(f) for f in (s.book.get(c) for c in cites) if f is not None):
            continue
        found = [f for f in s.book.facts if holds(f) and not f.own]
        if found and len(cites) < MAX_COMPLETED:
            cites.append(found[-1].id)
    if claim.value and not any(claim.value.lower() in f.text.lower() for f in (s.book.get(c) for c in cites) if f):
        numbers = stated_numbers(claim.value)
        found = [f for f in s.book.facts if not f.own and (
            any(same_number(n, u, q) for n, u in numbers[:1] for q in f.quantities)
            or (not numbers and claim.value.lower() in f.text.lower()))]
        if found and found[-1].id not in cites and len(cites) < MAX_COMPLETED:
            cites.append(found[-1].id)
    return claim if tuple(cites) == claim.cites else replace(claim, cites=tuple(cites))
