"""Totals per user over the check's process sample: a user whose processes together take most of
the machine's CPU or memory, though no single process of theirs may stand out.

Memory here is RSS summed (a page shared by a user's processes counts in each, so the total is an
upper bound); `user_totals` also gives PSS. The appliance's own processes are left out of every
total. Thresholds and why: docs/analyzers.md.
"""

from __future__ import annotations

import psutil

from appliance.analyzers.base import OK, WARNING, Finding
from appliance.analyzers.naming import core_percent, size
from appliance.analyzers.readings import Readings
from appliance.tools import units
from appliance.tools.redact import redact
from appliance.tools.users import per_user

FAMILY = "user_load"
CPU_SHARE = 50.0  # % of all cores, one user's processes together
MEMORY_SHARE = 50.0  # % of RAM (RSS summed)


def user_load(readings: Readings) -> list[Finding]:
    """The busiest user by CPU and by memory; a warning when one takes half of either."""
    taken = readings.sample()
    totals = per_user(taken.procs, readings.own())
    if not totals:
        return [Finding(FAMILY, OK, "no processes besides the appliance's own", {"users": 0})]
    memory = psutil.virtual_memory().total
    share = lambda t: units.pct(100.0 * t.cores / taken.cpu_count)  # noqa: E731
    by_cpu, by_memory = totals[0], max(totals, key=lambda t: t.rss)
    values = {"top_cpu_user": redact(by_cpu.user), "top_cpu_percent": share(by_cpu),
              "top_cpu_cores": round(by_cpu.cores, 2), "top_memory_user": redact(by_memory.user),
              "top_memory_percent": units.pct(by_memory.rss, memory), "users": len(totals),
              "processes": {redact(t.user): t.processes for t in totals[:5]}}
    ranking = "; by CPU: " + ", ".join(f"{redact(t.user)} {share(t)} %" for t in totals[:3])
    found = []
    for total, kind, pct in ((by_cpu, "CPU", share(by_cpu)), (by_memory, "memory", units.pct(by_memory.rss, memory))):
        limit = CPU_SHARE if kind == "CPU" else MEMORY_SHARE
        if pct >= limit:
            amount = (f"{pct} % of all {taken.cpu_count} cores ({core_percent(total.cores)} % of one core)" if kind == "CPU"
                      else f"{pct} % of memory ({size(total.rss)} RSS)")
            found.append(Finding(FAMILY, WARNING, f"user {redact(total.user)} takes {amount} with "
                                 f"{total.processes} processes and {total.threads} threads (a warning from {limit:g} %){ranking}",
                                 values, culprit=redact(total.user), pid=_busiest(total.pids, taken.procs, kind)))
    if found:
        return found
    return [Finding(FAMILY, OK, f"no user dominates: the busiest, {redact(by_cpu.user)}, uses {share(by_cpu)} % of all "
                    f"cores with {by_cpu.processes} processes; the most memory, {redact(by_memory.user)}, "
                    f"{size(by_memory.rss)} RSS ({values['top_memory_percent']} %){ranking}", values)]


def _busiest(pids: list[int], procs: list[dict], kind: str) -> int | None:
    """The user's process that takes the most of `kind`."""
    mine = [p for p in procs if p["pid"] in set(pids)]
    key = (lambda p: p.get("cpu_cores", 0.0)) if kind == "CPU" else (lambda p: p["memory_info"].rss if p.get("memory_info") else 0)
    return max(mine, key=key)["pid"] if mine else None
