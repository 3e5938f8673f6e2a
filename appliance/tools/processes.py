"""Which processes use the machine, and one process in detail."""

from __future__ import annotations

import time
from typing import Annotated, Literal

import psutil

from appliance.tools import units
from appliance.tools.base import ERROR, OK, PARTIAL, fail, ok, result, tool
from appliance.tools.context import ToolContext
from appliance.tools.procs import command_line, io_rate, is_root, label, own_tree, row, sample
from appliance.tools.schema import Doc, Range

@tool(reads="process", ttl=3.0, timeout=15.0, example={"sort_by": "cpu", "n": 5},
      first_for=("cpu", "memory", "zombies", "threads", "restarts"), also_for=("disk_io",))
def top_processes(
    ctx: ToolContext,
    sort_by: Annotated[Literal["cpu", "memory", "io"], Doc("what to rank by")] = "cpu",
    n: Annotated[int, Range(1, 25), Doc("how many processes")] = 8,
    sample_seconds: Annotated[float, Range(0.2, 5.0), Doc("CPU/IO sampling interval")] = 1.0,
) -> dict:
    """The busiest processes ranked by CPU (sampled over an interval), memory or disk I/O, with user, command and start time.
    Use for "what is slowing the machine / making the fan loud". Not for one known PID (use process_details)."""
    taken = sample(sample_seconds, with_io=(sort_by == "io"))
    own = own_tree(ctx.self_pids)
    keys = {
        "cpu": lambda p: p.get("cpu_cores", 0.0),
        "memory": lambda p: p["memory_info"].rss if p.get("memory_info") else 0,
        "io": io_rate,
    }
    # The appliance's own processes do not count towards n: asked for the top one, a person wants
    # the top one that is not the assistant (which is often the biggest user, with its model).
    ordered = sorted(taken.procs, key=keys[sort_by], reverse=True)
    ranked, others = [], 0
    for proc in ordered:
        if others >= n:
            break
        ranked.append(proc)
        others += proc["pid"] not in own
    now = time.time()
    total_mem = psutil.virtual_memory().total
    rows = [row(p, own, taken.cpu_count, total_mem, io=(sort_by == "io"), now=now) for p in ranked]
    zombies = sum(1 for p in taken.procs if p.get("status") == psutil.STATUS_ZOMBIE)
    data = {
        "headline": _headline(sort_by, rows),
        "sorted_by": sort_by,
        "sample_seconds": round(taken.seconds, 2),
        "machine_cpu_percent": taken.machine_cpu_percent,
        "cpu_count": taken.cpu_count,
        "processes_total": len(taken.procs),
        "zombies": zombies,
        "top": rows,
        "units": "cpu_percent: share of all cores; cores_busy 1.0 = one full core",
    }
    if sort_by == "io" and not is_root():
        data["note"] = "not running as root: other users' processes show unknown I/O"
    return ok(data)

def _headline(sort_by: str, rows: list[dict]) -> str:
    """The answer to "which process uses the most …" in one line, first, so a small model reads it
    before the list (small models answer with the last line they read). The appliance is skipped."""
    first = next((r for r in rows if not r.get("self")), None)
    if first is None:
        return f"top {sort_by}: only the appliance itself"
    amount = {
        "cpu": f"{first['cpu_percent']}% cpu",
        "memory": f"{first['memory']} ({first['memory_percent']}%)",
        "io": f"read {first.get('io_read')} write {first.get('io_write')}",
    }[sort_by]
    return f"top {sort_by}: pid={first['pid']} name={first['name']} {amount}"


@tool(reads="process", ttl=3.0, timeout=10.0, example={"pid": 1},
      first_for=("deleted_open", "open_files"), also_for=("zombies",))
