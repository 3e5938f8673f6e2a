"""A short snapshot of the machine, given to the model as its first observation.

Why: a small model that starts from evidence (load, the top CPU and memory users, the fullest
disks) needs fewer steps and guesses less than one that starts from a blank page. The appliance's
own process is labelled, because running the model makes it one of the biggest CPU and memory
users on the machine and it must never be blamed.
"""

from __future__ import annotations

import os
import time
from typing import Any, Iterable

SELF_LABEL = "THIS APPLIANCE (the assistant itself, not a culprit)"


def _processes(self_pids: frozenset[int], sample_seconds: float) -> list[dict[str, Any]]:
    import psutil

    procs = []
    for proc in psutil.process_iter(["pid", "name", "username"]):
        try:
            proc.cpu_percent(None)
            procs.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    time.sleep(sample_seconds)
    rows = []
    for proc in procs:
        try:
            with proc.oneshot():
                row = {
                    "pid": proc.pid,
                    "name": proc.info.get("name") or "?",
                    "cpu_pct": round(proc.cpu_percent(None), 1),
                    "mem_pct": round(proc.memory_percent(), 1),
                    "user": proc.info.get("username") or "?",
                }
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
        if proc.pid in self_pids:
            row["note"] = SELF_LABEL
        rows.append(row)
    return rows


def label_self(rows: Iterable[dict[str, Any]], self_pids: frozenset[int]) -> list[dict[str, Any]]:
    return [dict(row, note=SELF_LABEL) if row.get("pid") in self_pids and "note" not in row else row for row in rows]


def headline(top_cpu: list[dict[str, Any]], top_memory: list[dict[str, Any]]) -> str:
    """The top CPU and memory users in one line, the appliance skipped: the engine shows it first,
    because small models answer a "which process …" question with the last line they read."""
    def first(rows: list[dict[str, Any]], key: str, what: str) -> str:
        row = next((r for r in rows if r.get("note") != SELF_LABEL), None)
        return f"top {what}: pid={row['pid']} name={row['name']} {row[key]}%" if row else f"top {what}: none"
    return f"{first(top_cpu, 'cpu_pct', 'cpu')}; {first(top_memory, 'mem_pct', 'memory')}"


def take_snapshot(self_pids: frozenset[int] | None = None, *, sample_seconds: float = 0.5, top: int = 4) -> dict[str, Any]:
    """Load, memory, the top CPU and memory users (CPU sampled over an interval, not psutil's
    first-call zero) and the fullest real disks. Never raises: a missing reading is left out."""
    import psutil

    self_pids = frozenset({os.getpid()}) if self_pids is None else self_pids
    snap: dict[str, Any] = {}
    try:
        load = os.getloadavg()
        snap["load"] = {"1m": round(load[0], 2), "5m": round(load[1], 2), "15m": round(load[2], 2),
                        "cpus": psutil.cpu_count() or 0}
    except OSError:
        pass
    try:
        mem, swap = psutil.virtual_memory(), psutil.swap_memory()
        snap["memory"] = {"used_pct": mem.percent, "available_mb": mem.available // 2**20,
                          "total_mb": mem.total // 2**20, "swap_used_pct": swap.percent}
    except Exception:  # pragma: no cover - psutil readings missing on exotic systems
        pass
    rows = _processes(self_pids, sample_seconds)
    snap["top_cpu"] = sorted(rows, key=lambda r: -r["cpu_pct"])[:top]
    snap["top_memory"] = sorted(rows, key=lambda r: -r["mem_pct"])[:top]
    snap = {"headline": headline(snap["top_cpu"], snap["top_memory"]), **snap}
    disks: list[dict[str, Any]] = []
    for part in psutil.disk_partitions(all=False):
        try:
            usage = psutil.disk_usage(part.mountpoint)
        except OSError:
            continue
        disks.append({"mount": part.mountpoint, "used_pct": usage.percent, "free_gb": round(usage.free / 2**30, 1)})
    seen: set[tuple] = set()
    unique = []
    for disk in sorted(disks, key=lambda d: -d["used_pct"]):
        key = (disk["used_pct"], disk["free_gb"])
        if key not in seen:
            seen.add(key)
            unique.append(disk)
    snap["fullest_disks"] = unique[:3]
    return snap
