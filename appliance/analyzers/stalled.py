"""Tasks stuck in uninterruptible sleep (D state) and I/O pressure: the waiting that CPU percent
does not show. A task in D waits for the kernel (a disk, a network filesystem, a hung driver) and
cannot be killed; each one adds 1 to the load average without using a CPU. Thresholds:
docs/analyzers.md, `stalled_tasks`.
"""

from __future__ import annotations

import os

from appliance.analyzers import procfs
from appliance.analyzers.base import OK, WARNING, Analyzer, Finding
from appliance.analyzers.common import plural, quote
from appliance.analyzers.readings import Readings
from appliance.analyzers.saturation_window import window
from appliance.tools import saturation

IO_FULL_AVG10 = 10.0  # % of the last 10 s in which every non-idle task waited for I/O
SHOWN = 5


def analyze(readings: Readings) -> list[Finding]:
    win = window(readings)
    own = readings.own()
    stuck = {tid: info for tid, info in win.stuck().items()
             if info[0] not in own and not saturation.kernel_thread(info[0])}
    load1 = os.getloadavg()[0]
    psi = procfs.pressure_or_none("io")
    io_full = psi.get("full", {}).get("avg10", 0.0) if psi else None
    values = {"load_1min": round(load1, 2), "running": win.after.running, "uninterruptible": len(win.after.stuck),
              "stuck_whole_window": len(stuck), "io_pressure_full_avg10": io_full}
    makeup = (f"load {load1:.2f}: {win.after.running} running and {len(win.after.stuck)} in uninterruptible "
              f"sleep (D) now")
    findings = []
    if stuck:
        by_pid: dict[int, tuple[str, str, int]] = {}
        for pid, name, wchan in stuck.values():
            count = by_pid.get(pid, (name, wchan, 0))[2] + 1
            by_pid[pid] = (name, wchan, count)
        shown = "; ".join(f"{quote(name, 40)} (pid {pid}, {plural(n, 'thread')}, waiting in {wchan})"
                          for pid, (name, wchan, n) in sorted(by_pid.items())[:SHOWN])
        first = min(by_pid)
        findings.append(Finding("stalled_tasks", WARNING,
                                f"{plural(len(stuck), 'task')} stayed in uninterruptible sleep (D) the whole "
                                f"{win.seconds:.1f} s: {shown}; they wait for the kernel (disk, network filesystem, "
                                f"driver) and cannot be killed; {makeup}", values,
                                culprit=quote(by_pid[first][0], 40), pid=first))
    if io_full is not None and io_full >= IO_FULL_AVG10:
        findings.append(Finding("stalled_tasks", WARNING,
                                f"I/O pressure: in {io_full:.0f} % of the last 10 s every running task waited for "
                                f"I/O; {makeup}", values))
    if findings:
        return findings
    io_text = f"; I/O pressure {io_full:.0f} % (full, avg10)" if io_full is not None else ""
    return [Finding("stalled_tasks", OK, f"no task is stuck in uninterruptible sleep; {makeup}{io_text}", values)]


ANALYZER = Analyzer("stalled_tasks", ("uninterruptible", "d state", "hung", "stuck", "hang", "hanging", "load average",
                                      "high load", "frozen", "unkillable", "blocked"), analyze)
