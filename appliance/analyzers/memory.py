"""Memory: is the machine (or a control group) short of memory, and who holds the most.

Pressure is judged from what the kernel can still give without killing (MemAvailable, not "free",
which a healthy machine keeps near zero with page cache) and from PSI memory stalls; a group with
a memory limit is judged against its limit. The top consumer is named in every verdict and blamed
only when there is pressure: a large process on a machine with memory to spare is not a fault.
Thresholds and why: docs/analyzers.md, table `memory`.
"""

from __future__ import annotations

from typing import Any

import psutil

from appliance.analyzers import cgroups, procfs
from appliance.analyzers.base import CRITICAL, OK, WARNING, Analyzer, Finding, Standout, standout
from appliance.analyzers.naming import gib, process_label, process_name, size
from appliance.analyzers.readings import ReadingUnavailable, Readings
from appliance.tools.redact import redact

AVAILABLE_PERCENT = (10.0, 5.0)  # warning, critical: MemAvailable below this share of RAM
PSI_SOME = 10.0  # warning: some task stalled on memory ≥ 10 % of the last 10 s
PSI_FULL = 10.0  # critical: every task stalled ≥ 10 % of the last 10 s (thrashing)
GROUP_PERCENT = (90.0, 97.0)  # warning, critical: a group's anonymous memory share of its limit
STANDOUT_BYTES = 512 << 20  # the top consumer stands out from 512 MiB resident (and 3× the next)


def _rss(info: dict) -> int:
    mem = info.get("memory_info")
    return mem.rss if mem else 0


def _pressure_severity(available_pct: float, psi: dict | None) -> str:
    some = psi.get("some", {}).get("avg10", 0.0) if psi else 0.0
    full = psi.get("full", {}).get("avg10", 0.0) if psi else 0.0
    if available_pct < AVAILABLE_PERCENT[1] or full >= PSI_FULL:
        return CRITICAL
    if available_pct < AVAILABLE_PERCENT[0] or some >= PSI_SOME:
        return WARNING
    return OK


def _machine(top: dict | None, lead: Standout | None = None) -> Finding:
    vm = psutil.virtual_memory()
    psi = procfs.pressure_or_none("memory")
    available_pct = round(100.0 * vm.available / vm.total, 1)
    values: dict[str, Any] = {"total_gib": gib(vm.total), "available_gib": gib(vm.available), "available_percent": available_pct,
              "memory_pressure": psi}
    psi_text = (f"; memory pressure {psi['some']['avg10']:.0f} % some, {psi.get('full', {}).get('avg10', 0.0):.0f} % full (avg10)"
                if psi and "some" in psi else "")
    top_text = "no other process holds memory"
    if top:
        values.update(top_consumer=process_name(top), top_pid=top["pid"], top_rss_gib=gib(_rss(top)),
                      top_percent=round(100.0 * _rss(top) / vm.total, 1))
        top_text = f"the top consumer is {process_label(top)} with {size(_rss(top))} ({values['top_percent']:.0f} % of RAM)"
    state = f"{size(vm.available)} of {size(vm.total)} available ({available_pct:.0f} %){psi_text}"
    severity = _pressure_severity(available_pct, psi)
    if severity == OK:
        if lead is not None:
            top_text += f", {lead.lead()}"
        return Finding("memory", OK, f"no memory pressure: {state}; {top_text}", values, standout=lead)
    return Finding("memory", severity, f"memory pressure: {state}; {top_text}", values,
                   culprit=process_name(top) if top else None, pid=top["pid"] if top else None)


def _groups(readings: Readings, by_pid: dict[int, dict]) -> list[Finding]:
    """A finding for each control group near its memory limit whose biggest process is not ours."""
    try:
        groups = cgroups.limited_groups(psutil.virtual_memory().total)
    except ReadingUnavailable:
        return []
    own = readings.own()
    findings = []
    for group in groups:
        share = 100.0 * group.anon / group.limit if group.limit else 100.0
        if share < GROUP_PERCENT[0]:
            continue
        members = [by_pid[p] for p in group.pids if p in by_pid and p not in own]
        if not members:
            continue  # empty, or only the appliance itself: never a culprit
        top = max(members, key=_rss)
        severity = CRITICAL if share >= GROUP_PERCENT[1] else WARNING
        name = redact(group.name)
        findings.append(Finding(
            "memory", severity,
            f"control group {name} is at {share:.0f} % of its memory limit ({size(group.anon)} of {size(group.limit)}, "
            f"anonymous memory): its next allocations stall and then the OOM killer acts; its biggest process is "
            f"{process_label(top)} with {size(_rss(top))}",
            {"cgroup": name, "limit_bytes": group.limit, "anon_bytes": group.anon, "percent_of_limit": round(share, 1),
             "top_rss_bytes": _rss(top)},
            culprit=process_name(top), pid=top["pid"]))
    return findings


def analyze(readings: Readings) -> list[Finding]:
    others = readings.others()
    top = max(others, key=_rss, default=None)
    if top is not None and _rss(top) == 0:
        top = None
    by_pid = {p["pid"]: p for p in others}
    lead = standout(process_name(top), top["pid"], _rss(top), (_rss(p) for p in others if p is not top),
                    STANDOUT_BYTES) if top is not None else None
    return [_machine(top, lead)] + _groups(readings, by_pid)


ANALYZER = Analyzer("memory", ("memory", "ram", "slow", "hog", "leak", "low memory", "out of memory"), analyze)
