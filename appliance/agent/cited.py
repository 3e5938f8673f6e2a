"""The facts an answer cites, as the model read them: each id's line found in the run's observations.

Why: the person reads the evidence in plain words (agent/plain_words.py); the reading each line was
said from stays one step away (`appliance runs show --raw`, a key in the TUI), so a sentence can
always be checked against what the tool returned.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

_FACT_LINE = re.compile(r"^\s*(F\d+) (.+)$")


def fact_lines(observations: Iterable[str]) -> dict[str, str]:
    """Every numbered line of the observations, by its id (the first time it was shown)."""
    found: dict[str, str] = {}
    for text in observations:
        for line in (text or "").splitlines():
            match = _FACT_LINE.match(line)
            if match:
                found.setdefault(match.group(1), match.group(2))
    return found


def cited_lines(observations: Iterable[str], cites: Sequence[str]) -> list[str]:
    """The cited facts as `F3 mount=/ ...`, in the order cited; an id no observation shows is left out."""
    lines = fact_lines(observations)
    return [f"{fact} {lines[fact]}" for fact in dict.fromkeys(cites) if fact in lines]
