"""Filesystems and disks: how full each one is, and how busy."""

from __future__ import annotations

import os
import time
from typing import Annotated

import psutil

from appliance.tools import units
from appliance.tools.base import EMPTY, ok, result, tool
from appliance.tools.context import ToolContext
from appliance.tools.procs import io_rate, own_tree, sample
from appliance.tools.schema import Doc, Range

# Kernel and virtual filesystems: never storage a person can fill or free.
_VIRTUAL = {
    "proc", "sysfs", "devpts", "mqueue", "securityfs", "pstore", "bpf", "configfs", "fusectl", "hugetlbfs",
    "binfmt_misc", "rpc_pipefs", "nfsd", "selinuxfs", "cgroup", "cgroup2", "debugfs", "tracefs", "autofs",
    "nsfs", "efivarfs", "squashfs", "fuse.gvfsd-fuse", "fuse.portal", "fuse.lxcfs", "fuse.snapfuse", "devtmpfs",
}
# Memory-backed filesystems: shown only when nearly full (a full /tmp or /dev/shm is a real problem).
_IN_MEMORY = {"tmpfs", "ramfs"}
NEARLY_FULL = 80.0


def _filesystems() -> list[tuple]:
    """(partition, usage, statvfs) of every filesystem worth showing, one per device."""
    found = []
    seen: set[tuple[str, str]] = set()
    for part in sorted(psutil.disk_partitions(all=True), key=lambda p: len(p.mountpoint)):
        if part.fstype in _VIRTUAL or part.mountpoint.startswith(("/proc/", "/sys/", "/snap/")):
            continue
        if part.fstype == "overlay" and part.mountpoint != "/":
            continue  # other containers' root filesystems
        key = (part.device, part.mountpoint if part.fstype in _IN_MEMORY else "")
        if key in seen:
            continue  # a bind mount of a filesystem already listed
        try:
            usage = psutil.disk_usage(part.mountpoint)
            stv = os.statvfs(part.mountpoint)
        except OSError:
            continue
        if usage.total == 0 or (part.fstype in _IN_MEMORY and usage.percent < NEARLY_FULL):
            continue
        seen.add(key)
        found.append((part, usage, stv))
    return found


@tool(reads="filesystems", ttl=30.0, timeout=10.0, first_for=("filesystem_full", "inodes", "readonly_fs"))
def disk_usage(ctx: ToolContext) -> dict:
    """Every real filesystem: device, type, size, used %, free space and inode use %, fullest first.
    Use for "disk full" or "no space left"; then dir_sizes on the full mount to find what fills it."""
    rows = []
    for part, usage, stv in _filesystems():
        inodes = units.pct(stv.f_files - stv.f_ffree, stv.f_files) if stv.f_files else None
        rows.append({
            "mount": part.mountpoint, "device": part.device, "type": part.fstype,
            "size": units.size(usage.total), "used": units.size(usage.used), "free": units.size(usage.free),
            "used_percent": units.pct(usage.percent), "inodes_used_percent": inodes,
            "read_only": "ro" in part.opts.split(","),
        })
    rows.sort(key=lambda r: r["used_percent"], reverse=True)
    if not rows:
        return result(EMPTY, {"filesystems": []}, "no real (disk-backed) filesystems are mounted")
    fullest = rows[0]
    return ok({"headline": f"fullest: {fullest.get('mount')} {fullest['used_percent']}% used, {fullest['free']} free",
               "filesystems": rows, "note": f"memory-backed filesystems (tmpfs) are listed only when over {NEARLY_FULL:.0f}% full"})


@tool(reads="disks", ttl=3.0, timeout=12.0, example={"sample_seconds": 1.0}, first_for=("disk_io",))
def disk_io(
    ctx: ToolContext,
    sample_seconds: Annotated[float, Range(0.2, 5.0), Doc("sampling interval")] = 1.0,
) -> dict:
    """Per-disk read/write rates, operations per second and busy % over a short interval, busiest first,
    and the processes reading and writing the most over it. Use when the disk is busy or the machine
    feels slow but CPU is idle (I/O wait). Not for which files are large."""
    try:
        before = psutil.disk_io_counters(perdisk=True) or {}
    except (OSError, RuntimeError):
        before = {}
    if not before:
        return result(EMPTY, {"disks": []}, "this machine exposes no disk I/O counters")
    cpu_before = psutil.cpu_times()
    started = time.monotonic()
    taken = sample(sample_seconds, with_io=True)  # sleeps the interval between its two readings
    after = psutil.disk_io_counters(perdisk=True) or {}
    elapsed = max(time.monotonic() - started, 1e-3)
    rows = []
    for name, now in after.items():
        was = before.get(name)
        if was is None or name.startswith(("loop", "ram", "zram")):
            continue
        read_b = max(0, now.read_bytes - was.read_bytes) / elapsed
        write_b = max(0, now.write_bytes - was.write_bytes) / elapsed
        ops = max(0, now.read_count + now.write_count - was.read_count - was.write_count) / elapsed
        busy_ms = getattr(now, "busy_time", 0) - getattr(was, "busy_time", 0)
        rows.append({
            "disk": name, "read": units.rate(read_b), "write": units.rate(write_b),
            "ops_per_second": round(ops, 1), "busy_percent": units.pct(busy_ms / 10.0 / elapsed),
            "_key": read_b + write_b,
        })
    rows.sort(key=lambda r: (r["busy_percent"], r["_key"]), reverse=True)
    for r in rows:
        del r["_key"]
    cpu_after = psutil.cpu_times()
    spent = sum(cpu_after) - sum(cpu_before)
    iowait = getattr(cpu_after, "iowait", 0.0) - getattr(cpu_before, "iowait", 0.0)
    data = {"sample_seconds": round(elapsed, 2), "disks": rows,
            "cpu_iowait_percent": units.pct(iowait, spent) if spent > 0 else 0.0}
    movers = _top_io(taken.procs, own_tree(ctx.self_pids))
    if movers:
        first = movers[0]
        data = {"headline": f"top reader/writer: {first['name']} (pid {first['pid']}) read {first['read']} "
                            f"write {first['write']}", **data, "processes": movers}
    return ok(data)


TOP_IO = 3


def _top_io(procs: list[dict], own: set[int]) -> list[dict]:
    """The processes that read or wrote the most over the interval (iotop's view: which process
    makes the disk busy is the question a disk's rates raise), the appliance's own left out."""
    busy = sorted((p for p in procs if io_rate(p) > 0 and p["pid"] not in own), key=io_rate, reverse=True)
    return [{"pid": p["pid"], "name": p.get("name") or "?", "read": units.rate(p.get("io_read_rate") or 0.0),
             "write": units.rate(p.get("io_write_rate") or 0.0)} for p in busy[:TOP_IO]]
