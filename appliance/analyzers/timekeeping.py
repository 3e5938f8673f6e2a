"""Clock and time sync, and uptime and reboots.

The clock: the kernel's own view through adjtimex(2) with modes = 0, which only reads (STA_UNSYNC,
the offset and the maximum error the NTP discipline keeps), plus `timedatectl show` where systemd
runs, plus whether a time service (chronyd, ntpd, systemd-timesyncd, ...) is running. Whether the
clock is *right* needs a trusted clock elsewhere; on a virtual machine without a time service the
host usually keeps it, which cannot be checked from inside, so that verdict is `unknown`.
Thresholds: docs/analyzers.md.
"""

from __future__ import annotations

import ctypes
import re
from datetime import datetime

import psutil

from appliance.analyzers.base import OK, UNKNOWN, WARNING, Finding
from appliance.analyzers.common import name_of, plural, proc_table, read_small, run_program
from appliance.analyzers.readings import ReadingUnavailable, Readings
from appliance.tools import units

STA_UNSYNC = 0x0040
STA_NANO = 0x2000
TIME_ERROR = 5
OFFSET_WARNING_SECONDS = 0.5
TIME_SERVICES = ("chronyd", "ntpd", "openntpd", "systemd-timesyncd", "timesyncd", "ntpsec", "ptp4l", "phc2sys")
REBOOTS_WARNING = 3  # boots within REBOOT_WINDOW
REBOOT_WINDOW = 24 * 3600


