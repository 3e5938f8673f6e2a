"""What the run has already asked the tools: repeat detection and the per-run result cache.

Why both live here: a repeated call (same tool, same arguments) and a cached result are the same
question seen twice. The model gets the earlier observation back with a note instead of a new run;
a live reading (ttl in seconds) is taken again once it is stale, a scan (ttl None) stays valid for
the whole run, and ttl 0 never reuses a result.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping


_DIGITS = re.compile(r"\d+")


def call_key(action: str, action_input: Mapping[str, Any]) -> str:
    """A canonical form of a call: argument order and spacing do not make a call new."""
    return action + " " + json.dumps(action_input, sort_keys=True, ensure_ascii=False, default=str)


@dataclass
class CachedObservation:
    step: int
    at: float
    status: str
    body: str
    summary: str


@dataclass
class CallLog:
    """Every call of the run, how often it was made, and its latest observation."""

    occurrences: dict[str, int] = field(default_factory=dict)
    latest: dict[str, CachedObservation] = field(default_factory=dict)
    seen_bodies: set[str] = field(default_factory=set)
    seen_lines: set[str] = field(default_factory=set)
    tools: set[str] = field(default_factory=set)  # the tools called, whatever their arguments

    def note_call(self, key: str, tool: str) -> int:
        """Record one more occurrence of the call; how many there have been, this one included."""
        self.tools.add(tool)
        self.occurrences[key] = self.occurrences.get(key, 0) + 1
        return self.occurrences[key]

    def previous(self, key: str) -> CachedObservation | None:
        return self.latest.get(key)

    def fresh(self, key: str, ttl: float | None, now: float) -> CachedObservation | None:
        """The earlier observation when it may be reused at `now`, else None."""
        entry = self.latest.get(key)
        if entry is None:
            return None
        if ttl is None or (ttl > 0 and now - entry.at <= ttl):
            return entry
        return None

    def remember(self, key: str, entry: CachedObservation) -> None:
        self.latest[key] = entry

    def is_new(self, body: str) -> bool:
        """True when an observation body has a line this run has not seen, numbers aside (new
        information). Numbers aside: the same log read again with more lines, or a process table
        sampled again, shows the same lines with other counts and times, and tells nothing new."""
        stripped = (line.strip() for line in body.splitlines())
        lines = {_DIGITS.sub("#", line) for line in stripped
                 if line and not line.startswith("…")}  # "… 8 more lines cut …" is no line of it
        new = bool(lines - self.seen_lines) or (not lines and body not in self.seen_bodies)
        self.seen_lines |= lines
        self.seen_bodies.add(body)
        return new
