"""One process profiled whole, as data with its flags: the readings of proc_status, proc_context,
open_files, proc_sched, proc_cgroup and proc_limits put together under plain keys, and the facts an
expert would point at (a stopped process, a deleted program, CPUs withheld, descriptors near
their limit, OOM kills in its group) as `Flag` values.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import psutil

from appliance.tools import units
from appliance.tools.flags import Flag
from appliance.tools.open_files import Descriptors, connections, descriptors, listening_and_connected
from appliance.tools.proc_cgroup import Group, group_of
from appliance.tools.proc_context import UNREADABLE, Program, ancestry, environment_names, namespaces, program, working_directory
from appliance.tools.proc_limits import NEAR, Limit, fd_share, limits, oom
from appliance.tools.proc_sched import Placement, placement, ranges
from appliance.tools.proc_status import Status, meaning, seconds_in_state, status
from appliance.tools.procs import command_line
from appliance.tools.users import pss

DELETED_WARN = 1 << 30  # deleted files held open that add up to this much hold real space


@dataclass(frozen=True)
class Room:
    """How many open files, sockets and environment names one profile lists (the first profile of
    a name gets the most; the result of one tool call stays bounded)."""

    open_files: int = 60
    sockets: int = 20
    env_names: int = 80


FULL, SMALL = Room(), Room(12, 5, 20)


@dataclass(frozen=True)
class Table:
    """The process table at one moment: parent and name of every pid, and the children counts."""

    parent_of: dict[int, int]
    name_of: dict[int, str]

    def children(self, pid: int) -> int:
        return sum(1 for parent in self.parent_of.values() if parent == pid)


def who(pid: int, name: str) -> str:
    return f"pid {pid} ({name})"


def state_flags(pid: int, st: Status, seconds: float | None, table: Table) -> list[Flag]:
    since = f" for about {units.duration(seconds)}" if seconds is not None else ""
    if st.state == "T":
        return [Flag("stopped", "warning", f"{who(pid, st.name)} is stopped by a signal{since}: it does no work "
                                           f"until it gets SIGCONT")]
    if st.state == "t":
        return [Flag("traced", "warning", f"{who(pid, st.name)} is stopped by a tracer (pid {st.tracer}){since}")]
    if st.state == "Z":
        parent = table.name_of.get(st.ppid, "?")
        return [Flag("zombie", "warning", f"{who(pid, st.name)} has exited, but its parent {who(st.ppid, parent)} "
                                          f"has not collected its exit status")]
    return []


def program_flags(pid: int, name: str, exe: Program) -> list[Flag]:
    if not exe.deleted:
        return []
    return [Flag("program_deleted", "warning", f"{who(pid, name)} runs {exe.path}, which was deleted after it started"
                 + (" and replaced by another file (an upgrade it has not been restarted for)" if exe.replaced else ""))]


def placement_flags(pid: int, name: str, where: Placement) -> list[Flag]:
    if not where.restricted:
        return []
    return [Flag("cpus_restricted", "warning", f"{who(pid, name)} may run on {len(where.allowed)} of the machine's "
                                               f"{len(where.machine)} CPUs (CPU {ranges(list(where.allowed))})")]


def descriptor_flags(pid: int, name: str, fds: Descriptors | None, limit: Limit | None) -> list[Flag]:
    flags = []
    share = fd_share(fds.total, limit) if fds is not None else None
    if fds is not None and limit is not None and share is not None and share >= NEAR:
        flags.append(Flag("open_files_near_limit", "critical" if share >= 1 else "warning",
                          f"{who(pid, name)} has {fds.total:,} files open of its limit of "
                          f"{limit.soft:,} ({units.pct(100 * share)} %)"))
    deleted = fds.deleted() if fds is not None else []
    if deleted:
        held = sum(f.size or 0 for f in deleted)
        flags.append(Flag("deleted_files_open", "warning" if held >= DELETED_WARN else "ok",
                          f"{who(pid, name)} holds {len(deleted)} deleted file(s) open, {units.size(held)} in all "
                          f"(the space is freed when it closes them)"))
    return flags


def group_flags(pid: int, name: str, group: Group | None) -> list[Flag]:
    if group is None or not group.oom_kills:
        return []
    return [Flag("cgroup_oom_kills", "warning", f"the memory group of {who(pid, name)} ({group.path}) has had "
                                                f"{group.oom_kills} OOM kill(s): a process there was killed at its "
                                                f"limit of {units.size(group.memory_limit) or 'memory'}")]


def _open_files(fds: Descriptors | None, limit: Limit | None, room: int) -> dict | str:
    if fds is None:
        return "unreadable (the kernel refuses this process's descriptors)"
    out: dict = {"count": fds.total, "listed": [f.as_dict() for f in fds.files[:room]] or "none"}
    if fds.total and not fds.files:
        out["listed"] = "unreadable (the kernel refuses the names of its descriptors, even to root)"
    elif fds.total > room:
        out["more_not_listed"] = fds.total - room
    share = fd_share(fds.total, limit)
    if limit is not None and share is not None:
        out["of_limit"] = f"{fds.total:,} of {limit.soft:,} ({units.pct(100 * share)} %)"
    out["writing_to"] = fds.writing()[:20] or "no file"
    out["reading_from"] = fds.reading()[:20] or "no file"
    return out


def _read_descriptors(proc: psutil.Process) -> Descriptors | None:
    try:
        return descriptors(proc)
    except (PermissionError, FileNotFoundError, ProcessLookupError):
        return None


def profile(proc: psutil.Process, table: Table, cores: float | None, room: Room = FULL) -> tuple[dict, list[Flag]]:
    """Every field of one process (OSError or psutil.NoSuchProcess when it exits meanwhile)."""
    pid = proc.pid
    st = status(pid)
    info = proc.as_dict(["name", "cmdline", "create_time"], ad_value=None)
    name = info.get("name") or st.name
    exe, where, group = program(pid), placement(proc), group_of(pid)
    seconds = seconds_in_state(pid) if st.state != "R" else None
    lim = limits(pid)
    fds = _read_descriptors(proc)
    conns = connections(proc)
    listening, connected = listening_and_connected(conns)
    created = info.get("create_time") or time.time()
    env = environment_names(pid)
    ns, host = namespaces(pid)
    score = oom(pid)
    memory_pss = pss(pid)
    data: dict = {
        "pid": pid, "name": name,
        "program": exe.path or "none (a kernel thread)",
        "program_file": ("deleted since it started" + (" (another file has its name now)" if exe.replaced else "")
                         if exe.deleted else "as it was when the process started")
                        if exe.path and exe.path != UNREADABLE else None,
        "command": command_line(info),
        "effective_user": st.ids.effective_user, "real_user": st.ids.real_user,
        "effective_group": st.ids.effective_group, "real_group": st.ids.real_group,
        "state": f"{st.state}: {meaning(st.state)}",
    }
    if seconds is not None:
        data["in_this_state_for"] = f"about {units.duration(seconds)} (since the scheduler last ran it)"
    data.update({
        "parents": ancestry(pid, table.parent_of, table.name_of), "children": table.children(pid),
        "started": units.when(created), "age": units.duration(time.time() - created),
        "working_directory": working_directory(pid) or "unreadable",
        "open_files": _open_files(fds, lim.get("open_files"), room.open_files),
        "listening_sockets": listening[:room.sockets] or "none",
        "connected_sockets": connected[:room.sockets] or "none",
        "cpus_allowed": ranges(list(where.allowed)) if where.allowed else "unknown",
        "machine_cpus": f"{ranges(list(where.machine))} ({len(where.machine)} online)",
        "nice": where.nice, "scheduling_class": where.policy, "io_priority": where.io_priority or "unknown",
    })
    if where.rt_priority:
        data["realtime_priority"] = where.rt_priority
    data.update({
        "cgroup": group.as_dict() if group else "none",
        "threads": st.threads, "memory_rss": units.size(st.rss) if st.rss is not None else "none",
        "memory_pss": units.size(memory_pss) if memory_pss is not None else "unreadable",
        "cpu_percent_of_one_core": round(100 * cores, 1) if cores is not None else "not measured",
        "limits": {key: limit.text() for key, limit in lim.items()},
        "oom_score": score.score, "oom_score_adj": score.adjust,
        "environment_variable_names": list(env.names[:room.env_names]) if env else "unreadable",
    })
    if env and env.total > room.env_names:
        data["environment_variables_total"] = env.total
    data["namespaces_not_shared"] = ({kind: link for kind, link in ns.items()} or f"none (all shared with {host})"
                                     if host != "unreadable" else "unreadable")
    flags = (state_flags(pid, st, seconds, table) + program_flags(pid, name, exe) + placement_flags(pid, name, where)
             + descriptor_flags(pid, name, fds, lim.get("open_files")) + group_flags(pid, name, group))
    return data, flags
