"""One reading of the machine that every analyzer shares, taken once per check.

Why shared: the CPU and disk I/O analyzers both need a process sample over an interval; taking it
once keeps `appliance check` within its 2 s. Each reading is computed on first use and kept (thread
safe, so analyzers may run in parallel); a reading that fails is kept as its exception, so every
analyzer that needs it reports the same "unavailable" instead of trying again.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from appliance.tools import procs
from appliance.tools.paths import PathPolicy


class ReadingUnavailable(Exception):
    """A reading this machine cannot give (no sensors, no journal, no permission)."""


@dataclass
class Readings:
    """self_pids: the appliance's processes (their descendants are found once, with the sample).
    sample_seconds: the interval of the process sample (CPU and I/O rates).
    watch_seconds: how long the restart check watches births (the longer of it and sample_seconds):
        long enough to see a program that dies within a second and is started again after a short
        pause (two starts, one gone), short enough for a 2 s check.
    now: the wall-clock time of the check (fixed, so every analyzer ages things alike).
    policy: the path policy every file an analyzer reads goes through (the tools' own), so an
        analyzer can never read what a tool may not; any text it quotes passes the redactor."""

    self_pids: frozenset[int] = field(default_factory=lambda: frozenset({os.getpid()}))
    sample_seconds: float = 0.5
    watch_seconds: float = 1.5
    now: float = field(default_factory=time.time)
    policy: PathPolicy = field(default_factory=PathPolicy.default)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)
    _locks: dict[str, threading.Lock] = field(default_factory=dict, repr=False)
    _guard: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def get(self, key: str, compute: Callable[[], Any]) -> Any:
        """The reading `key`, computed by `compute()` the first time (once, even under threads).
        Raises what `compute` raised, every time it is asked for."""
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._cache:
                try:
                    self._cache[key] = ("ok", compute())
                except Exception as exc:  # kept, so every analyzer sees the same failure
                    self._cache[key] = ("error", exc)
            kind, value = self._cache[key]
        if kind == "error":
            raise value
        return value

    # -- the readings more than one family needs ----------------------------------------------

    def sample(self) -> procs.Sample:
        """Every process read twice, `sample_seconds` apart, with CPU and I/O rates."""
        return self.get("sample", lambda: procs.sample(self.sample_seconds, with_io=True))

    def own(self) -> set[int]:
        """The appliance's processes and their descendants: never a culprit."""
        return self.get("own", lambda: procs.own_tree(self.self_pids))

    def others(self) -> list[dict]:
        """The sampled processes that are not the appliance's own."""
        own = self.own()
        return [p for p in self.sample().procs if p["pid"] not in own]
