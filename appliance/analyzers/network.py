"""Listening ports with their owners, and connections by direction and process, from the kernel's
socket tables (psutil.net_connections): nothing is sent and no name is resolved.

Listening is an inventory: a port that listens is not a fault, so `listening` gives an ok verdict
naming them; `port_finding(port)` answers "who listens on port X?" and "is my dependency up?" (a
warning when nothing listens where something should).
`connections` flags one process with an abnormal number of sockets in one state: many CLOSE_WAIT
(the peer closed, the program never did: a socket leak), many SYN_SENT (it keeps trying to reach
something that does not answer) or hundreds of connections overall. Thresholds:
docs/analyzers.md.
"""

from __future__ import annotations

import re
import socket
from collections import Counter, defaultdict
from typing import Iterable

import psutil

from appliance.analyzers.base import OK, WARNING, Finding, standout
from appliance.analyzers.readings import ReadingUnavailable, Readings
from appliance.tools.procs import self_name

CONNECTIONS_WARNING = 500  # sockets of one process, not listening
CONNECTIONS_STANDOUT = 32  # the process with the most connections stands out from 32 (and 3× the next)
STATE_WARNING = {psutil.CONN_CLOSE_WAIT: 20, psutil.CONN_SYN_SENT: 20}
_SHOWN = 12
_CLOSED = {psutil.CONN_TIME_WAIT, psutil.CONN_CLOSE}  # no process holds these any more


def _sockets(readings: Readings) -> list:
    def read() -> list:
        try:
            return psutil.net_connections("inet")
        except psutil.AccessDenied as exc:
            raise ReadingUnavailable(f"the socket tables cannot be read ({exc})") from None
    return readings.get("net_connections", read)


def _name(pid: int | None, readings: Readings) -> str:
    if not pid:
        return "an unknown process"
    def read() -> str:
        try:
            return psutil.Process(pid).name()
        except psutil.Error:
            return "?"
    name = readings.get(f"name:{pid}", read)
    return self_name(name) if pid in readings.own() else name


def _is_listener(conn) -> bool:
    return conn.status == psutil.CONN_LISTEN or (conn.type == socket.SOCK_DGRAM and not conn.raddr)


def _proto(conn) -> str:
    return "tcp" if conn.type == socket.SOCK_STREAM else "udp"


def listeners(readings: Readings, port: int | None = None) -> list[dict]:
    """Listening sockets (TCP LISTEN, unconnected UDP) as {proto, address, port, pid, process}."""
    seen: dict[tuple, dict] = {}
    for c in _sockets(readings):
        if not _is_listener(c) or not c.laddr or (port is not None and c.laddr.port != port):
            continue
        key = (_proto(c), c.laddr.ip, c.laddr.port)
        if key not in seen or (c.pid and not seen[key]["pid"]):
            seen[key] = {"proto": key[0], "address": key[1], "port": key[2], "pid": c.pid,
                         "process": _name(c.pid, readings)}
    return sorted(seen.values(), key=lambda r: (r["port"], r["proto"], r["address"]))


def ports_in(pattern: re.Pattern, texts: Iterable[str], limit: int) -> list[int]:
    """The distinct valid ports that `pattern`'s groups capture in `texts`, in order, at most `limit`."""
    ports: list[int] = []
    for text in texts:
        for match in pattern.finditer(text):
            port = int(next(g for g in match.groups() if g))
            if 0 < port < 65536 and port not in ports:
                ports.append(port)
    return ports[:limit]


def is_listening(port: int, *, proto: str = "tcp", readings: Readings | None = None) -> bool:
    """Does any process listen on `port` (any local address)? For dependency checks."""
    return any(r["proto"] == proto for r in listeners(readings or Readings(), port))


def port_finding(port: int, readings: Readings | None = None, *, proto: str = "tcp",
                 expect_listener: bool = True) -> Finding:
    """The verdict on one port: who listens on it; when nothing does, a warning where something
    should (a dependency refused there), else the fact that the port is free."""
    readings = readings or Readings()
    found = [r for r in listeners(readings, port) if r["proto"] == proto]
    if not found and not expect_listener:
        return Finding("listening", OK, f"nothing listens on {proto} port {port}: the port is free",
                       {"port": port, "proto": proto, "listening": False})
    if not found:
        return Finding("listening", WARNING, f"nothing listens on {proto} port {port}: a service that should "
                       f"answer there is down or listens elsewhere", {"port": port, "proto": proto, "listening": False},
                       culprit=f"{proto} port {port}")
    owner = found[0]
    where = ", ".join(sorted({r["address"] for r in found}))
    return Finding("listening", OK, f"{proto} port {port} is listened on by {owner['process']} (pid {owner['pid']}) on {where}",
                   {"port": port, "proto": proto, "listening": True, "addresses": where,
                    "owner": owner["process"], "owner_pid": owner["pid"]})


