"""The machine at a glance: the first thing to look at for almost any question."""

from __future__ import annotations

import os
import platform
import time

import psutil

from appliance.tools import facts, units
from appliance.tools.base import ok, tool
from appliance.tools.context import ToolContext


def _os_name() -> str:
    try:
        release = platform.freedesktop_os_release()
        return release.get("PRETTY_NAME") or release.get("NAME") or "Linux"
    except OSError:
        return f"{platform.system()} {platform.release()}"


def _cpu_busy_percent(seconds: float = 0.3) -> float:
    """CPU use over a short interval (psutil's interval-less first reading is meaningless)."""
    shares = psutil.cpu_times_percent(interval=seconds)
    return units.pct(100.0 - shares.idle - getattr(shares, "iowait", 0.0))


@tool(reads="system", ttl=5.0, timeout=10.0, first_for=("uptime",))
def system_overview(ctx: ToolContext) -> dict:
    """OS, kernel, hostname, time zone, uptime, boot, virtualization, load, CPU model/count/use, memory, swap,
    battery. Use first, to get the lie of the land; then drill down with the specific tools."""
    cores = psutil.cpu_count() or 1
    load1, load5, load15 = os.getloadavg()
    freq = None
    try:
        freq = psutil.cpu_freq()
    except (OSError, NotImplementedError):
        pass
    vm = psutil.virtual_memory()
    swap = psutil.swap_memory()
    boot = psutil.boot_time()
    battery = None
    try:
        battery = psutil.sensors_battery()
    except (OSError, NotImplementedError, AttributeError):
        pass
    try:
        temps = psutil.sensors_temperatures()
    except (OSError, NotImplementedError, AttributeError):
        temps = {}
    data = {
        "os": _os_name(),
        "kernel": platform.release(),
        "hostname": platform.node(),
        "architecture": platform.machine(),
        "time_zone": facts.time_zone(),
        "virtualization": facts.virtualization(),
        "uptime": units.duration(time.time() - boot),
        "booted": units.when(boot),
        "cpu": {
            "model": facts.cpu_model(),
            "logical_cores": cores,
            "physical_cores": psutil.cpu_count(logical=False),
            "busy_percent": _cpu_busy_percent(),
            "frequency_mhz": round(freq.current) if freq and freq.current else None,
            "max_frequency_mhz": round(freq.max) if freq and freq.max else None,
        },
        "load_average": {
            "1min": round(load1, 2), "5min": round(load5, 2), "15min": round(load15, 2),
            "per_core_1min": round(load1 / cores, 2),
        },
        "memory": {
            "total": units.size(vm.total), "available": units.size(vm.available),
            "used_percent": units.pct(vm.percent),
        },
        "swap": {
            "total": units.size(swap.total), "used": units.size(swap.used),
            "used_percent": units.pct(swap.percent) if swap.total else 0.0,
        } if swap.total else "no swap configured",
        "battery": (
            {"percent": units.pct(battery.percent), "plugged_in": battery.power_plugged}
            if battery else "no battery"
        ),
        "temperature_sensors": len(temps) if temps else "none exposed",
        "processes": len(psutil.pids()),
    }
    return ok(data)
