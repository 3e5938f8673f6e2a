"""The kernel's log, read once per check: every analyzer that needs it (kernel errors, OOM kills,
filesystems turned read-only) shares one reading.

Why `dmesg --raw` (a fixed read-only command) and not /dev/kmsg: it is the same ring buffer, and
the path policy never opens devices. `--raw` keeps each message's level (`<3>` = err) and its
`[seconds since boot]` stamp; `wall_time()` turns a stamp into clock time. Every line is redacted
before any analyzer sees it.
"""

from __future__ import annotations

import re

import psutil

from appliance.analyzers.common import quote, run_program
from appliance.analyzers.readings import ReadingUnavailable, Readings
from appliance.tools.redact import redact

LEVELS = {0: "emerg", 1: "alert", 2: "crit", 3: "err", 4: "warn"}
TIMEOUT = 3.0
CAP = 2 * 1024 * 1024
_RAW_RE = re.compile(r"^<(\d+)>\[\s*(\d+\.\d+)\]\s?(.*)$")


def parse_raw(output: str, boot_time: float) -> list[dict]:
    """`dmesg --raw` lines as {level, stamp (seconds since boot), when (Unix time), text};
    continuation lines are skipped."""
    messages = []
    for line in output.splitlines():
        match = _RAW_RE.match(line)
        if match:
            level = int(match.group(1)) & 7  # the facility sits in the higher bits
            stamp = float(match.group(2))
            messages.append({"level": level, "stamp": stamp, "when": boot_time + stamp, "text": match.group(3)})
    return messages


def messages(readings: Readings) -> list[dict]:
    """The kernel log's messages down to level info (a mount is logged at info), redacted, read once per check."""

    def read() -> list[dict]:
        ran = run_program("dmesg", "--raw", "--level=emerg,alert,crit,err,warn,notice,info", timeout=TIMEOUT, cap=CAP)
        if ran is None:
            raise ReadingUnavailable("dmesg is not installed")
        if ran.timed_out:
            raise ReadingUnavailable(f"dmesg did not finish within {TIMEOUT:g} s")
        if ran.exit_code != 0:
            raise ReadingUnavailable(f"the kernel log cannot be read: {quote(ran.output, 160)}")
        found = parse_raw(ran.output, psutil.boot_time())
        return [dict(m, text=redact(m["text"])) for m in found]

    return readings.get("kernel_log", read)


def lines(readings: Readings) -> list[tuple[float | None, str]]:
    """(seconds since boot, redacted text) for each line of the kernel log, oldest first."""
    return [(m["stamp"], m["text"]) for m in messages(readings)]


def wall_time(since_boot: float | None) -> float | None:
    """A dmesg stamp as Unix time (approximate after a suspend, when the monotonic clock paused)."""
    return None if since_boot is None else psutil.boot_time() + since_boot
