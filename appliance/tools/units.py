"""Numbers as a person (and a small model) reads them: sizes with binary units, rounded
percentages, durations in words, times in local ISO form. One place, so every tool agrees."""

from __future__ import annotations

import time

_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def size(n: float | int | None) -> str | None:
    """1536 -> '1.5 KiB'. None stays None (a reading the machine does not have)."""
    if n is None:
        return None
    value = float(n)
    for unit in _UNITS:
        if abs(value) < 1024 or unit == _UNITS[-1]:
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} PiB"  # pragma: no cover


def rate(bytes_per_second: float) -> str:
    return f"{size(bytes_per_second)}/s"


def pct(part: float, whole: float | None = None, digits: int = 1) -> float:
    """A percentage rounded for reading, clamped to 0-100; with `whole`, part/whole*100."""
    value = part if whole is None else (100.0 * part / whole if whole else 0.0)
    return round(min(100.0, max(0.0, value)), digits)


def duration(seconds: float) -> str:
    """3725 -> '1 h 2 min'; 42 -> '42 s'; 200000 -> '2 d 7 h'."""
    seconds = max(0, int(seconds))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {minutes} min"
    if minutes:
        return f"{minutes} min {secs} s"
    return f"{secs} s"


def when(timestamp: float | None) -> str | None:
    """A Unix time as local 'YYYY-MM-DD HH:MM:SS'."""
    if not timestamp:
        return None
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(timestamp))


def ago(timestamp: float | None, now: float | None = None) -> str | None:
    if not timestamp:
        return None
    return duration((now or time.time()) - timestamp) + " ago"


def clip(text: str, limit: int) -> str:
    """Text cut to `limit` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"… [{len(text) - limit} more chars]"
