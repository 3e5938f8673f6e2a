"""CPU: one process hogging a core (utilization by process) and the machine short of CPU
(saturation: load average per core and CPU pressure), the USE method's CPU row.

Thresholds and why: docs/analyzers.md, table `cpu`.
"""

from __future__ import annotations

import os
from typing import Any

from appliance.analyzers import procfs
from appliance.analyzers.base import CRITICAL, OK, WARNING, Analyzer, Finding
from appliance.analyzers.naming import core_percent, process_label, process_name
from appliance.analyzers.readings import Readings

HOG_CORES = 0.75  # one process keeps ≥ 75 % of one core busy over the sample
HOG_ALL_CORES = 0.9  # ... or ≥ 90 % of every core: nothing is left for anything else
LOAD_PER_CORE = (2.0, 4.0)  # warning, critical: runnable (and D-state) tasks per core, 1-min average
PSI_SOME = (40.0, 80.0)  # warning, critical: % of the last 10 s in which a task waited for a CPU
MAX_HOGS = 3  # every process over the threshold is a finding, the busiest first, at most this many
NAMED_WHEN_SATURATED = 0.25  # the busiest process is named beside a saturation verdict from 25 % of a core


def _rank(severities: list[str]) -> str:
    return CRITICAL if CRITICAL in severities else WARNING if WARNING in severities else OK


def _grade(value: float | None, limits: tuple[float, float]) -> str:
    if value is None or value < limits[0]:
        return OK
    return CRITICAL if value >= limits[1] else WARNING


def _load_text(load1: float, cores: int, psi_some: float | None, machine: float) -> str:
    text = f"load {load1:.2f} on {cores} core{'s' if cores != 1 else ''}; machine {machine:.0f} % busy"
    return text + (f"; CPU pressure {psi_some:.0f} % (avg10)" if psi_some is not None else "")


def _saturated(severity: str, others: list[dict], load_text: str, values: dict) -> Finding:
    """The machine is short of CPU: name the busiest processes (the scheduler shares the CPU out
    under saturation, so none may reach the hog threshold) and blame the first."""
    busy = [p for p in others[:MAX_HOGS] if p.get("cpu_cores", 0.0) >= NAMED_WHEN_SATURATED]
    top = ", ".join(f"{process_label(p)} {core_percent(p['cpu_cores']):.0f} %" for p in busy)
    tail = f"; the busiest processes (% of one core): {top}" if busy else ""
    named = busy[0] if busy else None
    return Finding("cpu", severity, f"CPU saturated: {load_text} (warning from load {LOAD_PER_CORE[0]:g} per core "
                   f"or pressure {PSI_SOME[0]:.0f} %){tail}", values,
                   culprit=process_name(named) if named else None, pid=named["pid"] if named else None)


def analyze(readings: Readings) -> list[Finding]:
    sample = readings.sample()
    cores = sample.cpu_count
    load1, load5, _ = os.getloadavg()
    psi = procfs.pressure_or_none("cpu")
    psi_some = psi["some"]["avg10"] if psi and "some" in psi else None
    running, _, total = procfs.read_text("/proc/loadavg").split()[3].partition("/")
    others = sorted(readings.others(), key=lambda p: p.get("cpu_cores", 0.0), reverse=True)
    busiest = others[0] if others else None
    busy_cores = busiest.get("cpu_cores", 0.0) if busiest else 0.0
    values: dict[str, Any] = {
        "cores": cores, "load1": round(load1, 2), "load5": round(load5, 2),
        "load_per_core": round(load1 / cores, 2), "machine_cpu_percent": round(sample.machine_cpu_percent, 1),
        "cpu_pressure_some_avg10": psi_some, "runnable": int(running), "tasks": int(total),
        "sample_seconds": round(sample.seconds, 2),
    }
    if busiest:
        values.update(busiest=process_name(busiest), busiest_pid=busiest["pid"],
                      busiest_percent_of_one_core=core_percent(busy_cores))
    load_text = _load_text(load1, cores, psi_some, sample.machine_cpu_percent)
    findings = []
    for hog in [p for p in others if p.get("cpu_cores", 0.0) >= HOG_CORES][:MAX_HOGS]:
        used = hog["cpu_cores"]
        severity = CRITICAL if used >= HOG_ALL_CORES * cores else WARNING
        findings.append(Finding("cpu", severity,
                                f"CPU hog: {process_label(hog)} uses {core_percent(used):.0f} % of one core "
                                f"(threshold {core_percent(HOG_CORES):.0f} %); {load_text}",
                                dict(values, percent_of_one_core=core_percent(used)),
                                culprit=process_name(hog), pid=hog["pid"]))
    saturation = _rank([_grade(load1 / cores, LOAD_PER_CORE), _grade(psi_some, PSI_SOME)])
    if saturation != OK:
        findings.append(_saturated(saturation, others, load_text, values))
    if findings:
        return findings
    who = (f"the busiest process, {process_label(busiest)}, uses {core_percent(busy_cores):.0f} % of one core"
           if busiest else "no other process is running")
    return [Finding("cpu", OK, f"no CPU hog: {who}; {load_text}", values)]


ANALYZER = Analyzer("cpu", ("cpu", "processor", "slow", "load", "fan", "hog", "busy", "hot", "sluggish"), analyze)
