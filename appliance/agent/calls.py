"""What the run has already asked the tools: repeat detection and the per-run result cache.

Why both live here: a repeated call (same tool, same arguments) and a cached result are the same
question seen twice. The model gets the earlier observation back with a note instead of a new run;
a live reading (ttl in seconds) is taken again once it is stale, a scan (ttl None) stays valid for
the whole run, and ttl 0 never reuses a result.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping


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

    def note_call(self, key: str) -> int:
        """Record one more occurrence of the call; how many there have been, this one included."""
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
        """True the first time an observation body is seen in this run (new information)."""
        if body in self.seen_bodies:
            return False
        self.seen_bodies.add(body)
        return True
