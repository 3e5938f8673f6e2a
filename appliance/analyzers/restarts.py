"""Recently started and restarting (crash-looping) processes.

One reading of the process table cannot see a restart: the crashed instance is gone. So this
analyzer watches process births for the sample interval (the pid list every 20 ms; each new pid's
parent and command line read once it appears, re-read while it lives because a fork shows its
parent's command line until it execs), and counts the system's forks (/proc/stat `processes`).

The rule (docs/analyzers.md):
- restarting: the same command line run at least twice by the same parent while watched (an
  instance that ran before the watch and died in it counts), at least one started in the watch and
  at least one already gone -> warning (the program keeps dying and being started again);
- a parent whose children live and die at >= 20 a second (any command lines) -> warning
  (a respawn loop or a fork storm);
- a systemd service with NRestarts > 0 (systemd restarted it after it died) -> warning;
- processes started in the last 10 minutes are listed in the ok verdict: starting is no fault.
Children of the appliance (its own dmesg, systemctl, ...) are never counted.
"""

from __future__ import annotations

import time
from collections import defaultdict

import psutil

from appliance.analyzers.base import OK, WARNING, Finding
from appliance.analyzers.common import candidates, command, name_of, plural, proc_table, read_small, run_program, who
from appliance.analyzers.readings import ReadingUnavailable, Readings
from appliance.tools import units

POLL_SECONDS = 0.02  # a child that lives 20 ms is seen; /proc is listed 50 times a second
SPAWN_RATE_WARNING = 20.0  # short-lived children per second from one parent
RECENT_SECONDS = 600
_BIRTH_ATTRS = ["pid", "ppid", "name", "cmdline", "create_time"]


def _forks(readings: Readings) -> int | None:
    """Processes created since boot (/proc/stat `processes`)."""
    try:
        for line in read_small(readings, "/proc/stat").splitlines():
            if line.startswith("processes "):
                return int(line.split()[1])
    except (ReadingUnavailable, ValueError):
        return None
    return None


def _info(pid: int) -> dict | None:
    try:
        return psutil.Process(pid).as_dict(_BIRTH_ATTRS)
    except psutil.Error:
        return None


def watch_births(readings: Readings, seconds: float) -> dict:
    """The processes born during `seconds`: {"births": {pid: info + exited}, "ended": {pid: info} of
    those that ran before the watch and exited during it, "forks", "seconds"}.

    Why the ended ones: a program that lives about as long as the watch is born at most once in it;
    the instance that died during it is the other half of the restart."""
    forks_before = _forks(readings)
    running = {p.info["pid"]: p.info for p in psutil.process_iter(_BIRTH_ATTRS, ad_value=None)}
    known = set(running)
    births: dict[int, dict] = {}
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        time.sleep(POLL_SECONDS)
        now = set(psutil.pids())
        for pid in now:
            if pid not in known or (pid in births and not births[pid].get("cmdline")):
                info = _info(pid)
                if info is not None:
                    births[pid] = info
        for pid in now & set(births):  # a fork shows its parent's command line until it execs
            fresh = _info(pid)
            if fresh is not None and fresh.get("create_time") == births[pid].get("create_time"):
                births[pid] = fresh
        known |= now
    elapsed = time.monotonic() - started
    alive = set(psutil.pids())
    for pid, info in births.items():
        gone = pid not in alive
        if not gone:
            try:
                gone = psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
            except psutil.Error:
                gone = True
        info["exited"] = gone
    ended = {pid: dict(info, exited=True, before_watch=True) for pid, info in running.items()
             if pid not in alive and info.get("cmdline")}
    forks_after = _forks(readings)
    forks = forks_after - forks_before if forks_before is not None and forks_after is not None else None
    return {"births": births, "ended": ended, "forks": forks, "seconds": elapsed}


def _strangers(births: dict[int, dict], own: set[int], self_pids: frozenset[int]) -> list[dict]:
    """Births that are not the appliance's own (its children run dmesg, systemctl … meanwhile)."""
    mine = set(own) | set(self_pids)
    out = []
    for pid in sorted(births):
        info = births[pid]
        if info.get("ppid") in mine or pid in mine:
            mine.add(pid)
            continue
        out.append(info)
    return out


