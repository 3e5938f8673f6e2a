"""Temperatures, fans and the battery: often absent on servers and VMs, which is itself an answer."""

from __future__ import annotations

import psutil

from appliance.tools import units
from appliance.tools.base import EMPTY, ok, result, tool
from appliance.tools.context import ToolContext


def read_sensor(name: str):
    """psutil.NAME() (sensors_temperatures, sensors_fans, sensors_battery), or None where the platform or the machine has no such reading."""
    reader = getattr(psutil, name, None)
    if reader is None:
        return None
    try:
        return reader()
    except (OSError, NotImplementedError, RuntimeError):
        return None


@tool(reads="sensors", ttl=5.0, timeout=10.0, first_for=("sensors",))
def sensors(ctx: ToolContext) -> dict:
    """Temperatures (hottest first, with high/critical limits), fan speeds, battery charge, charging state and time left.
    Use for "fan is loud", "laptop is hot", "battery drains". Says plainly when a machine has none."""
    data: dict = {}
    temps = read_sensor("sensors_temperatures") or {}
    readings = []
    for chip, entries in temps.items():
        for entry in entries:
            if entry.current is None:
                continue
            row = {"sensor": f"{chip}/{entry.label}" if entry.label else chip, "celsius": round(entry.current, 1)}
            if entry.high:
                row["high"] = round(entry.high, 1)
            if entry.critical:
                row["critical"] = round(entry.critical, 1)
            if entry.critical and entry.current >= entry.critical:
                row["alarm"] = "at or above critical"
            elif entry.high and entry.current >= entry.high:
                row["alarm"] = "at or above high"
            readings.append(row)
    readings.sort(key=lambda r: r["celsius"], reverse=True)
    data["temperatures"] = readings[:20] if readings else "no temperature sensors are exposed on this machine"
    fans = read_sensor("sensors_fans") or {}
    fan_rows = [{"fan": f"{chip}/{e.label}" if e.label else chip, "rpm": e.current} for chip, es in fans.items() for e in es]
    data["fans"] = fan_rows if fan_rows else "no fan sensors are exposed on this machine"
    battery = read_sensor("sensors_battery")
    if battery is None:
        data["battery"] = "no battery"
    else:
        left = battery.secsleft
        data["battery"] = {
            "percent": units.pct(battery.percent),
            "plugged_in": battery.power_plugged,
            "time_left": (
                "charging" if battery.power_plugged else
                "unknown" if left in (psutil.POWER_TIME_UNKNOWN, psutil.POWER_TIME_UNLIMITED) or left is None or left < 0
                else units.duration(left)
            ),
        }
    if not readings and not fan_rows and battery is None:
        return result(EMPTY, data, "this machine exposes no temperature, fan or battery sensors (common on VMs and servers)")
    return ok(data)
