"""Why was a write denied? A "permission denied" line in a log the person names, checked against
the denied place's owner and mode and the user of the process that writes that log.

Why: "[Errno 13] Permission denied: '/data/exports/daily-001.csv'" says the kernel refused, not
why. A person runs `ls -ld` on the path (or, for a file not created yet, on the folder it would be
created in, and on every folder above it that must be passed through) and `ps -o user` on the
writer next; so does this, with the same POSIX rule the kernel applies to a process without
special capabilities: root may do anything, the owner gets the owner bits, a member of the
group the group bits, everyone else the other bits. ACLs and capabilities are not read (an
`ls -l` does not show them either); the verdict says which bits it judged by.
Only metadata is read (stat, the /proc fd links, the process's uids): nothing is opened or written.
"""

from __future__ import annotations

import grp
import os
import pwd
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import psutil

from appliance.analyzers.base import OK, WARNING, Finding
from appliance.analyzers.common import candidates, quote, who
from appliance.analyzers.naming import shown_path
from appliance.analyzers.readings import Readings
from appliance.tools.components import may

FAMILY = "permissions"
MAX_PATHS = 2
_DENIED = re.compile(r"permission denied|\beacces\b|errno 13\b|operation not permitted|\beperm\b", re.I)
# What each refusal needs, in owner bits: passing a folder needs search (x), writing a file w,
# creating a file in a folder both.
NEED = {"pass through": 0o1, "write": 0o2, "create files in": 0o3}
_PATH = re.compile(r"(?<![\w.~/])(/[\w.@+\-]+(?:/[\w.@+\-]+)*/?)")


def denied_paths(texts: Iterable[str]) -> list[str]:
    """The absolute paths that lines of `texts` say an access was denied to, in order (the last
    path of each such line: the message names what was denied after what was tried)."""
    paths: list[str] = []
    for text in texts:
        for line in text.splitlines():
            if not _DENIED.search(line):
                continue
            found = [p.rstrip("/") or "/" for p in _PATH.findall(line)]
            if found and found[-1] not in paths:
                paths.append(found[-1])
    return paths[:MAX_PATHS]


