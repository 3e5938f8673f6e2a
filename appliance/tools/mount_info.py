"""The mount a path lives on, from /proc/self/mountinfo (what `findmnt -T PATH` shows), and the
locks held on a file, from /proc/locks (what `lslocks` shows).

Why: "Permission denied" running a program with every x bit set is a noexec mount; "Read-only file
system" is the mount's ro, not the file's mode; a program that waits forever on a file waits on
another process's lock. Both tables are read as text; nothing is opened below the path.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

# Mount options that change what may be done on the mount, in plain words.
RESTRICTIONS = {"ro": "read-only", "noexec": "programs may not be run from it", "nosuid": "setuid and setgid bits are ignored",
                "nodev": "device files do not work"}


@dataclass(frozen=True)
class Mount:
    point: str
    fstype: str
    source: str
    options: tuple[str, ...]

    @property
    def restrictions(self) -> list[str]:
        return [f"{opt} ({RESTRICTIONS[opt]})" for opt in self.options if opt in RESTRICTIONS]


def _unescape(text: str) -> str:
    return text.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")


def mount_of(real: str) -> Mount | None:
    """The mount whose point is the longest prefix of `real` (a resolved path); the last one
    listed wins, as a later mount over the same point hides the earlier one."""
    best: Mount | None = None
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as table:
            lines = table.read().splitlines()
    except OSError:
        return None
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 6 or len(tail) < 2:
            continue
        point = _unescape(fields[4])
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and (best is None or len(point) >= len(best.point)):
            best = Mount(point, tail[0], _unescape(tail[1]), tuple(fields[5].split(",")))
    return best


@dataclass(frozen=True)
class Lock:
    """One /proc/locks line for the file: POSIX (fcntl/lockf), FLOCK or OFDLCK; READ or WRITE."""

    kind: str
    mode: str
    access: str
    pid: int
    waiting: bool

    def says(self) -> str:
        what = f"{self.kind} {self.access.lower()} lock ({self.mode.lower()})"
        return f"pid {self.pid} {'waits for' if self.waiting else 'holds'} a {what}"


def locks_on(st: os.stat_result, limit: int = 20) -> list[Lock]:
    """The locks on the file with `st`'s device and inode ("MAJ:MIN:INODE", hex device numbers)."""
    wanted = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    found: list[Lock] = []
    try:
        with open("/proc/locks", encoding="utf-8", errors="replace") as table:
            lines = table.read().splitlines()
    except OSError:
        return found
    for line in lines:
        words = line.split()
        waiting = "->" in words
        words = [w for w in words if w != "->"]
        if len(words) >= 6 and words[5] == wanted and words[4].lstrip("-").isdigit():
            found.append(Lock(words[1], words[2], words[3], int(words[4]), waiting))
            if len(found) >= limit:
                break
    return found
