"""Filesystem space and inodes: which filesystem is full, by share AND by what is left.

Why both: a percentage alone misleads at both ends. A 2 TB disk at 95 % still has 100 GB free and
is not full; an 8 MB tmpfs at 90 % has 800 KB left and is. So space is a problem only when the
used share is high *and* the free bytes are few. Inodes run out independently of space (millions
of small files), and then writes fail with "No space left on device" on a disk with room.
Thresholds and why: docs/analyzers.md, tables `filesystem_full` and `inodes`.
"""

from __future__ import annotations

import os

from appliance.analyzers.base import CRITICAL, OK, SEVERITY_RANK, WARNING, Analyzer, Finding
from appliance.analyzers.mounts import Filesystem, filesystems
from appliance.analyzers.naming import shown_path, size
from appliance.analyzers.readings import Readings

GIB = 1 << 30
SPACE_WARNING = (90.0, 20 * GIB)  # used % at least, and free below
SPACE_CRITICAL = (95.0, 5 * GIB)
INODES_PERCENT = (90.0, 98.0)  # warning, critical


def space_severity(fs: Filesystem) -> str:
    if fs.available == 0 or (fs.used_percent >= SPACE_CRITICAL[0] and fs.available < SPACE_CRITICAL[1]):
        return CRITICAL
    if fs.used_percent >= SPACE_WARNING[0] and fs.available < SPACE_WARNING[1]:
        return WARNING
    return OK


def inode_percent(fs: Filesystem) -> float | None:
    """Inodes in use, in percent; None for filesystems without a fixed inode table (btrfs, vfat)."""
    total, free = fs.stat.f_files, fs.stat.f_ffree
    return round(100.0 * (total - free) / total, 1) if total else None


def _space_values(fs: Filesystem, readings: Readings) -> dict:
    return {"mount": shown_path(readings, fs.mount.mountpoint), "type": fs.mount.fstype,
            "size_bytes": fs.size, "used_bytes": fs.used, "available_bytes": fs.available,
            "used_percent": fs.used_percent}


def _describe(fs: Filesystem, readings: Readings) -> str:
    return (f"{shown_path(readings, fs.mount.mountpoint)} ({fs.mount.fstype}) is {fs.used_percent:.0f} % used, "
            f"{size(fs.available)} free of {size(fs.size)}")


def analyze_space(readings: Readings) -> list[Finding]:
    found = sorted(filesystems(readings), key=lambda f: f.used_percent, reverse=True)
    if not found:
        return [Finding("filesystem_full", OK, "no storage filesystem is mounted to measure", {"filesystems": 0})]
    table = [_space_values(fs, readings) for fs in found]
    findings = []
    for fs in found:
        severity = space_severity(fs)
        if severity != OK:
            mount = shown_path(readings, fs.mount.mountpoint)
            findings.append(Finding("filesystem_full", severity,
                                    f"filesystem full: {_describe(fs, readings)}; writes there fail once it reaches 0",
                                    dict(_space_values(fs, readings), filesystems=table), culprit=mount, path=mount))
    if findings:
        return findings
    fullest = found[0]
    return [Finding("filesystem_full", OK,
                    f"no filesystem is full: the fullest, {_describe(fullest, readings)} "
                    f"({len(found)} filesystem{'s' if len(found) > 1 else ''} measured)",
                    dict(_space_values(fullest, readings), filesystems=table))]


def analyze_inodes(readings: Readings) -> list[Finding]:
    percents = [(fs, inode_percent(fs)) for fs in filesystems(readings)]
    measured = sorted(((fs, p) for fs, p in percents if p is not None), key=lambda x: x[1], reverse=True)
    if not measured:
        return [Finding("inodes", OK, "no filesystem here has a fixed number of inodes", {"filesystems": 0})]

    def values(fs: Filesystem, pct: float) -> dict:
        return {"mount": shown_path(readings, fs.mount.mountpoint), "type": fs.mount.fstype,
                "inodes_total": fs.stat.f_files, "inodes_free": fs.stat.f_ffree, "inodes_used_percent": pct}

    def describe(fs: Filesystem, pct: float) -> str:
        return (f"{shown_path(readings, fs.mount.mountpoint)} ({fs.mount.fstype}) uses {pct:.0f} % of its inodes, "
                f"{fs.stat.f_ffree:,} of {fs.stat.f_files:,} free; space {fs.used_percent:.0f} % used")

    findings = []
    for fs, pct in measured:
        if pct >= INODES_PERCENT[0] or fs.stat.f_ffree == 0:
            severity = CRITICAL if pct >= INODES_PERCENT[1] or fs.stat.f_ffree == 0 else WARNING
            mount = shown_path(readings, fs.mount.mountpoint)
            findings.append(Finding("inodes", severity,
                                    f"inodes exhausted: {describe(fs, pct)}; new files fail with "
                                    f"'No space left on device' whatever the free space", values(fs, pct),
                                    culprit=mount, path=mount))
    if findings:
        return findings
    fs, pct = measured[0]
    return [Finding("inodes", OK, f"inodes are fine: the most used, {describe(fs, pct)}", values(fs, pct))]


