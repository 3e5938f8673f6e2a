"""The control group one process is in (/proc/PID/cgroup) and that group's limits: CPU quota,
memory limit and use, OOM kills inside it (cgroup v2's cpu.max, memory.max, memory.current,
memory.events; v1's cpu.cfs_quota_us, memory.limit_in_bytes, memory.usage_in_bytes,
memory.oom_control), what `systemctl status` and `cat /sys/fs/cgroup/.../memory.events` show.

Why: a process killed or slowed "for no reason" on a half-idle machine is often held by its
group's limit, not the machine's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from appliance.tools import units
from appliance.tools.saturation import cpu_quota, keyed

ROOT = "/sys/fs/cgroup"
_UNLIMITED_V1 = 1 << 62  # v1 shows "no limit" as a page-rounded LONG_MAX


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return None


@dataclass(frozen=True)
class Group:
    """A process's group: its path, which hierarchy, and the limits and counters found there."""

    path: str
    version: int
    cpu_quota: str | None = None
    memory_limit: int | None = None  # bytes; None = no limit
    memory_used: int | None = None
    memory_events: tuple[tuple[str, int], ...] = ()

    @property
    def oom_kills(self) -> int:
        return dict(self.memory_events).get("oom_kill", 0)

    def as_dict(self) -> dict:
        out: dict = {"path": self.path, "hierarchy": f"cgroup v{self.version}",
                     "cpu_quota": self.cpu_quota or "none (may use every CPU it is allowed)",
                     "memory_limit": units.size(self.memory_limit) if self.memory_limit is not None else "none"}
        if self.memory_used is not None:
            out["memory_used"] = units.size(self.memory_used)
        if self.memory_events:
            out["memory_events"] = {k: v for k, v in self.memory_events if k in ("low", "high", "max", "oom", "oom_kill")}
        return out


def membership(pid: int) -> dict[str, str]:
    """controller -> group path ("" is the v2 unified hierarchy), from /proc/PID/cgroup."""
    out: dict[str, str] = {}
    for line in (_read(f"/proc/{pid}/cgroup") or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in parts[1].split(",") if parts[1] else [""]:
                out[controller] = parts[2]
    return out


def _v1_dir(controller: str, groups: dict[str, str]) -> str | None:
    """The v1 directory of `controller`'s group (mounted alone or joined, as cpu,cpuacct)."""
    path = groups.get(controller)
    if path is None:
        return None
    for name in os.listdir(ROOT) if os.path.isdir(ROOT) else []:
        if controller in name.split(","):
            directory = os.path.join(ROOT, name, path.lstrip("/"))
            if os.path.isdir(directory):
                return directory
    return None


def _v2(path: str) -> Group:
    base = ROOT if os.path.exists(os.path.join(ROOT, "cgroup.controllers")) else os.path.join(ROOT, "unified")
    directory = os.path.join(base, path.lstrip("/"))
    limit = _read(os.path.join(directory, "memory.max"))
    used = _read(os.path.join(directory, "memory.current"))
    return Group(path, 2, cpu_quota(directory, True),
                 int(limit) if limit and limit.isdigit() else None, int(used) if used and used.isdigit() else None,
                 tuple(sorted(keyed(_read(os.path.join(directory, "memory.events"))).items())))


def _v1(groups: dict[str, str]) -> Group:
    memory, cpu = _v1_dir("memory", groups), _v1_dir("cpu", groups)
    limit = _read(os.path.join(memory, "memory.limit_in_bytes")) if memory else None
    used = _read(os.path.join(memory, "memory.usage_in_bytes")) if memory else None
    events = keyed(_read(os.path.join(memory, "memory.oom_control"))) if memory else {}
    shown = {"oom_kill": events["oom_kill"]} if "oom_kill" in events else {}
    return Group(groups.get("memory") or groups.get("cpu") or "/", 1, cpu_quota(cpu, False) if cpu else None,
                 int(limit) if limit and limit.isdigit() and int(limit) < _UNLIMITED_V1 else None,
                 int(used) if used and used.isdigit() else None, tuple(shown.items()))


def group_of(pid: int) -> Group | None:
    """The process's group and its limits: v1 where the memory or cpu controller is mounted as v1."""
    groups = membership(pid)
    if not groups:
        return None
    if "memory" in groups or "cpu" in groups:
        return _v1(groups)
    return _v2(groups.get("", "/"))
