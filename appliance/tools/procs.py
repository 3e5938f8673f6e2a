"""Shared pieces for the process tools: one sampled reading of every process, the appliance's own
process tree, a process as compact, redacted data, and the one label of the appliance's own processes.

CPU use is measured over an interval (two readings of cpu_times), never psutil's first-call zero.
The label lives here, beside the sampling, so the tools, the analyzers, the engine's snapshot and
the prompt all mark and name the appliance the same way: the model runs inside it, which makes it
one of the busiest processes on the machine, and it must never be blamed.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

import psutil

from appliance.tools import units
from appliance.tools.redaction.cmdline import show_argv

SELF_LABEL = "(appliance itself)"  # after the name of every process of the appliance's own
CMD_LIMIT = 160


def own_tree(self_pids: frozenset[int]) -> set[int]:
    """The appliance's processes and all their descendants, as of now."""
    tree = set(self_pids)
    for pid in self_pids:
        try:
            tree.update(child.pid for child in psutil.Process(pid).children(recursive=True))
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return tree


def command_line(proc_info: dict) -> str:
    """The command line redacted word by word (redaction.cmdline), then clipped; kernel threads show as [name]."""
    return units.clip(show_argv(proc_info.get("cmdline") or [], proc_info.get("name") or "?"), CMD_LIMIT)


def self_name(name: str) -> str:
    """A process name with the appliance's label after it."""
    return f"{name} {SELF_LABEL}"


def label(row: dict, pid: int, own: set[int] | frozenset[int]) -> dict:
    """Mark one of the appliance's own processes (once) so the model never blames it."""
    if pid in own and not row.get("self"):
        row["name"] = self_name(row.get("name") or "?")
        row["self"] = True
    return row


def label_records(data: Any, own: set[int] | frozenset[int]) -> Any:
    """A copy of `data` with every record (a dict with a `pid`) of the appliance's labelled, however
    deep: the engine's safety net for data the tools did not label themselves."""
    if isinstance(data, dict):
        out = {key: label_records(value, own) for key, value in data.items()}
        pid = out.get("pid")
        return label(out, pid, own) if isinstance(pid, int) else out
    if isinstance(data, list):
        return [label_records(value, own) for value in data]
    return data


_ATTRS = ["pid", "name", "username", "cmdline", "create_time", "memory_info", "cpu_times", "status", "num_threads"]


@dataclass
class Sample:
    """Every process seen in both readings, with CPU and I/O rates over the interval."""

    seconds: float
    procs: list[dict]  # psutil info dicts plus cpu_cores, io_read_rate, io_write_rate
    cpu_count: int
    machine_cpu_percent: float


def _read_all(with_io: bool) -> dict[tuple[int, float], dict]:
    attrs = _ATTRS + (["io_counters"] if with_io else [])
    seen: dict[tuple[int, float], dict] = {}
    for proc in psutil.process_iter(attrs, ad_value=None):
        info = proc.info
        seen[(info["pid"], info.get("create_time") or 0.0)] = info
    return seen


def sample(seconds: float, with_io: bool = False) -> Sample:
    """Read all processes twice, `seconds` apart, and compute rates between the readings."""
    cpu_before = psutil.cpu_times()
    first = _read_all(with_io)
    started = time.monotonic()
    time.sleep(seconds)
    second = _read_all(with_io)
    elapsed = max(time.monotonic() - started, 1e-3)
    cpu_after = psutil.cpu_times()
    busy = lambda t: t.user + t.system + getattr(t, "nice", 0) + getattr(t, "irq", 0) + getattr(t, "softirq", 0) + getattr(t, "steal", 0)  # noqa: E731
    total = sum(cpu_after) - sum(cpu_before)
    machine = units.pct(busy(cpu_after) - busy(cpu_before), total) if total > 0 else 0.0
    procs = []
    for key, info in second.items():
        before = first.get(key)
        cores = 0.0
        if before and before.get("cpu_times") and info.get("cpu_times"):
            t0, t1 = before["cpu_times"], info["cpu_times"]
            cores = max(0.0, (t1.user + t1.system) - (t0.user + t0.system)) / elapsed
        info = dict(info, cpu_cores=cores, io_read_rate=None, io_write_rate=None)
        if with_io and before and before.get("io_counters") and info.get("io_counters"):
            info["io_read_rate"] = max(0, info["io_counters"].read_bytes - before["io_counters"].read_bytes) / elapsed
            info["io_write_rate"] = max(0, info["io_counters"].write_bytes - before["io_counters"].write_bytes) / elapsed
        procs.append(info)
    return Sample(elapsed, procs, psutil.cpu_count() or 1, machine)


def io_rate(info: dict) -> float:
    """Bytes read and written per second over a sample's interval (0 where unknown)."""
    return (info.get("io_read_rate") or 0.0) + (info.get("io_write_rate") or 0.0)


def row(info: dict, own: set[int], cpu_count: int, total_mem: int, *, io: bool = False,
        now: float | None = None) -> dict:
    """One process as compact data: what a person would look at in top."""
    mem = info.get("memory_info")
    out = {
        "pid": info["pid"],
        "name": info.get("name") or "?",
        "user": info.get("username"),
        "cpu_percent": units.pct(100.0 * info.get("cpu_cores", 0.0) / cpu_count),
        "cores_busy": round(info.get("cpu_cores", 0.0), 2),
        "memory": units.size(mem.rss) if mem else None,
        "memory_percent": units.pct(mem.rss, total_mem) if mem else None,
        "started": units.ago(info.get("create_time"), now),
        "command": command_line(info),
    }
    if info.get("status") == psutil.STATUS_ZOMBIE:
        out["status"] = "zombie"
    if io:
        read_rate, write_rate = info.get("io_read_rate"), info.get("io_write_rate")
        out["io_read"] = units.rate(read_rate) if read_rate is not None else "unknown (no permission)"
        out["io_write"] = units.rate(write_rate) if write_rate is not None else "unknown (no permission)"
    return label(out, info["pid"], own)


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0
