"""What grows during the check: a process whose memory grows in nearly every interval of the window (a
fast leak), and a filesystem whose free space falls in nearly every interval (a writer filling it), each
with its rate and the time until the limit (available memory, free space) at that rate.

Why a short window: the check must answer within 2 s, so the window runs beside the process
sample and the restart watch (WINDOW seconds, STEPS intervals); only a fast leak or a busy writer
shows in it, and an ok verdict says so. The filesystem's writers are the processes holding files
open under it (tools.holders), looked up only for a filesystem that is filling.
Thresholds and why: docs/analyzers.md.
"""

from __future__ import annotations

import os

import psutil

from appliance.analyzers.base import CRITICAL, OK, WARNING, Finding, beside
from appliance.analyzers.common import candidates, name_of, who
from appliance.analyzers.mounts import filesystems
from appliance.analyzers.naming import shown_path, size
from appliance.analyzers.readings import Readings
from appliance.tools import units
from appliance.tools.growth import Grower, growers, rss_all, series
from appliance.tools.holders import holding

MEMORY_FAMILY, DISK_FAMILY = "memory_growth", "disk_growth"
WINDOW = 1.2  # seconds at most (the check's restart watch takes 1.5 s; this ends before it)
MEMORY_RATE = 1 << 20  # bytes per second, steady over the window
DISK_RATE = 1 << 20
DISK_FULL_WITHIN = 3600.0  # seconds: a filesystem full within the hour at this rate
CRITICAL_WITHIN = 600.0  # seconds: memory or a filesystem used up within ten minutes

# The words of growth, one vocabulary for both families' topics and for a named path's reading:
# people say a log "balloons" or free space "keeps shrinking" as often as that something grows.
# A trend word beside a noun of one resource ("the log is ballooning", "memory keeps climbing")
# names that resource's family; bare, it names both.
TRENDS = ("grows", "growing", "grew", "getting bigger", "getting larger", "ballooning", "balloons", "swelling",
          "expanding", "creeps", "creeping", "climbing", "rising", "increasing", "piling up", "getting fuller",
          "fuller and fuller", "getting fatter", "bloating")
SHRINKS = ("shrinking", "shrinks", "dropping", "drops", "going down", "goes down", "decreasing", "vanishing")
_MEMORY_NOUNS = ("memory", "ram", "rss", "heap", "process", "program", "app", "service", "daemon")
_DISK_NOUNS = ("file", "log", "folder", "directory", "disk", "filesystem", "partition", "mount", "spool")


MEMORY_TOPICS = ("leak", "leaking", "leaks", "growing", "grows", "keeps growing", "creeps", "creeping", "over time",
                 "memory growth") + beside(_MEMORY_NOUNS, TRENDS)
DISK_TOPICS = ("keeps filling", "growing", "grows", "keeps growing", "time to full") \
    + beside(_DISK_NOUNS, TRENDS) + beside(("space", "room"), SHRINKS)


def window(readings: Readings) -> float:
    return min(WINDOW, max(readings.sample_seconds, readings.watch_seconds))


def memory_growth(readings: Readings) -> list[Finding]:
    """Processes whose resident memory grew in nearly every interval of the window, fastest first."""
    taken, spanned = readings.get("rss_series", lambda: series(rss_all, window(readings)))
    others = {p["pid"]: p for p in candidates(readings)}
    found = [g for g in growers(taken, spanned) if g.key in others]
    available = psutil.virtual_memory().available
    steady = [g for g in found if g.steady and g.rate >= MEMORY_RATE][:3]
    if steady:
        return [_leak(g, others[int(g.key)], available, spanned) for g in steady]
    fastest = found[0] if found else None
    values = {"window_seconds": round(spanned, 2), "fastest": name_of(others[int(fastest.key)]) if fastest else None,
              "fastest_pid": fastest.key if fastest else None,
              "fastest_bytes_per_second": round(fastest.rate) if fastest else 0}
    seen = (f"the fastest, {who(others[int(fastest.key)])}, grew {units.rate(fastest.rate)}"
            if fastest else "none grew")
    return [Finding(MEMORY_FAMILY, OK, f"no process's memory grows fast: over {spanned:.1f} s {seen} (a warning from "
                    f"{units.rate(MEMORY_RATE)} in nearly every interval; a slow leak needs a longer watch)", values)]


