"""Temperatures against their own high and critical marks, fans, and the battery (psutil.sensors_*).
Virtual machines and many servers expose none: that verdict is `unknown` ("no sensors"), not ok.
Thresholds: docs/analyzers.md."""

from __future__ import annotations

from appliance.analyzers.base import CRITICAL, OK, UNKNOWN, WARNING, Finding
from appliance.analyzers.readings import Readings
from appliance.tools.sensors import read_sensor

NO_MARK_WARNING_C = 90.0  # for a sensor that gives no high mark of its own
BATTERY_WARNING, BATTERY_CRITICAL = 10.0, 5.0  # percent left, on battery
_SANE_MARK = (20.0, 150.0)  # drivers report 0, -273 or 255 for "no mark"


def _mark(value: float | None) -> float | None:
    return value if value and _SANE_MARK[0] <= value <= _SANE_MARK[1] else None


def _temperatures(temps: dict) -> tuple[list[Finding], dict | None]:
    """Findings for hot sensors, and the hottest reading."""
    findings, hottest = [], None
    for chip, entries in temps.items():
        for entry in entries:
            if entry.current is None or entry.current <= 0:
                continue
            name = f"{chip}/{entry.label}" if entry.label else chip
            high, crit = _mark(entry.high), _mark(entry.critical)
            row = {"sensor": name, "celsius": round(entry.current, 1), "high": high, "critical": crit}
            if hottest is None or row["celsius"] > hottest["celsius"]:
                hottest = row
            if crit and entry.current >= crit:
                findings.append(Finding("sensors", CRITICAL, f"{name} is at {entry.current:.0f} °C, at or over its "
                                        f"critical mark {crit:.0f} °C (the machine may shut down)", row, culprit=name))
            elif entry.current >= (high or NO_MARK_WARNING_C):
                mark = f"its high mark {high:.0f} °C" if high else f"{NO_MARK_WARNING_C:.0f} °C (it gives no mark)"
                findings.append(Finding("sensors", WARNING, f"{name} is at {entry.current:.0f} °C, at or over {mark}",
                                        row, culprit=name))
    return findings, hottest


def _battery(battery) -> Finding | None:
    if battery is None or battery.power_plugged or battery.power_plugged is None:
        return None
    if battery.percent <= BATTERY_CRITICAL:
        severity = CRITICAL
    elif battery.percent <= BATTERY_WARNING:
        severity = WARNING
    else:
        return None
    return Finding("sensors", severity, f"the battery is at {battery.percent:.0f} % and not plugged in",
                   {"battery_percent": round(battery.percent, 1), "plugged_in": False}, culprit="battery")


def sensors(readings: Readings) -> list[Finding]:
    temps = read_sensor("sensors_temperatures") or {}
    fans = read_sensor("sensors_fans") or {}
    battery = read_sensor("sensors_battery")
    findings, hottest = _temperatures(temps)
    low = _battery(battery)
    if low:
        findings.append(low)
    if findings:
        return findings
    fan_rows = [(f"{chip}/{e.label}" if e.label else chip, e.current) for chip, es in fans.items() for e in es]
    if hottest is None and not fan_rows and battery is None:
        return [Finding("sensors", UNKNOWN, "no sensors: this machine exposes no temperature, fan or battery readings "
                        "(common on virtual machines and servers)", {"sensors": 0})]
    parts = []
    if hottest:
        mark = f" (high {hottest['high']:.0f} °C)" if hottest["high"] else ""
        parts.append(f"the hottest sensor, {hottest['sensor']}, is at {hottest['celsius']:.0f} °C{mark}")
    if fan_rows:
        parts.append("fans " + ", ".join(f"{name} {rpm} rpm" for name, rpm in fan_rows[:4]))
    if battery is not None:
        parts.append(f"battery {battery.percent:.0f} %{' plugged in' if battery.power_plugged else ''}")
    values = {"hottest": hottest, "fans": len(fan_rows),
              "battery_percent": round(battery.percent, 1) if battery is not None else None}
    return [Finding("sensors", OK, "temperatures, fans and battery are normal: " + "; ".join(parts), values)]
