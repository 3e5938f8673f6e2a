"""What one process runs and in what surroundings: its program file (and whether it was deleted or
replaced since the process started), its working directory, its ancestry to pid 1, the NAMES of its
environment variables, and the namespaces it does not share with the host.

The environment is read only to take the names: /proc/PID/environ is split on NUL, each entry cut
at its first '=', and the value dropped at once; an entry that does not start with a plain variable
name (a process may overwrite that memory) is counted, never shown.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from appliance.tools.open_files import DELETED, shown_name

MAX_ENV_NAMES = 80
UNREADABLE = "unreadable (the kernel refuses it, even to root)"
MAX_ANCESTRY = 64
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


@dataclass(frozen=True)
class Program:
    """The file the process runs: its path, deleted since start, and replaced (another file has its name now)."""

    path: str | None
    deleted: bool = False
    replaced: bool = False


def program(pid: int) -> Program:
    """From the /proc/PID/exe link: a " (deleted)" suffix means the file it runs was deleted after it
    started (an upgrade that renamed a new file over it leaves the same mark); replaced: a file has
    that name again now, looked up in the process's own root (a container's /usr/bin is not ours)."""
    try:
        target = os.readlink(f"/proc/{pid}/exe")
    except FileNotFoundError:
        return Program(None)  # a kernel thread
    except OSError:
        return Program(UNREADABLE)
    deleted = target.endswith(DELETED)
    path = target[: -len(DELETED)] if deleted else target
    replaced = deleted and os.path.lexists(f"/proc/{pid}/root{path}")
    return Program(shown_name(path), deleted, replaced)


def working_directory(pid: int) -> str | None:
    try:
        return shown_name(os.readlink(f"/proc/{pid}/cwd"))
    except OSError:
        return None


@dataclass(frozen=True)
class Environment:
    """The variable names (sorted, at most MAX_ENV_NAMES), how many there are, and entries without a name."""

    names: tuple[str, ...]
    total: int
    unnamed: int


def environment_names(pid: int) -> Environment | None:
    """The names of the process's environment variables; never a value. None when unreadable."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            raw = handle.read(1 << 20)
    except OSError:
        return None
    names: set[str] = set()
    unnamed = 0
    for entry in raw.split(b"\0"):
        if not entry:
            continue
        name, eq, _ = entry.partition(b"=")
        text = name.decode("ascii", "replace")
        if eq and _NAME.fullmatch(text):
            names.add(text)
        else:
            unnamed += 1
    return Environment(tuple(sorted(names)[:MAX_ENV_NAMES]), len(names), unnamed)


def namespaces(pid: int) -> tuple[dict[str, str], str]:
    """The namespaces (kind -> the process's id) that differ from the host's, and whose the host's
    are: pid 1's, or this process's own where pid 1's cannot be read (a sandbox refuses them)."""
    def links(of: int | str) -> dict[str, str]:
        found = {}
        for kind in sorted(os.listdir(f"/proc/{of}/ns")):
            try:
                found[kind] = os.readlink(f"/proc/{of}/ns/{kind}")
            except OSError:
                continue
        return found

    try:
        mine = links(pid)
    except OSError:
        return {}, "unreadable"
    host, whose = {}, "pid 1"
    try:
        host = links(1)
    except OSError:
        host = {}
    if not host:
        host, whose = links("self"), "the appliance's"
    return {kind: link for kind, link in mine.items() if kind in host and host[kind] != link}, whose


def ancestry(pid: int, parent_of: dict[int, int], name_of: dict[int, str]) -> list[dict]:
    """The parents from the process up to pid 1 (pid and name), nearest first."""
    chain: list[dict] = []
    seen = {pid}
    current = parent_of.get(pid, 0)
    while current and current not in seen and len(chain) < MAX_ANCESTRY:
        chain.append({"pid": current, "name": name_of.get(current, "?")})
        seen.add(current)
        current = parent_of.get(current, 0)
    return chain
