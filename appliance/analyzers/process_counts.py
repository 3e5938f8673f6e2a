"""Per-process counts that run out: zombies (pid slots), open files (descriptors vs the limit) and
threads (vs the kernel's limits). Thresholds and why: docs/analyzers.md.

The appliance's own processes and their children are never a culprit: a zombie of the appliance's
own is not counted, and the process with the most threads or descriptors is the busiest *other*.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict

import psutil

from appliance.analyzers.base import CRITICAL, OK, WARNING, Finding, standout
from appliance.analyzers.common import candidates, name_of, plural, proc_table, read_number, read_small, who
from appliance.analyzers.readings import ReadingUnavailable, Readings

ZOMBIE_RECHECK_SECONDS = 0.2  # a zombie still there this much later is not being reaped
# ... except by init, which reaps orphans on its own schedule (some minimal inits of containers and
# VMs every few seconds): its zombies are looked at again this much later (the check's other
# analyzers take as long, so it adds no time).
INIT_RECHECK_SECONDS = 1.5
ZOMBIE_CRITICAL_SHARE = 0.05  # of pid_max: pid exhaustion is near
FD_WARNING, FD_CRITICAL = 0.80, 0.95  # of the soft RLIMIT_NOFILE
FILE_NR_WARNING = 0.80  # of fs.file-max
THREADS_PROCESS_WARNING = 1000
THREADS_STANDOUT = 100  # the process with the most threads stands out from 100 (and 3× the next)
THREADS_SYSTEM_WARNING, THREADS_SYSTEM_CRITICAL = 0.75, 0.90  # of min(threads-max, pid_max)


# -- zombies --------------------------------------------------------------------------------------


def _still_zombies(pids: list[int], seconds: float = ZOMBIE_RECHECK_SECONDS) -> set[int]:
    time.sleep(seconds)
    left = set()
    for pid in pids:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                left.add(pid)
        except psutil.Error:
            continue
    return left


def zombies(readings: Readings) -> list[Finding]:
    """Zombies grouped by the parent that does not reap them."""
    own = readings.own()
    table = {p["pid"]: p for p in proc_table(readings)}
    # a zombie of the appliance's own (or one that is itself ours) is not a fault of the machine
    found = [p for p in table.values() if p.get("status") == psutil.STATUS_ZOMBIE
             and p["pid"] not in own and p.get("ppid") not in own]
    lasting = _still_zombies([p["pid"] for p in found if p.get("ppid") != 1]) if found else set()
    if any(p.get("ppid") == 1 for p in found):
        lasting |= _still_zombies([p["pid"] for p in found if p.get("ppid") == 1], INIT_RECHECK_SECONDS)
    by_parent: dict[int, list[int]] = defaultdict(list)
    for p in found:
        if p["pid"] in lasting:
            by_parent[p.get("ppid") or 0].append(p["pid"])
    if not by_parent:
        gone = len(found)
        return [Finding("zombies", OK, "no zombie processes" + (
            f" ({plural(gone, 'zombie')} seen briefly, reaped within {ZOMBIE_RECHECK_SECONDS:g} s)" if gone else ""),
            {"zombies": 0, "reaped_briefly": gone})]
    pid_max = read_number(readings, "/proc/sys/kernel/pid_max") or 32768
    total = sum(len(v) for v in by_parent.values())
    severity = CRITICAL if total >= ZOMBIE_CRITICAL_SHARE * pid_max else WARNING
    findings = []
    for ppid, kids in sorted(by_parent.items(), key=lambda kv: -len(kv[1])):
        parent = table.get(ppid, {"pid": ppid, "name": "?"})
        findings.append(Finding(
            "zombies", severity,
            f"{who(parent)} holds {plural(len(kids), 'zombie child', 'zombie children')} it has not reaped "
            f"(pids {', '.join(map(str, sorted(kids)[:8]))}{' …' if len(kids) > 8 else ''}); "
            f"{total} zombies on the machine, pid_max {pid_max}",
            {"zombies": len(kids), "zombie_pids": sorted(kids)[:50], "zombies_total": total, "pid_max": pid_max},
            culprit=name_of(parent), pid=ppid))
    return findings


# -- open files -----------------------------------------------------------------------------------

_NOFILE_RE = re.compile(r"^Max open files\s+(\S+)\s+(\S+)", re.M)


def _soft_nofile(readings: Readings, pid: int) -> int | None:
    """The soft RLIMIT_NOFILE from /proc/PID/limits (None: unlimited or unreadable)."""
    try:
        match = _NOFILE_RE.search(read_small(readings, f"/proc/{pid}/limits", 8192))
    except ReadingUnavailable:
        return None
    return int(match.group(1)) if match and match.group(1).isdigit() else None


def _file_nr(readings: Readings) -> tuple[int, int] | None:
    try:
        allocated, _unused, maximum = (int(x) for x in read_small(readings, "/proc/sys/fs/file-nr", 256).split()[:3])
    except (ReadingUnavailable, ValueError):
        return None
    return allocated, maximum


def open_files(readings: Readings) -> list[Finding]:
    """Processes near their descriptor limit, the process with the most, and the system's file-nr."""
    procs = [p for p in candidates(readings) if p.get("num_fds")]
    if not procs:
        raise ReadingUnavailable("no process's descriptors can be counted (not running as root?)")
    findings = []
    for p in procs:
        limit = _soft_nofile(readings, p["pid"])
        if not limit:
            continue
        share = p["num_fds"] / limit
        if share >= FD_WARNING:
            findings.append(Finding(
                "open_files", CRITICAL if share >= FD_CRITICAL else WARNING,
                f"{who(p)} has {p['num_fds']} files open of its limit {limit} ({share:.0%}); "
                f"at the limit it fails with 'Too many open files'",
                {"open_files": p["num_fds"], "soft_limit": limit, "percent": round(100 * share, 1)},
                culprit=name_of(p), pid=p["pid"]))
    most = max(procs, key=lambda p: p["num_fds"])
    nr = _file_nr(readings)
    system = f"; the system has {nr[0]} file handles of fs.file-max {nr[1]}" if nr else ""
    values = {"most_open_files": most["num_fds"], "process": name_of(most), "pid": most["pid"],
              "soft_limit": _soft_nofile(readings, most["pid"])}
    if nr:
        values.update(file_handles=nr[0], file_max=nr[1])
    if nr and nr[1] and nr[0] >= FILE_NR_WARNING * nr[1]:
        findings.append(Finding("open_files", WARNING,
                                f"the system is near its file handle limit: {nr[0]} of fs.file-max {nr[1]}; "
                                f"the most open files: {who(most)}, {most['num_fds']}",
                                values, culprit=name_of(most), pid=most["pid"]))
    if not findings:
        limit = values["soft_limit"]
        findings.append(Finding("open_files", OK,
                                f"no process is near its open-file limit: the most open files, {most['num_fds']}, "
                                f"are held by {who(most)}" + (f" (limit {limit})" if limit else "") + system,
                                values))
    return findings


