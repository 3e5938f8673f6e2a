"""A short snapshot of the machine, given to the model as its first observation.

Why: a small model that starts from evidence (load, the top CPU and memory users, the fullest
disks) needs fewer steps and guesses less than one that starts from a blank page. The processes
come from the tools' own sampling (`tools.procs`), so the snapshot shows the same numbers, in the
same units and with the same label on the appliance's own processes, as `top_processes` does.
"""

from __future__ import annotations

import os
from typing import Any

from appliance.tools import procs

_SNAPSHOT_KEYS = ("pid", "name", "cpu_percent", "memory_percent", "user", "self")


def _processes(self_pids: frozenset[int], sample_seconds: float, top: int) -> tuple[list[dict], list[dict]]:
    """The top CPU and the top memory users of one sample, as short rows."""
    import psutil

    taken = procs.sample(sample_seconds)
    own = procs.own_tree(self_pids)
    total_mem = psutil.virtual_memory().total

    def rows(key: Any) -> list[dict[str, Any]]:
        ranked = sorted(taken.procs, key=key, reverse=True)[:top]
        full = (procs.row(p, own, taken.cpu_count, total_mem) for p in ranked)
        return [{k: r[k] for k in _SNAPSHOT_KEYS if k in r} for r in full]

    return (rows(lambda p: p.get("cpu_cores", 0.0)),
            rows(lambda p: p["memory_info"].rss if p.get("memory_info") else 0))


def headline(top_cpu: list[dict[str, Any]], top_memory: list[dict[str, Any]]) -> str:
    """The top CPU and memory users in one line, the appliance skipped: the engine shows it first,
    because small models answer a "which process …" question with the last line they read."""
    def first(rows: list[dict[str, Any]], key: str, what: str) -> str:
        row = next((r for r in rows if not r.get("self")), None)
        return f"top {what}: pid={row['pid']} name={row['name']} {row[key]}%" if row else f"top {what}: none"
    return f"{first(top_cpu, 'cpu_percent', 'cpu')}; {first(top_memory, 'memory_percent', 'memory')}"


def take_snapshot(self_pids: frozenset[int] | None = None, *, sample_seconds: float = 0.5, top: int = 4) -> dict[str, Any]:
    """Load, memory, the top CPU and memory users (CPU sampled over an interval, not psutil's
    first-call zero) and the fullest real disks. A missing reading is left out."""
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
    snap["top_cpu"], snap["top_memory"] = _processes(self_pids, sample_seconds, top)
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