def _leak(grower: Grower, info: dict, available: int, spanned: float) -> Finding:
    left = available / grower.rate
    values = {"rss_start_bytes": grower.first, "rss_end_bytes": grower.last, "bytes_per_second": round(grower.rate),
              "window_seconds": round(spanned, 2), "memory_available_bytes": available, "seconds_to_full": round(left)}
    return Finding(MEMORY_FAMILY, CRITICAL if left < CRITICAL_WITHIN else WARNING,
                   f"memory growing: {who(info)} grew from {size(grower.first)} to {size(grower.last)} in {spanned:.1f} s "
                   f"({units.rate(grower.rate)}, in nearly every interval); at this rate the {size(available)} available "
                   f"are used up in {units.duration(left)}", values, culprit=name_of(info), pid=int(grower.key))


def _free(readings: Readings) -> dict[str, int]:
    found = {}
    for fs in filesystems(readings):
        try:
            stv = os.statvfs(fs.mount.mountpoint)
        except OSError:
            continue
        found[fs.mount.mountpoint] = stv.f_bavail * stv.f_frsize
    return found


def disk_growth(readings: Readings) -> list[Finding]:
    """Filesystems whose free space fell in nearly every interval of the window, with the time to full."""
    taken, spanned = readings.get("free_series", lambda: series(lambda: {k: -v for k, v in _free(readings).items()},
                                                                 window(readings)))
    losing = growers(taken, spanned)  # free space as a negative number: it "grows" as it falls
    filling = [g for g in losing if g.steady and g.rate >= DISK_RATE and -g.last / g.rate < DISK_FULL_WITHIN]
    if filling:
        return [_filling(g, readings, spanned) for g in filling[:2]]
    fastest = losing[0] if losing else None
    values = {"window_seconds": round(spanned, 2), "filesystems": len(taken[0]),
              "fastest": shown_path(readings, str(fastest.key)) if fastest else None,
              "fastest_bytes_per_second": round(fastest.rate) if fastest else 0}
    seen = (f"the fastest, {values['fastest']}, lost {units.rate(fastest.rate)}" if fastest
            else "no filesystem lost free space")
    return [Finding(DISK_FAMILY, OK, f"no filesystem is filling fast: over {spanned:.1f} s {seen} (a warning when one "
                    f"loses at least {units.rate(DISK_RATE)} in nearly every interval and is full within "
                    f"{units.duration(DISK_FULL_WITHIN)})", values)]


def _filling(grower: Grower, readings: Readings, spanned: float) -> Finding:
    mount = str(grower.key)
    free, left = -grower.last, -grower.last / grower.rate
    writers = _writers(mount, readings)
    shown = shown_path(readings, mount)
    opened = [f"{w['who']}: {w['path']}" for w in writers]
    values = {"mount": shown, "free_bytes": free, "bytes_per_second": round(grower.rate),
              "seconds_to_full": round(left), "window_seconds": round(spanned, 2),
              "open_there": opened}
    held = f"; open there: {', '.join(opened[:2])}" if writers else ""
    return Finding(DISK_FAMILY, CRITICAL if left < CRITICAL_WITHIN else WARNING,
                   f"filesystem filling: {shown} lost {units.rate(grower.rate)} of free space in every "
                   f"interval of {spanned:.1f} s; {size(free)} free, full in {units.duration(left)} at this rate{held}",
                   values, culprit=shown, pid=writers[0]["pid"] if writers else None, path=mount)


def _writers(mount: str, readings: Readings) -> list[dict]:
    """The processes (not the appliance's own) with files open under the mount."""
    own = readings.own()
    table = {p["pid"]: p for p in candidates(readings)}
    out = []
    for holder in holding(mount, deadline=0.4).holders:
        if holder.pid in own or holder.pid not in table or "open file" not in holder.ways:
            continue
        out.append({"pid": holder.pid, "who": who(table[holder.pid]), "path": shown_path(readings, holder.open_files[0])})
    return out[:3]
