"""Which processes hold a path or a mount: open files, working directory, root, program or mapped
files at or below it (what `fuser -vm` and `lsof +D` show).

Why: "umount: target is busy", "the drive won't eject" and "which program has this file open" are
answered by the processes whose links under /proc point into the place, and by nothing else. Only
the links are read (readlink of /proc/PID/cwd, root, exe, fd/N and the path column of maps):
nothing is opened below the place, nothing is changed.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Annotated

import psutil

from appliance.tools.base import EMPTY, OK, PARTIAL, result, tool
from appliance.tools.context import ToolContext
from appliance.tools.procs import command_line, is_root, label, own_tree
from appliance.tools.schema import Doc, MaxLen

MAX_FDS = 20_000  # descriptors read per process at most
MAX_SHOWN = 15
EXAMPLES = 3
DEADLINE = 5.0
_DELETED = " (deleted)"
# How a process holds a place, in the words fuser uses (c, r, e, f, m) spelled out.
WAYS = ("working directory", "root directory", "program", "open file", "mapped file")


@dataclass
class Holder:
    """One process that holds the place: how (a subset of WAYS) and up to EXAMPLES of the paths."""

    pid: int
    ways: set[str] = field(default_factory=set)
    paths: list[str] = field(default_factory=list)
    open_files: list[str] = field(default_factory=list)

    def add(self, way: str, path: str) -> None:
        self.ways.add(way)
        if way == "open file" and len(self.open_files) < EXAMPLES and path not in self.open_files:
            self.open_files.append(path)
        if path not in self.paths and len(self.paths) < EXAMPLES:
            self.paths.append(path)


@dataclass
class Holding:
    """Every holder of a place, and how many processes could not be read (not running as root)."""

    target: str
    holders: list[Holder]
    unreadable: int = 0
    stopped: bool = False


def _under(link: str, target: str) -> bool:
    link = link[: -len(_DELETED)] if link.endswith(_DELETED) else link
    return link == target or link.startswith(target.rstrip("/") + "/")


def _links(pid: int) -> list[tuple[str, str]]:
    """(way, path) of every link of one process; raises PermissionError/FileNotFoundError."""
    base = f"/proc/{pid}"
    found = []
    for way, name in (("working directory", "cwd"), ("root directory", "root"), ("program", "exe")):
        try:
            found.append((way, os.readlink(f"{base}/{name}")))
        except FileNotFoundError:
            continue  # a kernel thread has no program
    for fd in os.listdir(f"{base}/fd")[:MAX_FDS]:
        try:
            found.append(("open file", os.readlink(f"{base}/fd/{fd}")))
        except OSError:
            continue
    with open(f"{base}/maps", encoding="utf-8", errors="replace") as maps:
        for line in maps:
            parts = line.split(maxsplit=5)
            if len(parts) == 6 and parts[5].startswith("/"):
                found.append(("mapped file", parts[5].rstrip("\n")))
    return found


def holding(target: str, deadline: float = DEADLINE) -> Holding:
    """Every process with a link at or below `target` (a real, absolute path)."""
    out = Holding(target, [])
    stop = time.monotonic() + deadline
    for pid in sorted(int(n) for n in os.listdir("/proc") if n.isdigit()):
        if time.monotonic() > stop:
            out.stopped = True
            break
        try:
            links = _links(pid)
        except PermissionError:
            out.unreadable += 1
            continue
        except (FileNotFoundError, ProcessLookupError):
            continue
        holder = Holder(pid)
        for way, path in links:
            if way == "root directory" and path == "/" and target != "/":
                continue
            if _under(path, target):
                holder.add(way, path)
        if holder.ways:
            out.holders.append(holder)
    return out


def describe(holder: Holder, own: set[int] | frozenset[int]) -> dict:
    """A holder as data: pid, name, user, how it holds the place, example paths, its command."""
    try:
        info = psutil.Process(holder.pid).as_dict(["name", "username", "cmdline"], ad_value=None)
    except psutil.Error:
        info = {"name": None, "username": None, "cmdline": None}
    row = {"pid": holder.pid, "name": info.get("name") or "?", "user": info.get("username"),
           "holds_as": [w for w in WAYS if w in holder.ways], "paths": holder.paths, "command": command_line(info)}
    return label(row, holder.pid, own)


def mounts_below(target: str) -> list[str]:
    """Mount points strictly below `target` (a mount with mounts inside it is busy too)."""
    below = []
    with open("/proc/self/mounts", encoding="utf-8", errors="replace") as mounts:
        for line in mounts:
            point = line.split()[1].replace("\\040", " ")
            if point != target and _under(point, target):
                below.append(point)
    return below


@tool(reads="process", ttl=3.0, timeout=15.0, example={"path": "/mnt/usb"})
def path_holders(
    ctx: ToolContext,
    path: Annotated[str, MaxLen(512), Doc("file, folder or mount point")],
) -> dict:
    """Processes holding a path or mount (open files, working directory, mapped files; like fuser -vm).
    Use for "target is busy", "which program has X open", "can't eject X"."""
    real = str(ctx.policy.resolve(path, "list"))
    if not os.path.lexists(real):
        raise FileNotFoundError(f"{path} does not exist")
    found = holding(real)
    own = own_tree(ctx.self_pids)
    rows = [describe(h, own) for h in found.holders]
    rows.sort(key=lambda r: (bool(r.get("self")), r["pid"]))
    others = [r for r in rows if not r.get("self")]
    mount = os.path.ismount(real)
    data: dict = {"path": real, "is_mount_point": mount, "holders_total": len(others)}
    if others:
        first = others[0]
        data["headline"] = (f"{len(others)} process(es) hold {real}; first: pid={first['pid']} name={first['name']} "
                            f"as {', '.join(first['holds_as'])}")
    else:
        data["headline"] = f"no process holds {real}" + (" (besides the appliance itself)" if rows else "")
    data["holders"] = rows[:MAX_SHOWN]
    if mount:
        below = mounts_below(real)
        if below:
            data["mounts_below"] = below[:10]
    if found.unreadable and is_root():
        data["note"] = f"{found.unreadable} processes could not be read even as root (the kernel refuses)"
    elif found.unreadable or found.stopped:
        data["note"] = (f"{found.unreadable} processes could not be read (not running as root)" if found.unreadable
                        else f"stopped after {DEADLINE:g} s; later processes not checked")
        return result(PARTIAL, data, data["note"])
    return result(OK if others else EMPTY, data, None if others else data["headline"])


__all__ = ["Holder", "Holding", "describe", "holding", "mounts_below", "path_holders"]
