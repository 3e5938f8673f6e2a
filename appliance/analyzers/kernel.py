"""Kernel errors and warnings from the kernel log (the shared reading of appliance.analyzers.kernel_log).

Recent means the last hour: the kernel's time stamps count seconds since boot, so a message's wall
time is boot time + stamp (a suspend makes older messages look older, never newer). Errors from
boot time are hardware and driver noise more often than not and are only listed once they are
more than an hour old. Thresholds: docs/analyzers.md.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from appliance.analyzers.base import CRITICAL, OK, WARNING, Finding
from appliance.analyzers import procfs
from appliance.analyzers.common import plural, quote
from appliance.analyzers.kernel_log import LEVELS, messages, parse_raw
from appliance.analyzers.readings import ReadingUnavailable, Readings

RECENT_SECONDS = 3600
# The kernel's mount-option parser (fs_context) logs a refused option at err level: a mistyped
# `mount -o`, which the mount command already reported to whoever typed it, not a fault of the
# kernel, a driver or a disk. Counted, never judged an error.
_REFUSED_OPTION = re.compile(r"^[\w.-]+: (?:Bad value for|Unknown parameter|Unsupported parameter|"
                             r"Missing value for|Invalid value for|Value for parameter) '[^']*'")


# The block device an error message names: "EXT4-fs error (device loop0): …", "Buffer I/O error
# on dev sdb1, …", "I/O error, dev sdc, sector …", "EXT4-fs (sda1): Remounting filesystem read-only".
_DEVICE = re.compile(r"\(device ([\w.-]+)\)|\bon dev ([\w.-]+)|\berror, dev ([\w.-]+)|^[\w-]+ \(([\w.-]+)\):")


def named_device(text: str) -> str | None:
    match = _DEVICE.search(text)
    return next((g for g in match.groups() if g), None) if match else None


def block_device_present(name: str) -> bool:
    """The block device exists and has a medium: an unplugged USB stick is gone from sysfs, a
    detached loop device has size 0."""
    try:
        return int(procfs.read_text(f"/sys/class/block/{name}/size").strip() or 0) > 0
    except (OSError, ValueError, ReadingUnavailable):
        return False


def refused_option(text: str) -> bool:
    """The message is the mount-option parser refusing a value, not an error of the machine."""
    return _REFUSED_OPTION.match(text) is not None


def judge(messages: list[dict], now: float, present: Callable[[str], bool] | None = None) -> Finding:
    """Critical for crit/alert/emerg in the last hour, warning for err, ok otherwise.

    present: whether a block device still exists (None: assume every device does). An error about
    a device that is gone (a detached loop device, an unplugged disk) is history, not a fault of
    this machine now: counted as `errors_of_gone_devices`, never judged."""
    refused = [m for m in messages if m["level"] <= 3 and refused_option(m["text"])]
    gone = [m for m in messages if m["level"] <= 3 and m not in refused and present is not None
            and (device := named_device(m["text"])) is not None and not present(device)]
    errors = [m for m in messages if m["level"] <= 3 and m not in refused and m not in gone]
    recent = [m for m in errors if now - m["when"] <= RECENT_SECONDS]
    warnings = sum(1 for m in messages if m["level"] == 4)
    values: dict[str, Any] = {"errors_since_boot": len(errors), "errors_last_hour": len(recent),
                              "warnings_since_boot": warnings, "refused_mount_options": len(refused),
                              "errors_of_gone_devices": len(gone)}
    if recent:
        worst = min(m["level"] for m in recent)
        cause = next(m for m in recent if m["level"] == worst)
        values.update(level=LEVELS[worst], cause=quote(cause["text"]), minutes_ago=round((now - cause["when"]) / 60, 1))
        return Finding("kernel_errors", CRITICAL if worst <= 2 else WARNING,
                       f"the kernel logged {plural(len(recent), 'error')} in the last hour (worst level {LEVELS[worst]}, "
                       f"{values['minutes_ago']:g} min ago): «{values['cause']}»", values, culprit=_source(cause["text"]))
    if errors:
        values["newest"] = quote(errors[-1]["text"])
        return Finding("kernel_errors", OK, f"no kernel errors in the last hour ({len(errors)} since boot, the newest: "
                       f"«{values['newest']}»; {plural(warnings, 'warning')})", values)
    return Finding("kernel_errors", OK, f"no kernel errors since boot ({plural(warnings, 'warning')})", values)


def _source(text: str) -> str:
    """The subsystem a message names first ("EXT4-fs (sda1)", "nvme nvme0"), else "kernel"."""
    head = text.split(": ", 1)[0]
    return quote(head, 40) if ": " in text and 0 < len(head) <= 40 else "kernel"


def kernel_errors(readings: Readings) -> list[Finding]:
    return [judge(messages(readings), readings.now, present=block_device_present)]


__all__ = ["LEVELS", "block_device_present", "judge", "kernel_errors", "named_device", "parse_raw", "refused_option"]
