"""A path looked up component by component, as the kernel does (`namei -l`): each folder, each
link and where it points, the first component that is missing, and who may pass each folder.

Why: "No such file or directory" on a path that `ls` shows is nearly always a link whose target is
gone, and "Permission denied" a folder on the way that its user may not search; neither shows in the
path's own listing. Only metadata is read (lstat, readlink), nothing is opened.
"""

from __future__ import annotations

import grp
import os
import pwd
import stat
from collections import deque
from dataclasses import dataclass


MAX_LINKS = 40  # the kernel's own limit on links followed in one lookup (ELOOP)
MAX_STEPS = 256
SEARCH, WRITE, READ = 0o1, 0o2, 0o4  # the owner bits a need is written in
_SHIFT = {"owner": 6, "group": 3, "other": 0}


@dataclass(frozen=True)
class Step:
    """One component met by the lookup. kind: dir, file, link, missing, other; target: a link's
    target as written; via: the link whose target this component is part of ("" if none)."""

    path: str
    kind: str
    st: os.stat_result | None = None
    target: str = ""
    via: str = ""


@dataclass(frozen=True)
class Lookup:
    """The steps of one lookup and, when it stops short, why (a sentence) and where."""

    path: str
    steps: tuple[Step, ...]
    problem: str = ""
    stopped_at: str = ""  # the last folder the lookup reached (where to look instead)

    @property
    def exists(self) -> bool:
        return not self.problem


def user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def ls_mode(st: os.stat_result) -> str:
    """`drwx------ root:root`: what `ls -ld` shows of a component."""
    return f"{stat.filemode(st.st_mode)} {user_name(st.st_uid)}:{group_name(st.st_gid)}"


def may(st: os.stat_result, uid: int, gids: frozenset[int], need: int) -> bool:
    """The kernel's rule for a process without capabilities: root may, the owner gets the owner bits,
    a member of the group the group bits, everyone else the other bits. `need` is an owner-bit mask
    (SEARCH, WRITE, READ). ACLs are not read (an `ls -l` does not show them either)."""
    if uid == 0:
        return True
    klass = "owner" if uid == st.st_uid else "group" if st.st_gid in gids else "other"
    return (st.st_mode >> _SHIFT[klass]) & need == need


def look_up(path: str) -> Lookup:
    """Look `path` (absolute) up as the kernel would, following every link, and stop at the first
    component that is missing, not a folder, or unreadable."""
    steps: list[Step] = []
    pending: deque[tuple[str, str]] = deque((part, "") for part in path.split("/") if part)
    current, links = "/", 0
    steps.append(Step("/", "dir", os.lstat("/")))
    while pending and len(steps) < MAX_STEPS:
        part, via = pending.popleft()
        if part == ".":
            continue
        if part == "..":
            current = os.path.dirname(current) or "/"
            continue
        candidate = os.path.join(current, part)
        try:
            st = os.lstat(candidate)
        except FileNotFoundError:
            steps.append(Step(candidate, "missing", via=via))
            return Lookup(path, tuple(steps), _missing_reason(candidate, via, steps), current)
        except PermissionError:
            return Lookup(path, tuple(steps), f"{current} cannot be searched (permission denied)", current)
        except NotADirectoryError:
            return Lookup(path, tuple(steps), f"{current} is not a folder", os.path.dirname(current))
        if stat.S_ISLNK(st.st_mode):
            target = os.readlink(candidate)
            steps.append(Step(candidate, "link", st, target, via))
            links += 1
            if links > MAX_LINKS:
                return Lookup(path, tuple(steps), f"more than {MAX_LINKS} links in a row (a link loop)", current)
            if target.startswith("/"):
                current = "/"
            pending.extendleft(reversed([(p, via or candidate) for p in target.split("/") if p]))
            continue
        kind = "dir" if stat.S_ISDIR(st.st_mode) else "file" if stat.S_ISREG(st.st_mode) else "other"
        steps.append(Step(candidate, kind, st, via=via))
        if kind != "dir" and pending:
            return Lookup(path, tuple(steps), f"{candidate} is a {kind_word(kind)}, not a folder, so nothing "
                          f"can be below it", current)
        current = candidate
    return Lookup(path, tuple(steps), "", current)


def kind_word(kind: str) -> str:
    return {"file": "file", "dir": "folder", "link": "link", "other": "special file"}.get(kind, kind)


def _missing_reason(candidate: str, via: str, steps: list[Step]) -> str:
    """Why the component is missing: a link's target that is gone names the link first."""
    folder, name = os.path.split(candidate)
    if via:
        link = next(s for s in steps if s.path == via)
        if os.path.normpath(os.path.join(os.path.dirname(via), link.target)) == candidate:
            return f"{via} is a link to {link.target}, which does not exist ({folder} has no entry {name}): a dangling link"
        return f"{via} is a link to {link.target}; on its way {folder} has no entry {name}: a dangling link"
    return f"{folder} has no entry {name}"


def blocked_for(found: Lookup, uid: int, gids: frozenset[int]) -> tuple[Step, str] | None:
    """The first component this user may not pass (search a folder) or, last, may not read; None."""
    for step in found.steps:
        if step.st is None:
            continue
        if step.kind == "dir" and not may(step.st, uid, gids, SEARCH):
            return step, "pass through"
    last = found.steps[-1] if found.steps else None
    if found.exists and last is not None and last.st is not None and last.kind != "dir" \
            and not may(last.st, uid, gids, READ):
        return last, "read"
    return None


def account(user: str) -> tuple[int, frozenset[int]] | None:
    """(uid, every group id) of a user name or number; None when there is no such user."""
    try:
        entry = pwd.getpwnam(user) if not user.isdigit() else pwd.getpwuid(int(user))
    except KeyError:
        return None
    return entry.pw_uid, frozenset(os.getgrouplist(entry.pw_name, entry.pw_gid))
