"""OOM kills: did the kernel kill a process for memory, which one, when, and was it the whole
machine or a control group's limit. Counted from /proc/vmstat `oom_kill` (every kill since boot)
and named from the kernel log ("Out of memory: Killed process PID (NAME)"), which may have
rotated out older kills. Thresholds and why: docs/analyzers.md, table `oom`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from appliance.analyzers import kernel_log, procfs
from appliance.analyzers.base import CRITICAL, OK, WARNING, Analyzer, Finding
from appliance.analyzers.readings import ReadingUnavailable, Readings
from appliance.tools import units

MACHINE_RECENT = (3600.0, 86400.0)  # a machine-wide OOM: critical within the last hour, warning within a day
GROUP_RECENT = 3600.0  # a kill at a control group's limit (one service or container): warning for an hour
_KILLED = re.compile(r"(Memory cgroup out of memory: |Out of memory: |)Kill(?:ed)? process (\d+) \((.*?)\)")


@dataclass(frozen=True)
class Kill:
    pid: int
    name: str
    when: float | None  # Unix time
    by_cgroup: bool
    line: str


def kills(readings: Readings) -> list[Kill]:
    """Every OOM kill still in the kernel log, oldest first, one per pid."""
    seen: dict[int, Kill] = {}
    for stamp, text in kernel_log.lines(readings):
        match = _KILLED.search(text)
        if match is None:
            continue
        pid = int(match.group(2))
        by_cgroup = match.group(1).startswith("Memory cgroup") or (pid in seen and seen[pid].by_cgroup)
        seen[pid] = Kill(pid, match.group(3), kernel_log.wall_time(stamp), by_cgroup, text[:300])
    return list(seen.values())


def _severity(kill: Kill, age: float | None) -> str:
    if age is None:
        return WARNING  # in the log without a time stamp: when is unknown
    if kill.by_cgroup:
        return WARNING if age <= GROUP_RECENT else OK
    return CRITICAL if age <= MACHINE_RECENT[0] else WARNING if age <= MACHINE_RECENT[1] else OK


def analyze(readings: Readings) -> list[Finding]:
    counted = procfs.vmstat().get("oom_kill")
    try:
        logged, log_note = kills(readings), ""
    except ReadingUnavailable as exc:
        logged, log_note = [], f" (the kernel log could not be read: {exc})"
    values: dict[str, Any] = {"oom_kills_since_boot": counted, "oom_kills_in_kernel_log": len(logged)}
    if not logged:
        if counted:  # when the log was read, the kills are older than it reaches back; else unknown
            return [Finding("oom", WARNING if log_note else OK,
                            f"{counted} OOM kill{'s' if counted > 1 else ''} since boot (counted in /proc/vmstat), "
                            f"none in the kernel log to name or date{log_note or ' (older than the log reaches back)'}",
                            values)]
        return [Finding("oom", OK, f"no OOM kill since boot (/proc/vmstat counts {counted or 0}){log_note}", values)]
    last = logged[-1]
    age = readings.now - last.when if last.when is not None else None
    cause = "its control group's memory limit" if last.by_cgroup else "the machine ran out of memory"
    when = f"{units.when(last.when)} ({units.duration(age)} ago)" if age is not None else "at an unknown time"
    values.update(last_killed=last.name, last_pid=last.pid, last_when=units.when(last.when),
                  last_age_seconds=round(age) if age is not None else None, by_cgroup_limit=last.by_cgroup,
                  killed=[{"pid": k.pid, "name": k.name, "when": units.when(k.when)} for k in logged[-10:]],
                  log_line=last.line)
    severity = _severity(last, age)
    total = f"{counted} OOM kill{'s' if (counted or 0) > 1 else ''} since boot"
    verdict = f"the kernel OOM-killed {last.name} (pid {last.pid}) {when}: {cause}; {total}"
    if severity == OK:
        return [Finding("oom", OK, f"no recent OOM kill: the last, {last.name} (pid {last.pid}), was {when}; {total}", values)]
    return [Finding("oom", severity, verdict, values, culprit=last.name, pid=last.pid)]


ANALYZER = Analyzer("oom", ("oom", "out of memory", "killed", "crash", "memory", "disappeared"), analyze,
                    past=True)
