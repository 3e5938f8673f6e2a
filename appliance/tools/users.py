"""Totals per user: CPU over a sampled interval, memory, processes and threads (what `ps` summed by
user shows), the appliance's own processes counted apart.

Memory is RSS summed (what `ps` and `top` show; a page shared by several processes of one user is
counted in each) and, where /proc/PID/smaps_rollup can be read, PSS summed (each shared page
split between the processes that share it, so the users' totals add up to the memory in use).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

import psutil

from appliance.tools import units
from appliance.tools.base import ok, tool
from appliance.tools.context import ToolContext
from appliance.tools.procs import SELF_LABEL, own_tree, sample
from appliance.tools.schema import Doc, Range

MAX_USERS = 10


@dataclass
class UserTotal:
    """One user's processes together (the appliance's own left out)."""

    user: str
    processes: int = 0
    threads: int = 0
    cores: float = 0.0
    rss: int = 0
    pss: int = 0
    pss_missing: int = 0  # processes whose PSS could not be read
    pids: list[int] = field(default_factory=list)


def pss(pid: int) -> int | None:
    """The proportional set size in bytes (smaps_rollup), or None where it cannot be read."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii", errors="replace") as rollup:
            for line in rollup:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def per_user(procs: list[dict], own: set[int] | frozenset[int], *, with_pss: bool = False) -> list[UserTotal]:
    """Totals by user over a sample's processes (see procs.sample), busiest CPU first."""
    totals: dict[str, UserTotal] = {}
    for info in procs:
        if info["pid"] in own:
            continue
        name = info.get("username") or "?"
        total = totals.setdefault(name, UserTotal(name))
        total.processes += 1
        total.threads += info.get("num_threads") or 0
        total.cores += info.get("cpu_cores", 0.0)
        mem = info.get("memory_info")
        total.rss += mem.rss if mem else 0
        total.pids.append(info["pid"])
        if with_pss:
            value = pss(info["pid"])
            total.pss += value or 0
            total.pss_missing += value is None
    return sorted(totals.values(), key=lambda t: (t.cores, t.rss), reverse=True)


def _row(total: UserTotal, cpu_count: int, memory: int) -> dict:
    row = {"user": total.user, "cpu_percent": units.pct(100.0 * total.cores / cpu_count),
           "cores_busy": round(total.cores, 2), "memory_rss": units.size(total.rss),
           "memory_percent": units.pct(total.rss, memory), "processes": total.processes, "threads": total.threads}
    if total.pss_missing < total.processes:
        row["memory_pss"] = units.size(total.pss)
    return row


@tool(reads="process", ttl=3.0, timeout=15.0, example={"sample_seconds": 1.0}, first_for=("user_load",))
def user_totals(
    ctx: ToolContext,
    sample_seconds: Annotated[float, Range(0.2, 5.0), Doc("CPU sampling interval")] = 1.0,
) -> dict:
    """CPU, memory, processes and threads per user, busiest first.
    Use for "which user uses the most CPU or memory"."""
    taken = sample(sample_seconds)
    own = own_tree(ctx.self_pids)
    memory = psutil.virtual_memory().total
    totals = per_user(taken.procs, own, with_pss=True)
    rows = [_row(t, taken.cpu_count, memory) for t in totals[:MAX_USERS]]
    mine = [p for p in taken.procs if p["pid"] in own]
    by_memory = max(totals, key=lambda t: t.pss or t.rss, default=None)
    data: dict = {
        "sample_seconds": round(taken.seconds, 2), "cpu_count": taken.cpu_count,
        "machine_cpu_percent": taken.machine_cpu_percent, "users": rows,
        "units": "cpu_percent: share of all cores; memory_rss counts shared pages in every process, memory_pss "
                 "splits them (sums to the memory in use)",
    }
    if rows:
        data = {"headline": f"most CPU: user {rows[0]['user']} ({rows[0]['cpu_percent']}% of all cores); most memory: "
                            f"user {by_memory.user if by_memory else '?'}", **data}
    if mine:
        data["appliance_itself"] = {
            "name": f"python {SELF_LABEL}", "processes": len(mine),
            "cpu_percent": units.pct(100.0 * sum(p.get("cpu_cores", 0.0) for p in mine) / taken.cpu_count),
            "note": "left out of the users' totals"}
    return ok(data)
