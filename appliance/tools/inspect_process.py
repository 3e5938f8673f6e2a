"""The `inspect_process` tool: everything about one process, or every process of one name (what
`ps -o`, /proc/PID/status, `lsof -p`, `taskset -p`, `chrt -p`, `ionice -p` and `prlimit` show).

Why a tool of its own: "is X stopped?", "which file is it writing to?", "why does it use one core?"
are answered by the process's own attributes, which no listing of the busiest processes shows. A
name matches every process whose name (comm) or program file's name is exactly it; the first few
are profiled whole, the rest listed briefly, and the result says how many there are.
"""

from __future__ import annotations

import os
import time
from typing import Annotated

import psutil

from appliance.tools import units
from appliance.tools.base import EMPTY, ERROR, PARTIAL, fail, ok, result, tool
from appliance.tools.context import ToolContext
from appliance.tools.flags import Flag, flag_dicts
from appliance.tools.proc_profile import FULL, SMALL, Table, profile
from appliance.tools.procs import command_line, label, own_tree
from appliance.tools.schema import Doc, MaxLen

PROFILED = 3
LISTED = 20
CPU_WINDOW = 0.3  # seconds; one window for every profiled process
DEADLINE = 8.0


def _table() -> tuple[Table, dict[int, tuple[str, str]]]:
    """The process table, and each process's program file name and argv[0]'s (for matching by name)."""
    parent_of, name_of, also = {}, {}, {}
    for proc in psutil.process_iter(["pid", "ppid", "name", "exe", "cmdline"], ad_value=None):
        info = proc.info
        parent_of[info["pid"]] = info.get("ppid") or 0
        name_of[info["pid"]] = info.get("name") or "?"
        argv0 = (info.get("cmdline") or [""])[0]
        also[info["pid"]] = (os.path.basename((info.get("exe") or "").removesuffix(" (deleted)")), os.path.basename(argv0))
    return Table(parent_of, name_of), also


def matching(target: str, table: Table, also: dict[int, tuple[str, str]]) -> list[int]:
    """The pids a target names: itself when it is a number, else every process whose name, program
    file or argv[0] is exactly that name."""
    if target.isdigit():
        return [int(target)] if int(target) in table.parent_of else []
    return sorted(pid for pid, name in table.name_of.items() if target == name or target in also.get(pid, ()))


def _cores(pids: list[int]) -> dict[int, float]:
    """The cores each process kept busy over one short window."""
    def times() -> dict[int, float]:
        out = {}
        for pid in pids:
            try:
                t = psutil.Process(pid).cpu_times()
                out[pid] = t.user + t.system
            except psutil.Error:
                continue
        return out

    before, started = times(), time.monotonic()
    time.sleep(CPU_WINDOW)
    after, elapsed = times(), max(time.monotonic() - started, 1e-3)
    return {pid: max(0.0, after[pid] - before[pid]) / elapsed for pid in after if pid in before}


def _brief(pid: int, own: set[int]) -> dict:
    try:
        info = psutil.Process(pid).as_dict(["name", "username", "status", "cmdline", "create_time"], ad_value=None)
    except psutil.Error:
        return {"pid": pid, "name": "?", "note": "exited while it was being read"}
    row = {"pid": pid, "name": info.get("name") or "?", "user": info.get("username"), "state": info.get("status"),
           "started": units.ago(info.get("create_time")), "command": command_line(info)}
    return label(row, pid, own)


def _headline(target: str, profiles: list[dict], total: int, flags: list[Flag]) -> str:
    first = profiles[0]
    gist = (f"pid {first['pid']} ({first['name']}) is {first['state'].split(': ', 1)[1].split(' (')[0]}, runs as "
            f"{first['effective_user']}, started {first['age']} ago")
    lead = gist if total == 1 else f"{total} processes match {target}; the first: {gist}"
    worst = [f for f in flags if f.severity != "ok" and f.kind not in ("stopped", "traced")]  # the gist says those
    return lead + (f"; {worst[0].says}" if worst else "")


@tool(reads="process", ttl=3.0, timeout=12.0, example={"target": "nginx"})
def inspect_process(
    ctx: ToolContext,
    target: Annotated[str, MaxLen(64), Doc("a pid, or a process name (every process of that name)")],
) -> dict:
    """One process whole: state, users, program, parents, open files and their modes, sockets, CPUs allowed,
    priorities, cgroup limits, resource limits, memory, environment names. Use when a question names a process."""
    wanted = target.strip()
    if not wanted:
        return fail("no pid or process name given", ERROR)
    table, also = _table()
    own = own_tree(ctx.self_pids)
    pids = matching(wanted, table, also)
    pids.sort(key=lambda pid: (pid in own, pid))
    if not pids:
        what = f"no process has pid {wanted}" if wanted.isdigit() else f"no running process is named {wanted}"
        return result(EMPTY, {"target": wanted, "processes_matched": 0, "headline": what}, what)
    stop = time.monotonic() + DEADLINE
    cores = _cores(pids[:PROFILED])
    profiles: list[dict] = []
    flags: list[Flag] = []
    for pid in pids[:PROFILED]:
        if time.monotonic() > stop:
            break
        try:
            data, found = profile(psutil.Process(pid), table, cores.get(pid), SMALL if profiles else FULL)
        except (psutil.NoSuchProcess, ProcessLookupError, FileNotFoundError):
            continue
        data["flags"] = flag_dicts(found)
        profiles.append(label(data, pid, own))
        flags += found
    if not profiles:
        return fail(f"every process matching {wanted} exited while it was being read", ERROR)
    out: dict = {"target": wanted, "processes_matched": len(pids),
                 "headline": _headline(wanted, profiles, len(pids), flags), "flags": flag_dicts(flags)}
    out["profiles"] = profiles
    rest = pids[len(profiles):]
    if rest:
        out["others"] = [_brief(pid, own) for pid in rest[:LISTED]]
        if len(rest) > LISTED:
            out["others_not_listed"] = len(rest) - LISTED
    if time.monotonic() > stop:
        return result(PARTIAL, out, f"stopped after {DEADLINE:g} s; {len(rest)} matching processes not profiled")
    return ok(out)
