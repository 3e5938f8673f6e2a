"""The kernel's log, read once per check through the project's read-only command runner.

Why `dmesg --level=err,warn` from the allow-list and not /dev/kmsg: it is the same ring buffer,
and going through `appliance.tools.commands` keeps one validated way of running a program (absolute
path, no shell, output cap, deadline). The lines keep dmesg's own `[seconds since boot]` stamps;
`wall_time()` turns them into clock time. Every line is redacted before any analyzer sees it.
"""

from __future__ import annotations

import re

import psutil

from appliance.analyzers.readings import ReadingUnavailable, Readings
from appliance.tools.commands import match_allowed
from appliance.tools.redact import redact
from appliance.tools.runner import find_program, run_capped

COMMAND = "dmesg --level=err,warn"
TIMEOUT = 1.5
CAP = 1 << 20
_STAMP = re.compile(r"^\[\s*(\d+\.\d+)\]\s?(.*)$")


def run_allowed(command: str, *, timeout: float = TIMEOUT, cap: int = CAP) -> str:
    """The output of one command of the read-only allow-list; raises ReadingUnavailable when it
    is not installed, not permitted or fails."""
    argv = match_allowed(command)
    if isinstance(argv, str):
        raise ValueError(f"{command!r} is not on the read-only allow-list: {argv}")
    program = find_program(argv[0])
    if program is None:
        raise ReadingUnavailable(f"{argv[0]} is not installed")
    ran = run_capped([program, *argv[1:]], timeout=timeout, cap=cap)
    if ran.timed_out:
        raise ReadingUnavailable(f"{command} did not finish within {timeout:g} s")
    if ran.exit_code != 0:
        first = (ran.output.strip().splitlines() or [f"exit code {ran.exit_code}"])[0]
        raise ReadingUnavailable(f"{command} failed: {redact(first)[:160]}")
    return ran.output


def lines(readings: Readings) -> list[tuple[float | None, str]]:
    """(seconds since boot or None, redacted text) for each error and warning line of the kernel log."""

    def read() -> list[tuple[float | None, str]]:
        out = []
        for raw in run_allowed(COMMAND).splitlines():
            match = _STAMP.match(raw)
            stamp, text = (float(match.group(1)), match.group(2)) if match else (None, raw)
            out.append((stamp, redact(text)))
        return out

    return readings.get("kernel_log", read)


def wall_time(since_boot: float | None) -> float | None:
    """A dmesg stamp as Unix time (approximate after a suspend, when the monotonic clock paused)."""
    return None if since_boot is None else psutil.boot_time() + since_boot
