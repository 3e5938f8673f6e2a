"""Shared helpers for the tools tests: real detached processes, a registry bound to a confined
policy, and the invariants every tool result must satisfy. (No tests here.)"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterable

import psutil

from appliance.tools.base import Registry
from appliance.tools.paths import PathPolicy
from appliance.tools.registry import ToolContext, build_registry

STATUSES = {"ok", "empty", "partial", "error", "denied", "invalid", "timeout"}
SIZE_RE = re.compile(r"^-?\d+(?:\.\d)? (?:B|KiB|MiB|GiB|TiB|PiB)(?:/s)?$")


def registry_for(*roots: Path | str, default: bool = False, **context: Any) -> Registry:
    """A registry whose policy is the default one plus `roots`, or only `roots` (confined)."""
    policy = PathPolicy.default(roots) if default else PathPolicy.confined(roots)
    return build_registry(ToolContext(policy=policy, **context))


def spawn_detached(code: str, *, argv0: str, ready: str | None = None, timeout: float = 30.0) -> int:
    """Start `python -c code` as an orphan (not a descendant of this test process, like a
    stranger's process on a real machine) with argv[0] = argv0. Returns its PID once `ready`
    appears in a marker file (or at once)."""
    marker = Path(f"/tmp/appliance-test-{os.getpid()}-{time.monotonic_ns()}.ready")
    script = code.replace("READY_FILE", repr(str(marker)))
    launcher = subprocess.run(
        ["/bin/bash", "-c", f'exec -a "$0" "$1" -c "$2" >/dev/null 2>&1 & echo $!', argv0, sys.executable, script],
        capture_output=True, text=True, check=True, start_new_session=True,
    )
    pid = int(launcher.stdout.strip())
    deadline = time.monotonic() + timeout
    while ready and not marker.exists():
        if time.monotonic() > deadline or not psutil.pid_exists(pid):
            kill(pid)
            raise RuntimeError(f"helper process {argv0} did not become ready")
        time.sleep(0.05)
    marker.unlink(missing_ok=True)
    return pid


def gone_or_zombie(pid: int) -> bool:
    """The process has ended: gone, or a zombie its parent has not reaped yet. (Asked in one read:
    a zombie may be reaped between `pid_exists` and a second look.)"""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def kill(pid: int) -> None:
    """SIGKILL the process and its descendants (a helper that forked leaves no orphans behind to
    show up in later tests or evaluations), then wait until it is gone or a zombie."""
    try:
        for child in psutil.Process(pid).children(recursive=True):
            try:
                child.kill()
            except psutil.NoSuchProcess:
                pass
    except psutil.NoSuchProcess:
        pass
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return
        except psutil.NoSuchProcess:
            return
        time.sleep(0.02)


def walk_values(obj: Any, key: str = "") -> Iterable[tuple[str, Any]]:
    """Every (key, value) pair in nested data, lists inheriting their parent's key."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield k, v
            yield from walk_values(v, k)
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield key, item
            yield from walk_values(item, key)


def check_invariants(name: str, outcome: dict) -> None:
    """What every result of every tool must satisfy, whatever the machine."""
    assert set(outcome) == {"status", "data", "error"}, outcome
    assert outcome["status"] in STATUSES, outcome
    if outcome["status"] == "ok":
        assert outcome["error"] is None
    else:
        assert isinstance(outcome["error"], str) and outcome["error"], outcome
    text = json.dumps(outcome)  # JSON-serialisable, compact
    assert len(text) < 16000, f"{name} returned {len(text)} characters"
    for key, value in walk_values(outcome["data"]):
        if isinstance(value, bool) or value is None:
            continue
        if key.endswith("percent") and isinstance(value, (int, float)):
            assert 0 <= value <= 100, (name, key, value)
        if key in {"pid", "files", "dirs", "threads", "connections", "count", "processes_total", "exit_code",
                   "entries_total", "zombies", "lines_scanned", "matching_lines", "mtu", "port"} and isinstance(value, (int, float)):
            assert value >= 0, (name, key, value)
        if key in {"size", "memory", "total", "used", "free", "available", "read", "write", "receive", "send"} \
                and isinstance(value, str) and value[:1].isdigit():
            assert SIZE_RE.match(value), (name, key, value)