def process_details(
    ctx: ToolContext,
    pid: Annotated[int, Range(1, 4194304), Doc("process ID")],
) -> dict:
    """One process in detail: status, parent and children, command, cwd, threads, open files and connections, CPU, memory, I/O.
    Use after top_processes names a suspect PID."""
    try:
        proc = psutil.Process(pid)
        info, cores = _read(proc)
    except psutil.NoSuchProcess:
        return fail(f"no process with PID {pid} (it may have exited)", ERROR)
    except psutil.AccessDenied:
        return fail(f"not allowed to inspect PID {pid} (owned by another user; run as root to see it)", ERROR)
    own = own_tree(ctx.self_pids)
    data = _summary(pid, info, cores)
    unreadable = _add_guarded_fields(data, info)
    data["parent"] = _brief(info["ppid"])
    try:
        _add_children_and_handles(data, proc)
    except psutil.AccessDenied:
        unreadable.append("open files and connections")
    except psutil.NoSuchProcess:
        return fail(f"PID {pid} exited while it was being read", ERROR)
    label(data, pid, own)
    if unreadable:
        data["unreadable"] = unreadable
        return result(PARTIAL, data, "some fields need more privileges: " + ", ".join(unreadable))
    return result(OK, data)


def _read(proc: psutil.Process) -> tuple[dict, float]:
    """(the fields, None where denied; the cores it kept busy over 0.3 s). One `oneshot()` reads
    /proc once for all fields; the CPU is sampled, since a lifetime average hides a process that
    only just started spinning."""
    with proc.oneshot():
        info = proc.as_dict(
            ["pid", "name", "username", "status", "ppid", "cmdline", "create_time", "num_threads",
             "cpu_times", "memory_info", "memory_percent", "nice", "cwd", "exe", "num_fds", "io_counters"],
            ad_value=None,
        )
    before = proc.cpu_times()
    time.sleep(0.3)
    after = proc.cpu_times()
    return info, max(0.0, (after.user + after.system) - (before.user + before.system)) / 0.3


def _summary(pid: int, info: dict, cores: float) -> dict:
    """The fields every readable process has, in the order the tool shows them."""
    return {
        "pid": pid,
        "name": info["name"],
        "status": info["status"],
        "user": info["username"],
        "command": command_line(info),
        "started": units.when(info["create_time"]),
        "running_for": units.duration(time.time() - (info["create_time"] or time.time())),
        "threads": info["num_threads"],
        "nice": info["nice"],
        "cpu_percent_of_one_core": round(100 * cores, 1),
        "cpu_time": f"user {info['cpu_times'].user:.1f} s, system {info['cpu_times'].system:.1f} s" if info["cpu_times"] else None,
        "memory": units.size(info["memory_info"].rss) if info["memory_info"] else None,
        "virtual_memory": units.size(info["memory_info"].vms) if info["memory_info"] else None,
        "memory_percent": units.pct(info["memory_percent"]) if info["memory_percent"] is not None else None,
    }


def _add_guarded_fields(data: dict, info: dict) -> list[str]:
    """Add the fields another user's process hides (exe, cwd, fds, I/O); return those it hid."""
    unreadable: list[str] = []
    for key in ("exe", "cwd", "num_fds"):
        if info[key] is None:
            unreadable.append(key)
        else:
            data[key] = info[key]
    if info["io_counters"] is not None:
        data["io_total"] = {"read": units.size(info["io_counters"].read_bytes), "written": units.size(info["io_counters"].write_bytes)}
    else:
        unreadable.append("io")
    return unreadable


def _add_children_and_handles(data: dict, proc: psutil.Process) -> None:
    """Add the first ten children and the counts of open files and connections (psutil raises
    AccessDenied or NoSuchProcess midway; what was added before stays)."""
    children = proc.children()
    data["children"] = [_brief(c.pid) for c in children[:10]]
    if len(children) > 10:
        data["children_more"] = len(children) - 10
    data["open_files"] = len(proc.open_files())
    data["connections"] = len(proc.net_connections() if hasattr(proc, "net_connections") else proc.connections())


def _brief(pid: int | None) -> dict | None:
    if not pid:
        return None
    try:
        return {"pid": pid, "name": psutil.Process(pid).name()}
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return {"pid": pid, "name": None}
