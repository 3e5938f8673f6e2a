"""Pieces the process, network, log and time analyzers share: one table of every process (with
parent, thread and descriptor counts), how a process is named in a verdict, quoting machine text
safely, running one fixed read-only program, and reading a small /proc or /sys file through the
path policy.

Why one table: zombies, open files, threads and restarts all look at every process; reading
/proc once per check keeps `appliance check` within its time and gives them the same picture.
"""

from __future__ import annotations

import os

import psutil

from appliance.analyzers.readings import ReadingUnavailable, Readings
from appliance.tools import units
from appliance.tools.paths import read_capped
from appliance.tools.redact import redact
from appliance.tools.redaction.cmdline import show_argv
from appliance.tools.runner import Ran, find_program, run_capped

_TABLE_ATTRS = ["pid", "ppid", "name", "cmdline", "create_time", "num_threads", "num_fds", "status"]
QUOTE_LIMIT = 220


def proc_table(readings: Readings) -> list[dict]:
    """Every process now: pid, ppid, name, cmdline, create_time, num_threads, num_fds, status
    (None where the kernel refuses)."""
    def read() -> list[dict]:
        return [dict(p.info) for p in psutil.process_iter(_TABLE_ATTRS, ad_value=None)]
    return readings.get("proc_table", read)


def is_kernel_thread(info: dict) -> bool:
    """Kernel threads (children of kthreadd, pid 2) have no command line and no descriptors."""
    return info.get("pid") == 2 or (info.get("ppid") == 2 and not info.get("cmdline"))


def candidates(readings: Readings) -> list[dict]:
    """The processes that may be a culprit: not the appliance's own, not kernel threads."""
    own = readings.own()
    return [p for p in proc_table(readings) if p["pid"] not in own and not is_kernel_thread(p)]


def name_of(info: dict) -> str:
    return quote(info.get("name") or "?", 64)


def who(info: dict) -> str:
    """'nginx (pid 812)': how a verdict names a process."""
    return f"{name_of(info)} (pid {info['pid']})"


def command(info: dict, limit: int = 120) -> str:
    """The redacted, clipped command line on one line (or [name] for a process without one)."""
    return quote(show_argv(info.get("cmdline") or [], info.get("name") or "?"), limit)


def quote(text: str, limit: int = QUOTE_LIMIT) -> str:
    """Machine text as a verdict may quote it: one line, secrets redacted (before clipping, so no
    half secret shows), clipped. The text stays data: nothing in it is ever acted on."""
    return units.clip(redact(" ".join(text.split())), limit)


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


# Every program an analyzer runs, with its exact arguments: read-only queries only. Nothing the
# model writes reaches this list; a call not on it is a bug and raises.
FIXED_COMMANDS: frozenset[tuple[str, ...]] = frozenset({
    ("dmesg", "--raw", "--level=emerg,alert,crit,err,warn,notice,info"),
    ("journalctl", "--no-pager", "--quiet", "-o", "short-iso", "-p", "err", "--since=-1h", "-n", "2000"),
    ("journalctl", "--no-pager", "--list-boots"),
    ("systemctl", "--failed", "--no-legend", "--plain", "--no-pager"),
    ("systemctl", "show", "--no-pager", "-p", "Id", "-p", "NRestarts", "-p", "SubState", "*.service"),
    ("timedatectl", "show"),
    ("last", "-x", "--time-format", "iso", "reboot"),
})


def run_program(name: str, *args: str, timeout: float = 3.0, cap: int = 512 * 1024) -> Ran | None:
    """Run one of FIXED_COMMANDS from the system directories (no shell, no $PATH, its own process
    group, a deadline); None when it is not installed."""
    if (name, *args) not in FIXED_COMMANDS:
        raise ValueError(f"{name} {' '.join(args)} is not one of the analyzers' fixed read-only commands")
    path = find_program(name)
    if path is None:
        return None
    return run_capped([path, *args], timeout=timeout, cap=cap)


def read_small(readings: Readings, path: str, limit: int = 64 * 1024) -> str:
    """A small text file (/proc, /sys) read through the path policy; ReadingUnavailable when the
    policy or the kernel refuses it."""
    try:
        fd, _real, _st = readings.policy.open_file(path)
    except Exception as exc:  # PathDenied, FileNotFoundError, PermissionError
        raise ReadingUnavailable(f"cannot read {path}: {exc}") from None
    try:
        return read_capped(fd, limit).decode("utf-8", errors="replace")
    finally:
        os.close(fd)


def read_number(readings: Readings, path: str) -> int | None:
    """The first integer in a /proc/sys file, or None when it cannot be read."""
    try:
        text = read_small(readings, path, 4096).split()
        return int(text[0]) if text else None
    except (ReadingUnavailable, ValueError):
        return None
