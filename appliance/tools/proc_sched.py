"""Where and how eagerly one process runs: the CPUs it may use against the machine's (`taskset -p`),
its nice value and scheduling class (`chrt -p`) and its I/O priority (`ionice -p`).

Why: "it only ever uses one core" or "it is slow although the machine is idle" is often an affinity
mask, a nice value or an idle I/O class set by whoever started it, which no CPU percentage shows.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import psutil

_POLICIES = {
    getattr(os, "SCHED_OTHER", 0): "normal (SCHED_OTHER)", getattr(os, "SCHED_FIFO", 1): "real-time FIFO (SCHED_FIFO)",
    getattr(os, "SCHED_RR", 2): "real-time round robin (SCHED_RR)", getattr(os, "SCHED_BATCH", 3): "batch (SCHED_BATCH)",
    getattr(os, "SCHED_IDLE", 5): "idle (SCHED_IDLE: runs only when nothing else wants the CPU)", 6: "deadline (SCHED_DEADLINE)",
}
_RESET_ON_FORK = getattr(os, "SCHED_RESET_ON_FORK", 0x40000000)
_IO_CLASSES = {0: "none", 1: "real-time", 2: "best-effort", 3: "idle"}


def online_cpus() -> list[int]:
    """The machine's online CPUs (/sys/devices/system/cpu/online), or 0..cpu_count-1."""
    try:
        with open("/sys/devices/system/cpu/online", encoding="ascii") as handle:
            return cpu_list(handle.read())
    except (OSError, ValueError):
        return list(range(os.cpu_count() or 1))


def cpu_list(text: str) -> list[int]:
    """ "0-3,6" as [0, 1, 2, 3, 6]."""
    out: list[int] = []
    for part in text.strip().split(","):
        if part:
            low, _, high = part.partition("-")
            out.extend(range(int(low), int(high or low) + 1))
    return out


def ranges(cpus: list[int]) -> str:
    """[0, 1, 2, 5] as "0-2,5" (taskset's list form)."""
    spans: list[str] = []
    for cpu in sorted(cpus):
        if spans and cpu == int(spans[-1].split("-")[-1]) + 1:
            spans[-1] = f"{spans[-1].split('-')[0]}-{cpu}"
        else:
            spans.append(str(cpu))
    return ",".join(spans)


@dataclass(frozen=True)
class Placement:
    """The CPUs a process may run on, the machine's online CPUs, nice, scheduling class and I/O priority."""

    allowed: tuple[int, ...]
    machine: tuple[int, ...]
    nice: int | None
    policy: str | None
    rt_priority: int | None
    io_priority: str | None

    @property
    def restricted(self) -> bool:
        return bool(self.allowed) and len(set(self.allowed) & set(self.machine)) < len(self.machine)


def io_priority(proc: psutil.Process) -> str | None:
    """The I/O class and level (ionice -p); class none follows the nice value, as the kernel does."""
    try:
        klass, value = proc.ionice()
    except (psutil.Error, OSError, AttributeError):
        return None
    name = _IO_CLASSES.get(int(klass), str(klass))
    if name == "none":
        return "best-effort, from the nice value (no class set)"
    return name if name == "idle" else f"{name}, level {value} (0 highest, 7 lowest)"


def placement(proc: psutil.Process) -> Placement:
    pid = proc.pid
    try:
        allowed = tuple(sorted(os.sched_getaffinity(pid)))
    except OSError:
        allowed = ()
    try:
        nice: int | None = os.getpriority(os.PRIO_PROCESS, pid)
    except OSError:
        nice = None
    try:
        raw = os.sched_getscheduler(pid)
        policy: str | None = _POLICIES.get(raw & ~_RESET_ON_FORK, f"policy {raw}")
        rt: int | None = os.sched_getparam(pid).sched_priority
    except OSError:
        policy, rt = None, None
    return Placement(allowed, tuple(online_cpus()), nice, policy, rt, io_priority(proc))
