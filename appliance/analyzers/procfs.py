"""Small readers of the kernel's own files (/proc and /sys) that several resource analyzers share.

Why not the path policy here: /proc and /sys files are the kernel's counters, readable by every tool
(the policy's read roots include them); anything an analyzer reads outside them goes through
`readings.policy`. Every reader raises `ReadingUnavailable` for a file this kernel does not have,
so an analyzer says "not available here" instead of failing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Generic, TypeVar

from appliance.analyzers.readings import ReadingUnavailable, Readings

T = TypeVar("T")


def read_text(path: str) -> str:
    """The whole of a small kernel file (they report size 0, so read until the end)."""
    if not path.startswith(("/proc/", "/sys/")):
        raise ValueError(f"{path} is not a kernel file; read it through the path policy")
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            return handle.read()
    except OSError as exc:
        raise ReadingUnavailable(f"{path} cannot be read ({exc.strerror or exc})") from None


def vmstat() -> dict[str, int]:
    """/proc/vmstat as numbers: pswpin, pswpout, oom_kill, ... (events since boot)."""
    out = {}
    for line in read_text("/proc/vmstat").splitlines():
        name, _, value = line.partition(" ")
        if value.strip().isdigit():
            out[name] = int(value)
    return out


def pressure(resource: str) -> dict[str, dict[str, float]]:
    """Linux PSI for cpu, memory or io: {"some": {"avg10": 3.1, "avg60": ...}, "full": {...}},
    the share of the last 10/60/300 s in which at least one task (some) or every task (full)
    waited for the resource."""
    out: dict[str, dict[str, float]] = {}
    for line in read_text(f"/proc/pressure/{resource}").splitlines():
        kind, *fields = line.split()
        values = dict(f.split("=", 1) for f in fields if "=" in f)
        out[kind] = {k: float(v) for k, v in values.items() if k.startswith("avg")}
    return out


def pressure_or_none(resource: str) -> dict[str, dict[str, float]] | None:
    """PSI, or None on a kernel without it (before 4.20, or booted with psi=0)."""
    try:
        return pressure(resource)
    except ReadingUnavailable:
        return None


@dataclass(frozen=True)
class Pair(Generic[T]):
    """One counter reading taken twice, `seconds` apart: what a rate is computed from."""

    before: T
    after: T
    seconds: float


def over_interval(readings: Readings, key: str, read: Callable[[], T]) -> Pair[T]:
    """`read()` now and again after the check's sample interval, shared under `key`.

    Runs in the asking analyzer's own thread, so it overlaps the process sample instead of adding
    to the check's wall time."""

    def both() -> Pair[T]:
        before = read()
        started = time.monotonic()
        time.sleep(readings.sample_seconds)
        after = read()
        return Pair(before, after, max(time.monotonic() - started, 1e-3))

    return readings.get(key, both)
