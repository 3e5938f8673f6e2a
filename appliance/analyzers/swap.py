"""Swap: how full it is and, what matters more, whether the machine is swapping now (pages moved
in and out over the check's interval, from /proc/vmstat). Swap that fills slowly and stays put is
harmless; swap-in is what makes a machine slow, since a process waits for every page it gets back.
Thresholds and why: docs/analyzers.md, table `swap`.
"""

from __future__ import annotations

from typing import Any

import psutil

from appliance.analyzers import procfs
from appliance.analyzers.base import CRITICAL, OK, WARNING, Analyzer, Finding
from appliance.analyzers.naming import process_label, process_name, size
from appliance.analyzers.readings import ReadingUnavailable, Readings

PAGE = 4096  # pswpin/pswpout count pages of this size on every Linux architecture that swaps
USED_PERCENT = (80.0, 95.0)  # warning, critical: swap nearly full, the OOM killer is next
SWAP_IN_RATE = (1 << 20, 10 << 20)  # warning, critical: bytes/s brought back from swap
SWAP_OUT_RATE = 10 << 20  # warning: bytes/s pushed out (reclaim is working hard)


def _vm_swap() -> dict[str, int]:
    stats = procfs.vmstat()
    return {"in": stats.get("pswpin", 0), "out": stats.get("pswpout", 0)}


def _swapped(pid: int) -> int:
    """VmSwap of one process in bytes (0 when it cannot be read)."""
    try:
        for line in procfs.read_text(f"/proc/{pid}/status").splitlines():
            if line.startswith("VmSwap:"):
                return int(line.split()[1]) * 1024
    except (ReadingUnavailable, ValueError, IndexError):
        return 0
    return 0


def _grade(used_pct: float, rate_in: float, rate_out: float) -> str:
    if used_pct >= USED_PERCENT[1] or rate_in >= SWAP_IN_RATE[1]:
        return CRITICAL
    if used_pct >= USED_PERCENT[0] or rate_in >= SWAP_IN_RATE[0] or rate_out >= SWAP_OUT_RATE:
        return WARNING
    return OK


def analyze(readings: Readings) -> list[Finding]:
    pair = procfs.over_interval(readings, "vmstat_swap", _vm_swap)
    rate_in = (pair.after["in"] - pair.before["in"]) * PAGE / pair.seconds
    rate_out = (pair.after["out"] - pair.before["out"]) * PAGE / pair.seconds
    swap = psutil.swap_memory()
    if not swap.total:
        return [Finding("swap", OK, f"no swap configured (0 B of swap): nothing is swapped; swapped in "
                        f"{size(rate_in)}/s, out {size(rate_out)}/s", {"swap_total_bytes": 0,
                        "swap_in_bytes_per_second": round(rate_in), "swap_out_bytes_per_second": round(rate_out)})]
    used_pct = round(100.0 * swap.used / swap.total, 1)
    values: dict[str, Any] = {"swap_total_bytes": swap.total, "swap_used_bytes": swap.used, "swap_used_percent": used_pct,
              "swap_in_bytes_per_second": round(rate_in), "swap_out_bytes_per_second": round(rate_out),
              "interval_seconds": round(pair.seconds, 2)}
    top, top_swap = None, 0
    if swap.used:
        for info in readings.others():
            amount = _swapped(info["pid"])
            if amount > top_swap:
                top, top_swap = info, amount
    state = (f"swap {used_pct:.0f} % used ({size(swap.used)} of {size(swap.total)}); "
             f"swapping in {size(rate_in)}/s, out {size(rate_out)}/s")
    holder = f"; most swapped out: {process_label(top)} with {size(top_swap)}" if top else ""
    if top:
        values.update(top_swapped=process_name(top), top_pid=top["pid"], top_swap_bytes=top_swap)
    severity = _grade(used_pct, rate_in, rate_out)
    if severity == OK:
        return [Finding("swap", OK, f"no swapping: {state}{holder}", values)]
    return [Finding("swap", severity, f"the machine is swapping or out of swap: {state}{holder}", values,
                    culprit=process_name(top) if top else None, pid=top["pid"] if top else None)]


ANALYZER = Analyzer("swap", ("swap", "swapping", "slow", "memory", "thrashing"), analyze)
