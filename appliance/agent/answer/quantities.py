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


def duration(text: str) -> float | None:
    """The duration the text states, in seconds: the sum of its day, hour, minute and second
    quantities ("3 hours and 32 minutes"); None when it states none."""
    parts = [float(number) * _SECONDS[_UNITS[unit.lower()]] for number, unit in _QUANTITY.findall(text)
             if _UNITS[unit.lower()] in _SECONDS]
    return sum(parts) if parts else None


def number_forms(number: str) -> set[str]:
    """The ways an answer may state an observed number: as written and, for a decimal, cut or
    rounded to a whole number (a model writes 97% for cpu_pct=97.0 and 26% for 25.6% used)."""
    forms = {number}
    if re.fullmatch(r"\d+\.\d+", number):
        forms |= {number.split(".")[0], str(round(float(number)))}
    return forms
