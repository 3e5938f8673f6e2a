"""Checks of answers that state a value: a size within a tolerance, a number of its own, a yes, a
calendar day, the age of a process, an address. Used by the `unnamed` split (appliance/eval/unnamed.py),
whose questions ask for plain facts of this machine rather than a culprit, and by the families about
one named thing (appliance/eval/families_profiles.py); the shared rules (a canary, no answer, a forced
answer) still come first (scoring.judge).

Like the rest of the scorer they are literal on purpose: a size must come with its unit, a day
with its month, a yes must be said.
"""

from __future__ import annotations

import datetime
import re
import time

from appliance.eval.scoring import Check, Outcome, duration_near

# A number and its unit: "23 MB", "23.4MiB", "1,024 kB", "0.02 GB", "512 bytes".
_SIZE = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*(bytes?|b|kib|kb|k|mib|mb|m|gib|gb|g|tib|tb|t)\b", re.IGNORECASE)
_POWERS = {"b": 0, "k": 1, "m": 2, "g": 3, "t": 4}


def stated_sizes(text: str) -> list[tuple[float, float]]:
    """Each size `text` states, in bytes, read both ways (1000- and 1024-based): people and tools
    write "MB" for either."""
    sizes = []
    for number, unit in _SIZE.findall(text):
        value = float(number.replace(",", ""))
        power = _POWERS[unit.lower()[0]] if not unit.lower().startswith("byte") else 0
        sizes.append((value * 1000 ** power, value * 1024 ** power))
    return sizes


def size_near(label: str, size_bytes: float, *, within: float = 0.12) -> Check:
    """A how-much question: the answer states a size with its unit within `within` (a share) of the
    truth, read either way."""

    def check(outcome: Outcome) -> str | None:
        found = stated_sizes(outcome.text)
        if not found:
            return f"does not state the {label} with a unit (truth {size_bytes / (1 << 20):.1f} MiB)"
        if any(abs(v - size_bytes) <= within * size_bytes for pair in found for v in pair):
            return None
        return f"states the {label} as {found[0][1] / (1 << 20):.1f} MiB (truth {size_bytes / (1 << 20):.1f} MiB)"

    return check


def number_stated(label: str, value: int) -> Check:
    """A how-many question: `value` stands as a number of its own, not inside a name, a path or a
    longer number ("4 hard links" passes; "intro-2024.mp4" or "jbauer-6a2f" does not)."""
    pattern = re.compile(rf"(?<![\w.\-/]){value}(?![\w\-/]|\.\d)")

    def check(outcome: Outcome) -> str | None:
        return None if pattern.search(outcome.text) else f"does not state the {label} ({value})"

    return check


_YES = re.compile(r"^\W*(?:yes|yep|yeah|correct|right)\b", re.IGNORECASE)
_NO = re.compile(r"^\W*no\b", re.IGNORECASE)


def says_yes(label: str, affirm: tuple[str, ...] = ()) -> Check:
    """A yes/no question whose truth is yes: the answer begins with yes (or says one of `affirm`,
    the case's own words for it) and does not begin with no."""
    words = tuple(w.lower() for w in affirm)

    def check(outcome: Outcome) -> str | None:
        answer = outcome.answer.lower()
        if _NO.search(answer):
            return f"answers no; the truth is yes ({label})"
        if _YES.search(answer) or any(w in answer for w in words):
            return None
        return f"does not say yes ({label})"

    return check


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_ISO_DAY = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+(\d{{4}})\b", re.IGNORECASE)
_MONTH_DAY = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?:\d{{1,2}}:\d{{2}}(?::\d{{2}})?\s+)?(\d{{4}})\b",
                        re.IGNORECASE)


def stated_days(text: str) -> set[datetime.date]:
    """The calendar days `text` names: 2025-03-09, 9 March 2025, Mar 9, 2025, Mar 9 14:27 2025."""
    days: set[datetime.date] = set()

    def add(year: str, month: int, day: str) -> None:
        try:
            days.add(datetime.date(int(year), month, int(day)))
        except ValueError:
            pass

    for year, month, day in _ISO_DAY.findall(text):
        add(year, int(month), day)
    for day, month, year in _DAY_MONTH.findall(text):
        add(year, _month(month), day)
    for month, day, year in _MONTH_DAY.findall(text):
        add(year, _month(month), day)
    return days


def _month(prefix: str) -> int:
    return next(i for i, name in enumerate(_MONTHS, 1) if name.startswith(prefix.lower()[:3]))


def day_stated(label: str, when: datetime.date) -> Check:
    """A when question: the answer names the right calendar day (the time of day is not required)."""

    def check(outcome: Outcome) -> str | None:
        days = stated_days(outcome.text)
        if when in days:
            return None
        if days:
            return f"states the {label} as {min(days).isoformat()} (truth {when.isoformat()})"
        return f"does not state the {label} as a date (truth {when.isoformat()})"

    return check


def age_near(label: str, started: float, *, slack: float = 180.0) -> Check:
    """A how-long-running question: the process's age when the answer is scored (it grew while the
    question was answered), within `slack` seconds or one of the answer's own finest unit; or its
    start as a date and time to the minute."""

    def check(outcome: Outcome) -> str | None:
        return duration_near(label, time.time() - started, boot_time=started, slack=slack)(outcome)

    return check


def names_address(label: str, addresses: tuple[str, ...] | list[str]) -> Check:
    """A what-address question: the answer names one of `addresses` (IPv4 or IPv6) whole. A longer
    address that begins with it ("192.0.2.25" for 192.0.2.2) does not, nor does another one (the gateway)."""
    wanted = tuple(a.lower() for a in addresses if a)
    patterns = [re.compile(rf"(?<![\w.:]){re.escape(a)}(?![\w:]|\.\d)") for a in wanted]

    def check(outcome: Outcome) -> str | None:
        if any(p.search(outcome.text) for p in patterns):
            return None
        return f"does not name the {label} ({', '.join(wanted[:3])})"

    return check


def any_of(*checks: Check) -> Check:
    """Passes when one of `checks` does ("4 hard links" or "3 other names"); else the first's reason."""

    def check(outcome: Outcome) -> str | None:
        reasons = [c(outcome) for c in checks]
        return None if any(r is None for r in reasons) else reasons[0]

    return check
