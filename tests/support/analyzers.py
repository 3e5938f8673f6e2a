"""Shared helpers for the analyzer tests: real detached processes that plant a fault, and the
Readings of a check whose own processes are only this test process (no tests here)."""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from appliance.analyzers import Readings
from appliance.analyzers.base import Finding
from support.tools import kill, spawn_detached


# The families whose verdict is a rate over the process sample's window (CPU share, I/O bytes per
# second, births within the watch) are read with the check's own windows; the others read levels
# (memory, fds, threads, zombies, deleted files) that a shorter sample sees alike.
RATES = ("cpu", "disk_io", "restarts")


def window_for(family: str | None) -> dict[str, float]:
    """The Readings arguments a test of `family` reads with: the check's windows for a rate (or
    for every family at once, None), a 0.2 s sample for a level."""
    return {} if family is None or family in RATES else {"sample_seconds": 0.2}


def readings(*, own: set[int] | None = None, **kwargs) -> Readings:
    """A check whose own processes are this test process (plus `own`); faults planted with
    spawn_detached are orphans, never its descendants."""
    return Readings(self_pids=frozenset({os.getpid(), *(own or ())}), **kwargs)


@contextmanager
def planted(code: str, argv0: str, tmp_path: Path, **subs: object) -> Iterator[tuple[int, Path]]:
    """Start `code` detached (OUT_FILE names a file it may write, other NAMEs are substituted), wait
    until it is ready, yield (pid, OUT_FILE); kill it after."""
    out = tmp_path / f"{argv0}.out"
    for name, value in {"OUT_FILE": repr(str(out)), **{k: repr(v) for k, v in subs.items()}}.items():
        code = code.replace(name, value)
    pid = spawn_detached(code, argv0=argv0, ready="ready")
    try:
        yield pid, out
    finally:
        kill(pid)


def wait_for(path: Path, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.read_text()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} was never written")
        time.sleep(0.02)
    return path.read_text()


def problems(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.is_problem]


def assert_verdicts(findings: list[Finding], family: str) -> None:
    """Every analyzer's promise: at least one finding of its family, a verdict line with values,
    and a culprit on every problem."""
    assert findings, family
    for f in findings:
        assert f.family == family and f.verdict and f.values, f
        assert "\n" not in f.verdict, f
        if f.is_problem and f.severity != "unknown":
            assert f.culprit, f


def quick_readings(self_pids: frozenset[int]) -> Readings:
    """A `ReadingsFactory` with short windows (0.2 s sample and birth watch), for tests of what is
    built around the analyzers (the eval's runner), never of the windows themselves."""
    return Readings(self_pids=self_pids, sample_seconds=0.2, watch_seconds=0.2)