@dataclass(frozen=True)
class Writer:
    """A process that has the log open: who was denied, as far as this machine shows."""

    info: dict
    uid: int
    gids: frozenset[int]

    @property
    def user(self) -> str:
        return _user(self.uid)


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _group(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def log_writers(log: str, readings: Readings) -> list[Writer]:
    """The processes (not the appliance's own) with `log` open, from their /proc fd links."""
    real = os.path.realpath(log)
    writers = []
    for info in candidates(readings):
        fd_dir = f"/proc/{info['pid']}/fd"
        try:
            holds = any(os.readlink(f"{fd_dir}/{fd}") == real for fd in os.listdir(fd_dir))
            if not holds:
                continue
            proc = psutil.Process(info["pid"])
            uid = proc.uids().effective
            gids = frozenset(proc.gids()) | frozenset(_supplementary(info["pid"]))
        except (OSError, psutil.Error):
            continue
        writers.append(Writer(info, uid, gids))
    return writers


def _supplementary(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Groups:"):
                    return [int(g) for g in line.split()[1:]]
    except OSError:
        pass
    return []


def allowed(st: os.stat_result, uid: int, gids: frozenset[int], need: int) -> bool:
    """The kernel's rule for a process without capabilities: `need` is a mask of the owner bits
    (0o2 write, 0o1 search/execute), shifted to the class the process falls in."""
    return may(st, uid, gids, need)


_SHIFT = {"owner": 6, "group": 3, "other": 0}


def _may(st: os.stat_result, klass: str, need: int) -> bool:
    """The mode grants `need` (owner-bit mask) to the class: "owner", "group" or "other"."""
    return (st.st_mode >> _SHIFT[klass]) & need == need


def _ls(st: os.stat_result) -> str:
    return f"{stat.filemode(st.st_mode)} {_user(st.st_uid)}:{_group(st.st_gid)}"


def _ancestors(folder: str) -> list[str]:
    """'/a/b/c' -> ['/a', '/a/b', '/a/b/c']: the folders a path's lookup passes through."""
    parts = [p for p in folder.split(os.sep) if p]
    return [os.sep + os.sep.join(parts[:n]) for n in range(1, len(parts) + 1)]


def blocking_place(path: str, uid: int, gids: frozenset[int]) -> tuple[str, os.stat_result, str] | None:
    """Where the write to `path` stops for this user: a folder on the way it may not pass, the
    existing file it may not write, or the folder it may not create the file in; None when the
    write would be allowed now. Returns (place, its stat, what is refused)."""
    path = os.path.normpath(path)
    existing = path if os.path.isdir(path) else os.path.dirname(path)
    while not os.path.isdir(existing):
        existing = os.path.dirname(existing)
    for folder in _ancestors(existing)[:-1] if existing == path else _ancestors(existing):
        st = os.stat(folder)
        if not allowed(st, uid, gids, NEED["pass through"]):
            return folder, st, "pass through"
    if os.path.lexists(path) and not os.path.isdir(path):
        st = os.stat(path)
        return (path, st, "write") if not allowed(st, uid, gids, NEED["write"]) else None
    st = os.stat(existing)
    return (existing, st, "create files in") if not allowed(st, uid, gids, NEED["create files in"]) else None


def _who_may(st: os.stat_result, need: int) -> str:
    if _may(st, "other", need):
        return "everyone may"
    may = [f"its owner {_user(st.st_uid)}"] if _may(st, "owner", need) and st.st_uid != 0 else []
    if _may(st, "group", need):
        may.append(f"the group {_group(st.st_gid)}")
    return f"only {' and '.join(may)} (and root) may" if may else "only root may"


def denied_finding(path: str, writers: list[Writer], line: str, readings: Readings) -> Finding | None:
    """The verdict on one denied path against the log's writer (or, with no writer running,
    against anyone but the place's owner); None for a path in a private place or one that
    cannot be read at all."""
    if readings.policy.is_secret(Path(path)):
        return None
    shown, said = shown_path(readings, path), quote(line, 200)
    try:
        if writers:
            writer = writers[0]
            blocked = blocking_place(path, writer.uid, writer.gids)
            subject = f"{who(writer.info)}, running as {writer.user} (uid {writer.uid}),"
        else:
            blocked = _blocked_for_others(path)
            subject = "a process other than the owner (none has the log open now)"
    except OSError as exc:
        return Finding(FAMILY, OK, f"cannot judge the denied path {shown}: {quote(str(exc), 160)}", {"path": shown})
    if blocked is None:
        return Finding(FAMILY, OK, f"{shown} is writable now by {subject.rstrip(',')}: the denial the log shows "
                       f"(«{said}») no longer holds", {"path": shown}, path=path)
    place, st, refused = blocked
    need = NEED[refused]
    where = shown_path(readings, place)
    values: dict[str, Any] = {"path": shown, "place": where, "mode": stat.filemode(st.st_mode), "owner": _user(st.st_uid),
              "group": _group(st.st_gid), "refused": refused}
    pid = None
    if writers:
        values.update(writer=writers[0].info.get("name"), uid=writers[0].uid, user=writers[0].user)
        pid = writers[0].info["pid"]
    return Finding(FAMILY, WARNING,
                   f"permission denied: {subject} may not {refused} {where} ({_ls(st)}: "
                   f"{_who_may(st, need)} {refused} it); the log: «{said}»",
                   values, culprit=where, pid=pid, path=place)


def _blocked_for_others(path: str) -> tuple[str, os.stat_result, str] | None:
    """With no writer to judge by: what an unprivileged user outside the owner's group meets."""
    nobody = 65534
    return blocking_place(path, nobody, frozenset({nobody}))


def access_findings(log: str, lines: Iterable[str], readings: Readings) -> list[Finding]:
    """For each path the log's error lines say was denied, where the write stops and why (one
    verdict per place: report-1.csv and report-2.csv denied in one folder are one finding)."""
    denied = [line for line in lines if _DENIED.search(line)]
    paths = denied_paths(denied)
    writers = log_writers(log, readings) if paths else []  # one scan of the processes per log
    found: list[Finding] = []
    for path in paths:
        line = next(t for t in denied if path in t)
        finding = denied_finding(path, writers, line, readings)
        if finding is not None and all(f.path != finding.path or f.path is None for f in found):
            found.append(finding)
    return found


__all__ = ["FAMILY", "access_findings", "allowed", "blocking_place", "denied_paths", "log_writers"]
