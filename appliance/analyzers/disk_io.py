"""Disk I/O: is a disk saturated (busy nearly all the interval, requests waiting long), and which
process reads or writes the most. From /proc/diskstats read twice over the check's interval
(io_ticks: milliseconds with I/O in flight; time spent per completed request: await), and the
process sample's storage-level read/write bytes. Thresholds and why: docs/analyzers.md, `disk_io`.
"""

from __future__ import annotations

import os
from typing import Any

from appliance.analyzers import procfs
from appliance.analyzers.base import CRITICAL, OK, WARNING, Analyzer, Finding, standout
from appliance.analyzers.naming import process_label, process_name, size
from appliance.analyzers.readings import ReadingUnavailable, Readings

BUSY_PERCENT = 90.0  # warning: I/O in flight ≥ 90 % of the interval
AWAIT_MS = (50.0, 100.0)  # warning (with enough requests), critical (when also busy)
MIN_IOPS = 10.0  # below this, an await is a few slow requests, not a queue
NAMED_RATE = 1 << 20  # the top reader/writer is named from 1 MiB/s, and stands out from it (with 3× the next)
_SKIP = ("loop", "ram", "zram", "fd", "sr")


def _whole_disks() -> set[str]:
    try:
        return {name for name in os.listdir("/sys/block") if not name.startswith(_SKIP)}
    except OSError as exc:
        raise ReadingUnavailable(f"/sys/block cannot be listed ({exc.strerror})") from None


def _diskstats() -> dict[str, tuple[int, ...]]:
    """name -> (reads, read ms, writes, write ms, io_ticks ms) for whole disks."""
    disks = _whole_disks()
    out: dict[str, tuple[int, ...]] = {}
    for line in procfs.read_text("/proc/diskstats").splitlines():
        f = line.split()
        if len(f) >= 13 and f[2] in disks:
            out[f[2]] = (int(f[3]), int(f[6]), int(f[7]), int(f[10]), int(f[12]))
    return out


def _rates(pair: procfs.Pair) -> list[dict]:
    rows = []
    for name, after in pair.after.items():
        before = pair.before.get(name)
        if before is None:
            continue
        reads, read_ms, writes, write_ms, ticks = (a - b for a, b in zip(after, before))
        done = reads + writes
        rows.append({"disk": name, "busy_percent": round(min(100.0, ticks / 10.0 / pair.seconds), 1),
                     "iops": round(done / pair.seconds, 1),
                     "await_ms": round((read_ms + write_ms) / done, 1) if done else 0.0})
    return sorted(rows, key=lambda r: (r["busy_percent"], r["iops"]), reverse=True)


def _grade(row: dict) -> str:
    busy, wait, iops = row["busy_percent"], row["await_ms"], row["iops"]
    if busy >= BUSY_PERCENT and wait >= AWAIT_MS[1]:
        return CRITICAL
    if busy >= BUSY_PERCENT or (wait >= AWAIT_MS[0] and iops >= MIN_IOPS):
        return WARNING
    return OK


def _total(p: dict) -> float:
    return (p.get("io_read_rate") or 0.0) + (p.get("io_write_rate") or 0.0)


def _top_io(readings: Readings) -> tuple[dict | None, float]:
    top = max(readings.others(), key=_total, default=None)
    return (top, _total(top)) if top is not None else (None, 0.0)


def analyze(readings: Readings) -> list[Finding]:
    rows = _rates(procfs.over_interval(readings, "diskstats", _diskstats))
    top, rate = _top_io(readings)
    values: dict[str, Any] = {"disks": rows}
    who = ""
    if top is not None and rate > 0:
        values.update(top_io=process_name(top), top_pid=top["pid"], top_read_bytes_per_second=round(top.get("io_read_rate") or 0),
                      top_write_bytes_per_second=round(top.get("io_write_rate") or 0))
        who = (f"; the top reader/writer is {process_label(top)}: read {size(top.get('io_read_rate') or 0)}/s, "
               f"write {size(top.get('io_write_rate') or 0)}/s")
    if not rows:
        return [Finding("disk_io", OK, f"no disk exposes I/O counters here{who}", values)]
    findings = []
    for row in rows:
        severity = _grade(row)
        if severity == OK:
            continue
        named = top if top is not None and rate >= NAMED_RATE else None
        findings.append(Finding("disk_io", severity,
                                f"disk {row['disk']} is saturated: busy {row['busy_percent']:.0f} % of the interval, "
                                f"{row['iops']:.0f} requests/s, {row['await_ms']:.0f} ms per request{who}",
                                dict(values, disk=row["disk"]), culprit=process_name(named) if named else None,
                                pid=named["pid"] if named else None))
    if findings:
        return findings
    busiest = rows[0]
    lead = standout(process_name(top), top["pid"], rate, (_total(p) for p in readings.others() if p is not top),
                    NAMED_RATE) if top is not None else None
    who += f", {lead.lead()}" if lead is not None else ""
    return [Finding("disk_io", OK,
                    f"no disk is saturated: the busiest, {busiest['disk']}, is busy {busiest['busy_percent']:.0f} % "
                    f"with {busiest['iops']:.0f} requests/s, {busiest['await_ms']:.0f} ms per request{who}", values,
                    standout=lead)]


ANALYZER = Analyzer("disk_io", ("disk", "io", "iowait", "slow", "writing", "reading", "throughput", "latency", "ssd", "hdd", "nvme",
                                "grinding", "hammering", "drive", "thrashing drive", "thrashing disk"), analyze)