def listening(readings: Readings) -> list[Finding]:
    rows = listeners(readings)
    if not rows:
        return [Finding("listening", OK, "no process listens on any TCP or UDP port", {"listening": 0})]
    shown = "; ".join(f"{r['proto']} {r['port']} {r['process']}" + (f" (pid {r['pid']})" if r["pid"] else "")
                      for r in rows[:_SHOWN])
    more = f"; … {len(rows) - _SHOWN} more" if len(rows) > _SHOWN else ""
    return [Finding("listening", OK, f"{len(rows)} listening ports: {shown}{more}",
                    {"listening": len(rows), "ports": [{k: r[k] for k in ("proto", "address", "port", "pid", "process")}
                                                       for r in rows[:60]]})]


def _direction(conn, listening_ports: set[tuple[str, int]]) -> str:
    """inbound: the local end is a port this machine listens on; else outbound."""
    local = conn.laddr
    return "inbound" if local and ((local.ip, local.port) in listening_ports or ("*", local.port) in listening_ports) else "outbound"


def _listening_ports(readings: Readings) -> set[tuple[str, int]]:
    ports = set()
    for r in listeners(readings):
        wildcard = r["address"] in ("0.0.0.0", "::", "")
        ports.add(("*", r["port"]) if wildcard else (r["address"], r["port"]))
    return ports


def connections(readings: Readings) -> list[Finding]:
    ports = _listening_ports(readings)
    own = readings.own()
    per_pid: dict[int | None, Counter] = defaultdict(Counter)
    totals: Counter = Counter()
    for c in _sockets(readings):
        if _is_listener(c) or c.status == psutil.CONN_NONE and not c.raddr:
            continue
        totals[c.status] += 1
        if c.status in _CLOSED:
            continue  # the kernel's leftovers of closed connections: counted as a state only
        direction = _direction(c, ports)
        totals[direction] += 1
        per_pid[c.pid][c.status] += 1
        per_pid[c.pid][direction] += 1
        per_pid[c.pid]["all"] += 1
    findings = []
    for pid, counts in sorted(per_pid.items(), key=lambda kv: -kv[1]["all"]):
        if pid is None or pid in own:
            continue  # TIME_WAIT and other ownerless sockets have no process; ours are never a culprit
        findings += _abnormal(pid, counts, readings)
    if findings:
        return findings
    ranked = [(pid, c) for pid, c in sorted(per_pid.items(), key=lambda kv: -kv[1]["all"])
              if pid is not None and pid not in own]
    busiest = ranked[0] if ranked else None
    lead = standout(_name(busiest[0], readings), busiest[0], busiest[1]["all"], (c["all"] for _, c in ranked[1:]),
                    CONNECTIONS_STANDOUT) if busiest else None
    # phrased like the other rankings ("the most, 302, in NAME (pid N)"): one clause
    top = f"; the most, {busiest[1]['all']}, in {_name(busiest[0], readings)} (pid {busiest[0]})" if busiest else ""
    top += f", {lead.lead()}" if lead is not None else ""
    closed = totals[psutil.CONN_TIME_WAIT]
    states = {k: v for k, v in totals.items() if k not in ("inbound", "outbound")}
    return [Finding("connections", OK,
                    f"connections are normal: {totals['inbound']} inbound to local listeners, {totals['outbound']} "
                    f"outbound{top}" + (f"; {closed} recently closed" if closed else ""),
                    {"inbound": totals["inbound"], "outbound": totals["outbound"], "states": states}, standout=lead)]


def _abnormal(pid: int, counts: Counter, readings: Readings) -> list[Finding]:
    name = _name(pid, readings)
    values = {"connections": counts["all"], "inbound": counts["inbound"], "outbound": counts["outbound"],
              **{state.lower(): counts[state] for state in STATE_WARNING if counts[state]}}
    out = []
    for state, limit in STATE_WARNING.items():
        if counts[state] >= limit:
            why = ("the peer closed them and the program never did: a socket leak" if state == psutil.CONN_CLOSE_WAIT
                   else "it keeps trying to reach something that does not answer")
            out.append(Finding("connections", WARNING, f"{name} (pid {pid}) has {counts[state]} connections in "
                               f"{state} ({why}); {counts['all']} in all", values, culprit=name, pid=pid))
    if not out and counts["all"] >= CONNECTIONS_WARNING:
        out.append(Finding("connections", WARNING,
                           f"{name} (pid {pid}) has {counts['all']} connections ({counts['inbound']} inbound, "
                           f"{counts['outbound']} outbound), over {CONNECTIONS_WARNING}", values, culprit=name, pid=pid))
    return out
