"""Space held by deleted files that a process still has open: `df` says full, `du` finds nothing,
because the blocks are freed only when the last descriptor closes (a log rotated away under a
daemon that kept writing). Found from the /proc/PID/fd links the kernel marks " (deleted)"; the
space is the file's allocated blocks (st_blocks, so a sparse file counts what it really holds),
read with stat through the descriptor link, never by opening the file.
Thresholds and why: docs/analyzers.md, table `deleted_open`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from appliance.analyzers.base import CRITICAL, OK, WARNING, Analyzer, Finding
from appliance.analyzers.mounts import filesystems
from appliance.analyzers.naming import process_name, shown_path, size
from appliance.analyzers.readings import Readings

MIB = 1 << 20
HELD_WARNING = (100 * MIB, 10.0)  # bytes held, or % of its filesystem's size
HELD_CRITICAL = (1 << 30, 25.0)
_SUFFIX = " (deleted)"
_NOT_FILES = ("/memfd:", "anon_inode:", "/SYSV")  # anonymous memory objects, not files of a filesystem


@dataclass
class Held:
    path: str
    bytes: int
    device: int
    holders: list[tuple[int, str]]  # (pid, name), the first one opened it first as far as we know


def _scan(pids: list[int], names: dict[int, str]) -> dict[tuple[int, int], Held]:
    found: dict[tuple[int, int], Held] = {}
    for pid in pids:
        fd_dir = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue  # gone, or not ours to look at
        for fd in fds:
            link = f"{fd_dir}/{fd}"
            try:
                target = os.readlink(link)
                if not target.endswith(_SUFFIX) or target.startswith(_NOT_FILES):
                    continue
                st = os.stat(link)
            except OSError:
                continue
            if st.st_nlink or not (st.st_mode & 0o170000 == 0o100000):
                continue  # a regular file with no name left anywhere
            key = (st.st_dev, st.st_ino)
            held = found.setdefault(key, Held(target[: -len(_SUFFIX)], st.st_blocks * 512, st.st_dev, []))
            if all(p != pid for p, _ in held.holders):
                held.holders.append((pid, names.get(pid, "?")))
    return found


def _grade(held: int, share: float) -> str:
    if held >= HELD_CRITICAL[0] or share >= HELD_CRITICAL[1]:
        return CRITICAL
    if held >= HELD_WARNING[0] or share >= HELD_WARNING[1]:
        return WARNING
    return OK


def analyze(readings: Readings) -> list[Finding]:
    others = readings.others()
    names = {p["pid"]: process_name(p) for p in others}
    held = sorted(_scan(sorted(names), names).values(), key=lambda h: h.bytes, reverse=True)
    sizes = {os.makedev(*map(int, fs.mount.device.split(":"))): (fs.size, fs.mount.mountpoint) for fs in filesystems(readings)}
    total = sum(h.bytes for h in held)
    values = {"deleted_open_files": len(held), "held_bytes": total}
    findings = []
    for item in held:
        fs_size, mountpoint = sizes.get(item.device, (0, None))
        share = round(100.0 * item.bytes / fs_size, 1) if fs_size else 0.0
        severity = _grade(item.bytes, share)
        if severity == OK:
            continue
        pid, name = item.holders[0]
        path = shown_path(readings, item.path)
        others_text = f" (and {len(item.holders) - 1} more processes)" if len(item.holders) > 1 else ""
        where = f", {share:.0f} % of {shown_path(readings, mountpoint)}" if mountpoint else ""
        findings.append(Finding("deleted_open", severity,
                                f"{size(item.bytes)} held by the deleted file {path}, still open in {name} (pid {pid})"
                                f"{others_text}{where}: the space comes back when it closes the file or restarts",
                                dict(values, bytes=item.bytes, percent_of_filesystem=share,
                                     holders=[{"pid": p, "name": n} for p, n in item.holders[:5]]),
                                culprit=name, pid=pid, path=path))
    if findings:
        return findings
    if not held:
        return [Finding("deleted_open", OK, f"no deleted file is held open: the open files of {len(names)} "
                        f"processes checked", dict(values, processes_checked=len(names)))]
    biggest = held[0]
    return [Finding("deleted_open", OK,
                    f"no space held by deleted files worth noting: {len(held)} deleted file{'s' if len(held) > 1 else ''} "
                    f"still open, {size(total)} in all; the biggest, {size(biggest.bytes)}, in {biggest.holders[0][1]} "
                    f"(pid {biggest.holders[0][0]})", values)]


ANALYZER = Analyzer("deleted_open", ("deleted", "deleted file", "disk", "full", "space", "df", "du", "disappeared"), analyze)