class _Timeval(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_usec", ctypes.c_long)]


class _Timex(ctypes.Structure):
    """struct timex of <sys/timex.h>; the trailing ints are the kernel's reserved padding."""
    _fields_ = [("modes", ctypes.c_uint), ("offset", ctypes.c_long), ("freq", ctypes.c_long),
                ("maxerror", ctypes.c_long), ("esterror", ctypes.c_long), ("status", ctypes.c_int),
                ("constant", ctypes.c_long), ("precision", ctypes.c_long), ("tolerance", ctypes.c_long),
                ("time", _Timeval), ("tick", ctypes.c_long), ("ppsfreq", ctypes.c_long), ("jitter", ctypes.c_long),
                ("shift", ctypes.c_int), ("stabil", ctypes.c_long), ("jitcnt", ctypes.c_long),
                ("calcnt", ctypes.c_long), ("errcnt", ctypes.c_long), ("stbcnt", ctypes.c_long),
                ("tai", ctypes.c_int), ("_reserved", ctypes.c_int * 11)]


def kernel_clock() -> dict:
    """adjtimex with modes 0 (read only): synced, offset and max error in seconds."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        tx = _Timex()
        tx.modes = 0
        state = libc.adjtimex(ctypes.byref(tx))
    except (OSError, AttributeError) as exc:
        raise ReadingUnavailable(f"adjtimex is not available ({exc})") from None
    if state < 0:
        raise ReadingUnavailable(f"adjtimex failed (errno {ctypes.get_errno()})")
    scale = 1e-9 if tx.status & STA_NANO else 1e-6
    return {"synchronized": state != TIME_ERROR and not tx.status & STA_UNSYNC,
            "offset_seconds": tx.offset * scale, "max_error_seconds": tx.maxerror * 1e-6}


def _timedatectl() -> dict:
    ran = run_program("timedatectl", "show", timeout=2.0)
    if ran is None or ran.exit_code != 0:
        return {}
    return dict(line.split("=", 1) for line in ran.output.splitlines() if "=" in line)


def _is_virtual(readings: Readings) -> bool:
    try:
        return " hypervisor" in read_small(readings, "/proc/cpuinfo", 512 * 1024)
    except ReadingUnavailable:
        return False


def clock(readings: Readings) -> list[Finding]:
    kernel = kernel_clock()
    shown = {"ntp", "ntpsynchronized", "timezone"}
    td = {k: v for k, v in _timedatectl().items() if k.lower() in shown}
    services = sorted({name_of(p) for p in proc_table(readings) if (p.get("name") or "") in TIME_SERVICES})
    values = {**{k: round(v, 6) if isinstance(v, float) else v for k, v in kernel.items()},
              "time_services": services, **td}
    offset, maxerr = kernel["offset_seconds"], kernel["max_error_seconds"]
    if kernel["synchronized"] or td.get("NTPSynchronized") == "yes":
        by = f" by {', '.join(services)}" if services else ""
        if abs(offset) >= OFFSET_WARNING_SECONDS:
            return [Finding("clock", WARNING, f"the clock is synchronized{by} but {offset:+.3f} s off "
                            f"(over {OFFSET_WARNING_SECONDS} s)", values, culprit=services[0] if services else "clock")]
        return [Finding("clock", OK, f"the clock is synchronized{by}: offset {offset * 1000:+.1f} ms, "
                        f"max error {maxerr * 1000:.0f} ms", values)]
    if services or td.get("NTP") == "yes":
        what = ", ".join(services) or "NTP (timedatectl)"
        return [Finding("clock", WARNING, f"a time service runs ({what}) but the kernel clock is not synchronized "
                        f"(max error {maxerr:.0f} s): it cannot reach its time servers or is still starting",
                        values, culprit=services[0] if services else "systemd-timesyncd")]
    if _is_virtual(readings):
        return [Finding("clock", UNKNOWN, "the clock is not synchronized by NTP and no time service runs; this is a "
                        "virtual machine, whose clock the host usually keeps (that cannot be checked from inside)",
                        {**values, "virtual": True})]
    return [Finding("clock", WARNING, "nothing keeps the clock in time: it is not synchronized and no time service "
                    "(chronyd, ntpd, systemd-timesyncd) runs", {**values, "virtual": False}, culprit="clock")]


# -- uptime and reboots ---------------------------------------------------------------------------

_ISO_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[+-]\d{2}:?\d{2}|Z)?")


def _stamp(text: str) -> float:
    """An ISO time with its offset (last --time-format iso), or a local one (journalctl)."""
    parsed = datetime.fromisoformat(text.replace(" ", "T"))
    return parsed.timestamp()  # a naive time is taken as local, as journalctl prints it


def boot_times() -> tuple[list[float], str]:
    """Boot times known to wtmp (`last -x reboot`) or else the journal (`journalctl --list-boots`)."""
    for argv, source in ((("last", "-x", "--time-format", "iso", "reboot"), "wtmp"),
                         (("journalctl", "--no-pager", "--list-boots"), "journal")):
        ran = run_program(*argv, timeout=2.0)
        if ran is None or ran.exit_code != 0:
            continue
        stamps = []
        for line in ran.output.splitlines():
            if source == "wtmp" and not line.startswith("reboot"):
                continue
            match = _ISO_RE.search(line)
            if match:
                stamps.append(_stamp(match.group(0)))
        if stamps:
            return sorted(stamps), source
    return [], "none"


def uptime(readings: Readings) -> list[Finding]:
    booted = psutil.boot_time()
    up = readings.now - booted
    boots, source = boot_times()
    recent = [b for b in boots if readings.now - b <= REBOOT_WINDOW]
    week = [b for b in boots if readings.now - b <= 7 * 86400]
    booted_at = units.when(booted)
    values = {"uptime_seconds": int(up), "booted": booted_at, "boots_last_24h": len(recent),
              "boots_last_7d": len(week), "boot_record": source}
    since = f"up {units.duration(up)} since {(booted_at or '?')[:16]}"
    if len(recent) >= REBOOTS_WARNING:
        return [Finding("uptime", WARNING, f"{since}; the machine booted {len(recent)} times in the last 24 h "
                        f"({source}): it keeps rebooting (crashes, power or a watchdog?)", values, culprit="reboots")]
    history = (f"{plural(len(week), 'boot')} in the last 7 days ({source})" if source != "none"
               else "no boot history recorded (wtmp and the journal have none)")
    return [Finding("uptime", OK, f"{since}; {history}", values)]
