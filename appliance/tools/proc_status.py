"""One process's identity and state as the kernel keeps them in /proc/PID/status and /proc/PID/sched
(what `ps -o stat,user,ruser,group,rgroup` and `/proc/PID/status` show).

Why a reader of its own: psutil names the state but not for how long, and gives the effective user
only; "it runs as root" and "it is stopped" are answered from the real and effective ids and the
state letter, with the time since the scheduler last ran it (se.exec_start, where the kernel was
built with scheduler statistics).
"""

from __future__ import annotations

import grp
import os
import pwd
from dataclasses import dataclass

# The state letters of /proc/PID/stat and status, in the words of `man 5 proc`.
STATE_MEANINGS = {
    "R": "running (on a CPU or ready to run)",
    "S": "sleeping (waiting for an event)",
    "D": "uninterruptible (waiting for I/O; cannot be killed until it returns)",
    "T": "stopped by a signal (SIGSTOP or SIGTSTP; SIGCONT resumes it)",
    "t": "stopped by a tracer (a debugger holds it)",
    "Z": "zombie (it has exited; its parent has not collected its exit status)",
    "X": "dead (about to disappear)",
    "I": "idle (a kernel thread with nothing to do)",
    "P": "parked (a kernel thread)",
}


@dataclass(frozen=True)
class Ids:
    """Real and effective user and group, as names where the account databases know them."""

    real_user: str
    effective_user: str
    real_group: str
    effective_group: str
    real_uid: int
    effective_uid: int


@dataclass(frozen=True)
class Status:
    """What /proc/PID/status says: name (comm), state letter, parent, ids, threads, RSS in bytes."""

    name: str
    state: str
    ppid: int
    ids: Ids
    threads: int
    rss: int | None
    tracer: int


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


def fields(pid: int, name: str = "status") -> dict[str, str]:
    """A `Key:\tvalue` file of /proc/PID as a dict (raises OSError when the process is gone)."""
    out: dict[str, str] = {}
    with open(f"/proc/{pid}/{name}", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            key, sep, value = line.partition(":")
            if sep:
                out[key.strip()] = value.strip()
    return out


def status(pid: int) -> Status:
    """The status file as a value (OSError when the process is gone)."""
    f = fields(pid)
    uids = [int(x) for x in f.get("Uid", "0 0").split()[:2]]
    gids = [int(x) for x in f.get("Gid", "0 0").split()[:2]]
    ids = Ids(user_name(uids[0]), user_name(uids[1]), group_name(gids[0]), group_name(gids[1]), uids[0], uids[1])
    rss = f.get("VmRSS", "").split()
    return Status(name=f.get("Name", "?"), state=(f.get("State") or "?")[:1], ppid=int(f.get("PPid", "0") or 0),
                  ids=ids, threads=int(f.get("Threads", "1") or 1), rss=int(rss[0]) * 1024 if rss else None,
                  tracer=int(f.get("TracerPid", "0") or 0))


def _last_ran(pid: int | str) -> float | None:
    """se.exec_start of /proc/PID/sched in seconds (the scheduler's clock), or None."""
    try:
        with open(f"/proc/{pid}/sched", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("se.exec_start"):
                    return float(line.split(":", 1)[1]) / 1000.0
    except (OSError, ValueError):
        return None
    return None


def _last_cpu(pid: int) -> int | None:
    """The CPU the process last ran on (field 39 of /proc/PID/stat)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return int(handle.read().rsplit(")", 1)[1].split()[36])
    except (OSError, ValueError, IndexError):
        return None


def seconds_in_state(pid: int) -> float | None:
    """How long since the scheduler last ran the process (so, for a process not running, how long it
    has been in its state), or None where the kernel does not say. The scheduler's clock is per CPU
    (it leaves out time stolen by a hypervisor), so the reading thread moves to the CPU the process
    last ran on for a moment and reads its own last run, which is now, on that CPU's clock."""
    cpu = _last_cpu(pid)
    before = os.sched_getaffinity(0)
    try:
        if cpu is not None and cpu in before:
            os.sched_setaffinity(0, {cpu})
            os.sched_yield()
        now, then = _last_ran("thread-self"), _last_ran(pid)
    except OSError:
        return None
    finally:
        os.sched_setaffinity(0, before)
    if now is None or then is None or then > now:
        return None
    return now - then


def meaning(state: str) -> str:
    return STATE_MEANINGS.get(state, f"state {state}")