SPACE = Analyzer("filesystem_full", ("disk", "full", "space", "filesystem", "storage", "save", "df", "partition",
                                     "fill up", "filling up", "fills up"),
                 analyze_space)
INODES = Analyzer("inodes", ("inode", "inodes", "disk", "full", "space", "save", "files", "no space left"),
                  analyze_inodes)


def fullest_mount(readings: Readings) -> str | None:
    """The mount point of the filesystem a "what fills my disk?" is most likely about: the worst by
    the space verdict, then the most used; None when no storage filesystem is mounted."""
    found = filesystems(readings)
    if not found:
        return None
    return max(found, key=lambda fs: (SEVERITY_RANK[space_severity(fs)], fs.used_percent)).mount.mountpoint


def filesystem_of(path: str, readings: Readings) -> Filesystem | None:
    """The storage filesystem that holds `path` (the mount with the longest mount point above it)."""
    real = os.path.realpath(os.path.expanduser(path))
    best = None
    for fs in filesystems(readings):
        mountpoint = fs.mount.mountpoint
        if real == mountpoint or real.startswith(mountpoint.rstrip("/") + "/"):
            if best is None or len(mountpoint) > len(best.mount.mountpoint):
                best = fs
    return best


def place_findings(path: str, readings: Readings) -> list[Finding]:
    """The space, inode and read-only verdicts of the filesystem that holds a place a person names:
    "is /data/incoming about to fill up?" is about that filesystem, not the machine's fullest one."""
    fs = filesystem_of(path, readings)
    if fs is None:
        return []
    mount = shown_path(readings, fs.mount.mountpoint)
    shown = shown_path(readings, path)
    # the clause naming the filesystem holds its numbers, and the place asked about comes after: a
    # retry begins with the clause naming the culprit, and "X is on X (tmpfs)" says nothing of the
    # fault (nor does a clause of two long paths that no opening has room for)
    where = (f"{mount} ({fs.mount.fstype}) is {fs.used_percent:.0f} % used, {size(fs.available)} free of "
             f"{size(fs.size)}" + ("" if shown == mount else f"; {shown} is on it"))
    severity = space_severity(fs)
    space = Finding("filesystem_full", severity,
                    (f"filesystem full: {where}; writes there fail once it reaches 0" if severity != OK
                     else f"not full: {where}"),
                    _space_values(fs, readings), culprit=mount if severity != OK else None,
                    path=mount)
    found = [space]
    pct = inode_percent(fs)
    if pct is not None:
        exhausted = pct >= INODES_PERCENT[0] or fs.stat.f_ffree == 0
        level = (CRITICAL if pct >= INODES_PERCENT[1] or fs.stat.f_ffree == 0 else WARNING) if exhausted else OK
        found.append(Finding("inodes", level,
                             f"{'inodes exhausted' if exhausted else 'inodes fine'}: {mount} uses {pct:.0f} % of its "
                             f"inodes, {fs.stat.f_ffree:,} of {fs.stat.f_files:,} free",
                             {"mount": mount, "inodes_used_percent": pct, "inodes_free": fs.stat.f_ffree},
                             culprit=mount if exhausted else None, path=mount))
    if fs.mount.mount_ro or fs.mount.super_ro:
        found.append(Finding("readonly_fs", WARNING, f"{mount} ({fs.mount.fstype}) is mounted read-only: writes "
                             f"there fail with 'Read-only file system'", {"mount": mount}, culprit=mount, path=mount))
    return found