def _loops(births: list[dict], table: dict[int, dict], seconds: float) -> list[Finding]:
    groups: dict[tuple, list[dict]] = defaultdict(list)
    by_parent: dict[int | None, list[dict]] = defaultdict(list)
    for info in births:
        if info.get("cmdline"):  # one seen only as a zombie has no command line: not comparable
            groups[(info.get("ppid"), tuple(info["cmdline"]))].append(info)
        if info["exited"] and not info.get("before_watch"):
            by_parent[info.get("ppid")].append(info)
    findings, flagged = [], set()
    for (ppid, _cmd), runs in groups.items():
        born = [r for r in runs if not r.get("before_watch")]
        if len(runs) < 2 or not born or not any(r["exited"] for r in runs):
            continue  # two old instances that end are no restart: one must be started again
        flagged.add(ppid)
        newest = runs[-1]
        parent = table.get(ppid) or _info(ppid) or {"pid": ppid, "name": "?"}
        findings.append(Finding(
            "restarts", WARNING,
            f"{name_of(newest)} is restarting: `{command(newest, 80)}` ran {len(runs)} times one after another "
            f"in {seconds:.1f} s under {who(parent)}, {sum(r['exited'] for r in runs)} of them already exited",
            {"starts": len(runs), "started_while_watched": len(born), "exited": sum(r["exited"] for r in runs),
             "seconds": round(seconds, 2),
             "command": command(newest), "parent": name_of(parent), "parent_pid": ppid,
             "pids": [r["pid"] for r in runs][:20]},
            culprit=name_of(newest), pid=newest["pid"]))
    for ppid, dead in by_parent.items():
        rate = len(dead) / max(seconds, 1e-3)
        if ppid is None or ppid in flagged or rate < SPAWN_RATE_WARNING:
            continue  # an unreadable ppid: psutil.Process(None) would be this process itself
        parent = table.get(ppid) or _info(ppid) or {"pid": ppid, "name": "?"}
        findings.append(Finding(
            "restarts", WARNING,
            f"{who(parent)} spawns short-lived children: {len(dead)} started and exited in {seconds:.1f} s "
            f"({rate:.0f}/s)", {"short_lived_children": len(dead), "seconds": round(seconds, 2),
                                "per_second": round(rate, 1)},
            culprit=name_of(parent), pid=ppid))
    return findings


def parse_show(output: str) -> list[dict]:
    """`systemctl show -p Id -p NRestarts -p SubState UNITS…` as {unit, restarts, state} per unit."""
    units_seen = []
    for block in output.strip().split("\n\n"):
        fields = dict(line.split("=", 1) for line in block.splitlines() if "=" in line)
        if "Id" in fields:
            count = fields.get("NRestarts", "")
            units_seen.append({"unit": fields["Id"], "restarts": int(count) if count.isdigit() else 0,
                               "state": fields.get("SubState")})
    return units_seen


def _unit_restarts() -> tuple[list[Finding], str]:
    """Services systemd restarted after they died (NRestarts > 0), and a note on systemd."""
    ran = run_program("systemctl", "show", "--no-pager", "-p", "Id", "-p", "NRestarts", "-p", "SubState",
                      "*.service")
    if ran is None:
        return [], "systemd: not installed"
    if ran.exit_code != 0 or "NRestarts=" not in ran.output:
        return [], "systemd: not running here"
    findings = [Finding("restarts", WARNING,
                        f"systemd restarted {u['unit']} {plural(u['restarts'], 'time')} after it died (now {u['state'] or '?'})",
                        u, culprit=u["unit"]) for u in parse_show(ran.output) if u["restarts"] > 0]
    return findings, "systemd: no service was restarted"


def restarts(readings: Readings) -> list[Finding]:
    watched = readings.get("birth_watch", lambda: watch_births(readings, max(readings.sample_seconds, readings.watch_seconds)))
    table = {p["pid"]: p for p in proc_table(readings)}
    births = _strangers(watched["births"], readings.own(), readings.self_pids)
    ended = _strangers(watched.get("ended", {}), readings.own(), readings.self_pids)
    findings = _loops(sorted(ended + births, key=lambda info: info.get("create_time") or 0.0), table,
                      watched["seconds"])
    units_found, systemd_note = _unit_restarts()
    findings += units_found
    if findings:
        return findings
    recent = sorted((p for p in candidates(readings) if p.get("create_time")
                     and readings.now - p["create_time"] <= RECENT_SECONDS),
                    key=lambda p: -p["create_time"])
    shown = ", ".join(f"{who(p)} {units.ago(p['create_time'], readings.now)}" for p in recent[:5])
    forks = watched["forks"]
    rate = f"{forks / watched['seconds']:.0f} new processes/s" if forks is not None else "fork rate unknown"
    return [Finding(
        "restarts", OK,
        f"no process is restarting ({rate} while watched {watched['seconds']:.1f} s; {systemd_note}); "
        + (f"started in the last {RECENT_SECONDS // 60} min: {shown}" if recent
           else f"nothing started in the last {RECENT_SECONDS // 60} min"),
        {"births_watched": len(births), "forks": forks, "seconds": round(watched["seconds"], 2),
         "recently_started": [{"process": name_of(p), "pid": p["pid"],
                               "started": units.ago(p["create_time"], readings.now)} for p in recent[:10]]})]
