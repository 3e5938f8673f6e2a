"""Memory: how much is used, whether the machine is under pressure, and who holds it."""

from __future__ import annotations

import time
from typing import Annotated

import psutil

from appliance.tools import units
from appliance.tools.base import ok, tool
from appliance.tools.context import ToolContext
from appliance.tools.procs import command_line, label, own_tree
from appliance.tools.schema import Doc, Range


def _pressure() -> dict | str:
    """Linux PSI: the share of time tasks waited for memory (some = at least one, full = all)."""
    try:
        with open("/proc/pressure/memory", encoding="ascii") as handle:
            lines = handle.read().split("\n")
    except OSError:
        return "not available (kernel without PSI)"
    out = {}
    for line in lines:
        if not line.strip():
            continue
        kind, *fields = line.split()
        values = dict(field.split("=") for field in fields)
        out[kind] = {"avg10_percent": float(values["avg10"]), "avg60_percent": float(values["avg60"])}
    return out


def _oom_kills() -> int | None:
    try:
        with open("/proc/vmstat", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


@tool(reads="memory", ttl=5.0, timeout=10.0, example={"n": 5}, first_for=("swap",), also_for=("memory",))
def memory_report(
    ctx: ToolContext,
    n: Annotated[int, Range(1, 20), Doc("how many top consumers")] = 6,
) -> dict:
    """RAM and swap use, memory pressure (PSI), OOM kills since boot, and the processes using the most memory.
    Use for "which process uses the most memory", "memory is low", "swapping". Not for CPU problems."""
    vm = psutil.virtual_memory()
    swap = psutil.swap_memory()
    own = own_tree(ctx.self_pids)
    procs = []
    for proc in psutil.process_iter(["pid", "name", "username", "memory_info", "cmdline"], ad_value=None):
        if proc.info.get("memory_info"):
            procs.append(proc.info)
    procs.sort(key=lambda p: p["memory_info"].rss, reverse=True)
    now = time.time()
    top = []
    for info in procs[:n]:
        rss = info["memory_info"].rss
        top.append(label({
            "pid": info["pid"], "name": info.get("name") or "?", "user": info.get("username"),
            "memory": units.size(rss), "memory_percent": units.pct(rss, vm.total),
            "command": command_line(info),
        }, info["pid"], own))
    first = next((r for r in top if not r.get("self")), None)
    data = {
        # the ranked answer first: small models answer with the last line they read otherwise
        "headline": (f"top memory: pid={first['pid']} name={first['name']} {first['memory']} "
                     f"({first['memory_percent']}%)") if first else "top memory: only the appliance itself",
        "ram": {
            "total": units.size(vm.total),
            "used": units.size(vm.total - vm.available),
            "available": units.size(vm.available),
            "used_percent": units.pct(vm.percent),
            "cache_and_buffers": units.size(getattr(vm, "cached", 0) + getattr(vm, "buffers", 0)),
        },
        "swap": {
            "total": units.size(swap.total), "used": units.size(swap.used),
            "used_percent": units.pct(swap.percent) if swap.total else 0.0,
            "swapped_in_since_boot": units.size(swap.sin), "swapped_out_since_boot": units.size(swap.sout),
        } if swap.total else "no swap configured",
        "pressure": _pressure(),
        "oom_kills_since_boot": _oom_kills(),
        "top_consumers": top,
        "read_at": units.when(now),
    }
    return ok(data)