# -- threads --------------------------------------------------------------------------------------


def threads(readings: Readings) -> list[Finding]:
    """The process with the most threads, processes with thousands, the system vs its limits."""
    table = proc_table(readings)
    procs = [p for p in candidates(readings) if p.get("num_threads")]
    if not procs:
        raise ReadingUnavailable("no process's threads can be counted")
    total = sum(p.get("num_threads") or 0 for p in table)
    limits = [n for n in (read_number(readings, "/proc/sys/kernel/threads-max"),
                          read_number(readings, "/proc/sys/kernel/pid_max")) if n]
    ceiling = min(limits) if limits else None
    most = max(procs, key=lambda p: p["num_threads"])
    values = {"threads_total": total, "limit": ceiling, "most_threads": most["num_threads"],
              "process": name_of(most), "pid": most["pid"]}
    findings = []
    if ceiling and total >= THREADS_SYSTEM_WARNING * ceiling:
        findings.append(Finding(
            "threads", CRITICAL if total >= THREADS_SYSTEM_CRITICAL * ceiling else WARNING,
            f"{total} threads on the machine, {total / ceiling:.0%} of the limit {ceiling} "
            f"(threads-max / pid_max): new threads and processes will fail; most: {who(most)}, {most['num_threads']}",
            values, culprit=name_of(most), pid=most["pid"]))
    for p in sorted(procs, key=lambda p: -p["num_threads"]):
        if p["num_threads"] < THREADS_PROCESS_WARNING:
            break
        findings.append(Finding(
            "threads", WARNING,
            f"{who(p)} runs {p['num_threads']} threads (over {THREADS_PROCESS_WARNING}: a thread leak or "
            f"runaway pool); {total} threads on the machine" + (f", limit {ceiling}" if ceiling else ""),
            {**values, "threads": p["num_threads"]}, culprit=name_of(p), pid=p["pid"]))
    if not findings:
        lead = standout(name_of(most), most["pid"], most["num_threads"],
                        (p["num_threads"] for p in procs if p is not most), THREADS_STANDOUT)
        findings.append(Finding(
            "threads", OK,
            f"thread counts are normal: the most, {most['num_threads']}, in {who(most)}"
            + (f", {lead.lead()}" if lead else "") + f"; "
            f"{total} threads on the machine" + (f" of a limit of {ceiling}" if ceiling else ""),
            values, standout=lead))
    return findings
