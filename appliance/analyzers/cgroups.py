"""Memory limits of control groups (containers, systemd services with MemoryMax=, Kubernetes pods).

Why: a process in a cgroup is short of memory when its *group* is near its limit, however much the
machine has free; that is how containers get OOM-killed on a half-empty host. Only anonymous memory
counts (page cache in a group is dropped before anything is killed). Reads cgroup v2's memory.max
and memory.stat `anon`, or v1's memory.limit_in_bytes and `total_rss`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from appliance.analyzers.procfs import read_text
from appliance.analyzers.readings import ReadingUnavailable

_V2_ROOT = "/sys/fs/cgroup"
_V1_ROOT = "/sys/fs/cgroup/memory"
MAX_GROUPS = 2000  # a walk bound: a host with more groups is measured on the first ones


@dataclass(frozen=True)
class Limited:
    """A control group with a memory limit: its path (as in /proc/PID/cgroup), limit, anonymous
    memory in bytes, and its member pids."""

    name: str
    limit: int
    anon: int
    pids: tuple[int, ...]


def _stat(path: str, key: str) -> int | None:
    for line in read_text(path).splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return None


def _pids(directory: str) -> tuple[int, ...]:
    try:
        return tuple(int(p) for p in read_text(os.path.join(directory, "cgroup.procs")).split())
    except ReadingUnavailable:
        return ()


def _layout() -> tuple[str, str, str, str] | None:
    """(root, limit file, stat file, anon key) of the memory hierarchy this machine uses."""
    if os.path.exists(os.path.join(_V2_ROOT, "cgroup.controllers")):
        return _V2_ROOT, "memory.max", "memory.stat", "anon"
    if os.path.exists(os.path.join(_V1_ROOT, "memory.limit_in_bytes")):
        return _V1_ROOT, "memory.limit_in_bytes", "memory.stat", "total_rss"
    return None


def limited_groups(physical: int) -> list[Limited]:
    """Every group whose memory limit is below the machine's RAM (the others are not limited)."""
    layout = _layout()
    if layout is None:
        raise ReadingUnavailable("no cgroup memory controller is mounted")
    root, limit_file, stat_file, anon_key = layout
    found = []
    for count, (directory, _dirs, files) in enumerate(os.walk(root)):
        if count >= MAX_GROUPS:
            break
        if limit_file not in files or directory == root:
            continue
        try:
            raw = read_text(os.path.join(directory, limit_file)).strip()
            anon = _stat(os.path.join(directory, stat_file), anon_key)
        except ReadingUnavailable:
            continue
        if not raw.isdigit() or int(raw) >= physical or anon is None:
            continue
        found.append(Limited(directory[len(root):] or "/", int(raw), anon, _pids(directory)))
    return found
