"""Control groups at their limits: throttled by a CPU quota (cpu.stat nr_throttled grows: the
programs in it wait although the machine has idle cores), or hitting their memory limit
(memory.events max, oom_kill). Why: a container or a service with CPUQuota= or MemoryMax= is slow
or killed on a half-idle host, and no machine-wide number shows it. Thresholds: docs/analyzers.md,
`cgroup_limits`.
"""

from __future__ import annotations

from appliance.analyzers.base import CRITICAL, OK, WARNING, Analyzer, Finding
from appliance.analyzers.common import plural, quote
from appliance.analyzers.readings import Readings
from appliance.analyzers.saturation_window import window
from appliance.tools import saturation

THROTTLED_PERCENT = 20.0  # of the quota periods in the window
MIN_THROTTLED = 2  # periods: one throttled period is a blip


def _members(group: str, own: set[int]) -> tuple[list[str], int | None]:
    pids = [p for p in saturation.group_pids(group) if p not in own]
    shown = saturation.names(pids, set())
    return shown, (pids[0] if pids else None)


def analyze(readings: Readings) -> list[Finding]:
    win = window(readings)
    own = readings.own()
    findings = []
    limited = [name for name, g in win.after.groups.items() if g.quota]
    for row in win.throttled():
        if row["throttled_periods"] < MIN_THROTTLED or row["throttled_percent"] < THROTTLED_PERCENT:
            continue
        members, pid = _members(row["group"], own)
        if not members:
            continue
        findings.append(Finding(
            "cgroup_limits", WARNING,
            f"control group {quote(row['group'], 80)} is throttled by its CPU quota of {row['quota']}: "
            f"{row['throttled_percent']:.0f} % of its periods in the last {win.seconds:.1f} s "
            f"({row['throttled_ms']:.0f} ms held back); its programs wait although cores may be idle: "
            f"{', '.join(members)}", dict(row), culprit=members[0].rsplit(" (pid", 1)[0], pid=pid,
            path=row["group"]))
    for row in win.memory_events():
        new = row["in_window"]
        if new == "none" or not any(new.get(k) for k in ("max", "oom_kill", "oom")):
            continue
        members, pid = _members(row["group"], own)
        killed = new.get("oom_kill", 0)
        findings.append(Finding(
            "cgroup_limits", CRITICAL if killed else WARNING,
            f"control group {quote(row['group'], 80)} hit its memory limit during the check "
            f"({', '.join(f'{k} +{v}' for k, v in sorted(new.items()))})"
            + (f": {plural(killed, 'process')} killed" if killed else "")
            + (f"; in it: {', '.join(members)}" if members else ""), dict(row),
            culprit=members[0].rsplit(" (pid", 1)[0] if members else row["group"], pid=pid, path=row["group"]))
    if findings:
        return findings
    return [Finding("cgroup_limits", OK,
                    f"no control group was throttled or at its memory limit during the check "
                    f"({plural(len(limited), 'group')} with a CPU quota)", {"groups_with_cpu_quota": len(limited)})]


ANALYZER = Analyzer("cgroup_limits", ("throttled", "throttling", "cpu quota", "quota", "cgroup", "container",
                                      "docker", "pod", "capped", "memory limit", "cpu limit"), analyze)
