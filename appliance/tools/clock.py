"""Whether the system clock is synchronized, as the kernel's NTP state says (the `adjtimex` system
call in read-only mode: what `timedatectl`'s "System clock synchronized" and `ntptime` read).

Why the system call and not `timedatectl`: it needs systemd and its bus, which containers and
small systems lack; the kernel's flag is there on every Linux. The call is made with `modes` 0,
which only reads.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

TIME_ERROR = 5  # adjtimex's return value when the clock is not synchronized
STA_UNSYNC = 0x0040


class _Timex(ctypes.Structure):
    """struct timex of <sys/timex.h> (the fields up to `tai`, then the kernel's padding)."""

    _fields_ = [("modes", ctypes.c_uint), ("offset", ctypes.c_long), ("freq", ctypes.c_long),
                ("maxerror", ctypes.c_long), ("esterror", ctypes.c_long), ("status", ctypes.c_int),
                ("constant", ctypes.c_long), ("precision", ctypes.c_long), ("tolerance", ctypes.c_long),
                ("time_sec", ctypes.c_long), ("time_usec", ctypes.c_long), ("tick", ctypes.c_long),
                ("ppsfreq", ctypes.c_long), ("jitter", ctypes.c_long), ("shift", ctypes.c_int),
                ("stabil", ctypes.c_long), ("jitcnt", ctypes.c_long), ("calcnt", ctypes.c_long),
                ("errcnt", ctypes.c_long), ("stbcnt", ctypes.c_long), ("tai", ctypes.c_int),
                ("_padding", ctypes.c_int * 11)]


@dataclass(frozen=True)
class ClockState:
    """synchronized: the kernel's verdict (None when it cannot be asked); max_error_ms its bound."""

    synchronized: bool | None
    max_error_ms: float | None = None
    why: str = ""


def clock_state() -> ClockState:
    try:
        libc = ctypes.CDLL(None, use_errno=True)  # the C library already loaded (find_library would run ldconfig)
        timex = _Timex()  # modes = 0: read only
        state = libc.adjtimex(ctypes.byref(timex))
    except (OSError, AttributeError) as exc:
        return ClockState(None, why=f"adjtimex is not available: {exc}")
    if state < 0:
        return ClockState(None, why=f"adjtimex failed (errno {ctypes.get_errno()})")
    synced = state != TIME_ERROR and not timex.status & STA_UNSYNC
    return ClockState(synced, timex.maxerror / 1000.0,
                      "the kernel's NTP state is synchronized" if synced else
                      "the kernel marks the clock unsynchronized (no NTP client has disciplined it)")
