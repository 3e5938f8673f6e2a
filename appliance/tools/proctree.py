"""Processes by name and the tree around them: how many of a name run and who starts them (`pgrep
-a`, `pstree -p`), or one process's ancestry and children, with the systemd service each runs in.

Why: "how many X are running" and "who keeps starting these X" are counts and parents over the
whole process table, which no listing of the top few processes shows.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Annotated, Iterable

import psutil

from appliance.tools import units
from appliance.tools.base import EMPTY, ERROR, INVALID, fail, ok, result, tool
from appliance.tools.context import ToolContext
from appliance.tools.procs import command_line, label, own_tree
from appliance.tools.schema import Doc, MaxLen, Range

_ATTRS = ["pid", "ppid", "name", "username", "cmdline", "create_time", "num_threads"]
MAX_SHOWN = 15
MAX_PARENTS = 5
MAX_ANCESTRY = 64


def table() -> dict[int, dict]:
    """Every process now, by pid (fields None where the kernel refuses)."""
    return {p.info["pid"]: dict(p.info) for p in psutil.process_iter(_ATTRS, ad_value=None)}


def unit_of(pid: int) -> str | None:
    """The systemd service or scope a process runs in (from /proc/PID/cgroup), or None."""
    try:
        with open(f"/proc/{pid}/cgroup", encoding="utf-8", errors="replace") as cgroup:
            lines = cgroup.read().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2) if line.count(":") >= 2 else ("", "", "")
        if controllers in ("name=systemd", ""):
            for part in reversed(path.split("/")):
                if part.endswith((".service", ".scope")):
                    return part
    return None


def matches(info: dict, pattern: str) -> str | None:
    """How a process matches `pattern` (case-insensitive): "name", "command line" or None."""
    wanted = pattern.lower()
    if wanted in (info.get("name") or "").lower():
        return "name"
    if wanted in " ".join(info.get("cmdline") or []).lower():
        return "command line"
    return None


@dataclass(frozen=True)
class Swarm:
    """The processes of one name and the parent that started most of them."""

    name: str
    pids: tuple[int, ...]
    parent: int | None
    from_parent: int


def by_parent(procs: Iterable[dict]) -> Counter[int]:
    return Counter(p.get("ppid") or 0 for p in procs)


def swarm_of(name: str, procs: list[dict]) -> Swarm:
    parents = by_parent(procs)
    parent, count = parents.most_common(1)[0] if parents else (None, 0)
    return Swarm(name, tuple(p["pid"] for p in procs), parent, count)


def brief(pid: int | None, procs: dict[int, dict], own: set[int]) -> dict | None:
    """A process as a short row: pid, name, user, command (None for no process)."""
    if not pid:
        return None
    info = procs.get(pid)
    if info is None:
        return {"pid": pid, "name": None}
    return label({"pid": pid, "name": info.get("name") or "?", "user": info.get("username"),
                  "command": command_line(info)}, pid, own)


def _rows(infos: list[dict], procs: dict[int, dict], own: set[int], now: float) -> list[dict]:
    rows = []
    for info in infos[:MAX_SHOWN]:
        row = brief(info["pid"], procs, own) or {}
        row.update(parent=info.get("ppid"), started=units.ago(info.get("create_time"), now))
        unit = unit_of(info["pid"])
        if unit:  # the service's main process: the one its parent is outside the service
            row["service"] = unit + (" (main process)" if unit_of(info.get("ppid") or 0) != unit else "")
        rows.append(row)
    return rows


def by_name(pattern: str, procs: dict[int, dict], own: set[int], now: float) -> dict:
    """`pgrep -a` with the parents: the count, the first matches, and who started them."""
    found = [(info, how) for info in procs.values() if (how := matches(info, pattern))]
    infos = sorted((info for info, _ in found), key=lambda i: i.get("create_time") or 0)
    others = [i for i in infos if i["pid"] not in own]
    parents = by_parent(others)
    data: dict = {
        "pattern": pattern, "count": len(others),
        "matched_by": dict(Counter(how for info, how in found if info["pid"] not in own)),
        "threads": sum(i.get("num_threads") or 0 for i in others),
    }
    if len(infos) > len(others):
        data["appliance_itself"] = len(infos) - len(others)
    data["started_by"] = [dict(brief(ppid, procs, own) or {"pid": ppid}, children_matching=n)
                          for ppid, n in parents.most_common(MAX_PARENTS)]
    data["processes"] = _rows(others or infos, procs, own, now)
    if others:
        top = data["started_by"][0]
        data = {"headline": f"{len(others)} processes match {pattern!r}; {top['children_matching']} of them started "
                            f"by pid={top['pid']} name={top.get('name')}", **data}
    return data


def around(pid: int, procs: dict[int, dict], own: set[int], now: float) -> dict:
    """`pstree -s -p PID`: its ancestry up to pid 1 and its children."""
    chain: list[dict | None] = []
    seen = {pid}
    parent = procs[pid].get("ppid")
    while parent and parent not in seen and len(chain) < MAX_ANCESTRY:
        seen.add(parent)
        chain.append(brief(parent, procs, own))
        parent = (procs.get(parent) or {}).get("ppid")
    children = sorted((i for i in procs.values() if i.get("ppid") == pid), key=lambda i: i.get("create_time") or 0)
    names = Counter(i.get("name") or "?" for i in children)
    data = {"process": _rows([procs[pid]], procs, own, now)[0], "ancestry": chain, "children_total": len(children),
            "children_by_name": dict(names.most_common(5)), "children": _rows(children, procs, own, now),
            "descendants_total": _descendants(pid, procs)}
    return data


def _descendants(pid: int, procs: dict[int, dict]) -> int:
    kids: dict[int, list[int]] = {}
    for info in procs.values():
        kids.setdefault(info.get("ppid") or 0, []).append(info["pid"])
    count, stack = 0, list(kids.get(pid, []))
    while stack:
        count += 1
        stack.extend(kids.get(stack.pop(), []))
    return count


@tool(reads="process", ttl=3.0, timeout=10.0, example={"name": "nginx"}, first_for=("process_names",))
def process_tree(
    ctx: ToolContext,
    name: Annotated[str, MaxLen(64), Doc("part of a process name or command line")] = "",
    pid: Annotated[int, Range(0, 4194304), Doc("one process ID (instead of name)")] = 0,
) -> dict:
    """Processes by name (like pgrep -a): count, pids and who starts them; or one pid's parents and children.
    Use for "how many X run", "who keeps starting X"."""
    if not name.strip() and not pid:
        return fail("give a name or a pid", INVALID)
    procs, own, now = table(), own_tree(ctx.self_pids), time.time()
    if pid:
        if pid not in procs:
            return fail(f"no process with PID {pid} (it may have exited)", ERROR)
        if name.strip() and not matches(procs[pid], name.strip()):  # both given: they must agree
            return fail(f"PID {pid} is {procs[pid].get('name') or '?'}, not {name.strip()!r}: give one of them", INVALID)
        return ok(around(pid, procs, own, now))
    data = by_name(name.strip(), procs, own, now)
    if not data["count"]:
        return result(EMPTY, data, f"no process matches {name.strip()!r}")
    return ok(data)


__all__ = ["Swarm", "by_name", "matches", "process_tree", "swarm_of", "table", "unit_of"]
