"""Numbers with their units as prose writes them, in one spelling: what an answer states and an
observation showed are compared as quantities ("13 hours and 20 minutes" is "13 h" and "20 min").
"""

from __future__ import annotations

import re

# A number with its unit in prose ("up 13 h 20 min", "12.0 MiB free"), in one spelling whatever
# the observation or the answer wrote ("13 hours and 20 minutes" states the same two quantities).
_UNIT_NAMES = {"h": ("h", "hr", "hrs", "hour", "hours"), "min": ("min", "mins", "minute", "minutes"),
               "s": ("s", "sec", "secs", "second", "seconds"), "d": ("d", "day", "days"),
               "ms": ("ms", "millisecond", "milliseconds"), "KiB": ("KiB",), "MiB": ("MiB",), "GiB": ("GiB",),
               "TiB": ("TiB",)}
_UNITS = {name.lower(): unit for unit, names in _UNIT_NAMES.items() for name in names}
_QUANTITY = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(" + "|".join(sorted(_UNITS, key=len, reverse=True)) + r")(?![\w])",
                       re.IGNORECASE)


def quantities(text: str) -> set[str]:
    """The non-zero quantities with a unit the text states, as "13 h", "20 min", "12.0 mib"."""
    return {f"{number} {_UNITS[unit.lower()]}".lower() for number, unit in _QUANTITY.findall(text)
            if float(number) != 0}


_SECONDS = {"d": 86400, "h": 3600, "min": 60, "s": 1}


# What joins the parts of one duration ("3 hours and 32 minutes", "3 h, 32 min"): nothing else.
_JOINED = re.compile(r"\s*(?:,\s*(?:and\s+)?|and\s+)?", re.I)


def durations(text: str) -> list[float]:
    """Each duration the text states, in seconds: adjacent day, hour, minute and second quantities
    joined by "and" or a comma make one ("3 hours and 32 minutes"). An answer that states the same
    uptime twice, or in its text and its result field, states one duration twice, not their sum."""
    found: list[float] = []
    end = None
    for match in _QUANTITY.finditer(text):
        unit = _UNITS[match.group(2).lower()]
        if unit not in _SECONDS:
            end = None
            continue
        seconds = float(match.group(1)) * _SECONDS[unit]
        if end is not None and _JOINED.fullmatch(text[end:match.start()]):
            found[-1] += seconds
        else:
            found.append(seconds)
        end = match.end()
    return found


def duration(text: str) -> float | None:
    """The first duration the text states, in seconds; None when it states none."""
    found = durations(text)
    return found[0] if found else None


def number_forms(number: str) -> set[str]:
    """The ways an answer may state an observed number: as written and, for a decimal, cut or
    rounded to a whole number (a model writes 97% for cpu_pct=97.0 and 26% for 25.6% used)."""
    forms = {number}
    if re.fullmatch(r"\d+\.\d+", number):
        forms |= {number.split(".")[0], str(round(float(number)))}
    return forms
