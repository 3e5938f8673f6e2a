"""Who can reach each listening port: only this machine (bound to loopback), every machine (all
interfaces) or one address, and whether a firewall this machine shows drops or rejects traffic.
Why: "it works here but not from other machines" is most often a service bound to 127.0.0.1.

A loopback-only listener is not a fault in general (databases often are on purpose), so the
machine-wide verdict is an inventory; `reach_finding(port)` judges one port a question names: a
warning when it listens only on loopback. Thresholds: docs/analyzers.md, `reach`.
"""

from __future__ import annotations

from appliance.analyzers.base import OK, WARNING, Analyzer, Finding
from appliance.analyzers.common import quote
from appliance.analyzers.network import listeners
from appliance.analyzers.readings import Readings
from appliance.tools import reach

SHOWN = 10


def _firewall(readings: Readings) -> reach.Firewall:
    return readings.get("firewall", reach.read_firewall)


def _label(row: dict) -> str:
    return f"{row['proto']} {row['port']} {row['process']}" + (f" (pid {row['pid']})" if row["pid"] else "")


def analyze(readings: Readings) -> list[Finding]:
    rows = listeners(readings)
    wall = _firewall(readings)
    by_scope: dict[str, list[dict]] = {reach.LOOPBACK: [], reach.EVERYWHERE: [], reach.ONE_ADDRESS: []}
    for row in rows:
        by_scope[reach.scope(row["address"])].append(row)
    local = {(r["proto"], r["port"]) for r in by_scope[reach.LOOPBACK]}
    wider = {(r["proto"], r["port"]) for r in rows if reach.scope(r["address"]) != reach.LOOPBACK}
    only_local = [r for r in by_scope[reach.LOOPBACK] if (r["proto"], r["port"]) not in wider]
    parts = [f"only from this machine (loopback): {'; '.join(_label(r) for r in only_local[:SHOWN]) or 'none'}",
             f"from other machines (all interfaces): "
             f"{'; '.join(_label(r) for r in by_scope[reach.EVERYWHERE][:SHOWN]) or 'none'}"]
    if by_scope[reach.ONE_ADDRESS]:
        parts.append("on one address: " + "; ".join(f"{_label(r)} at {r['address']}"
                                                     for r in by_scope[reach.ONE_ADDRESS][:SHOWN]))
    values = {"loopback_only": [{k: r[k] for k in ("proto", "port", "pid", "process")} for r in only_local[:60]],
              "all_interfaces": len(by_scope[reach.EVERYWHERE]), "one_address": len(by_scope[reach.ONE_ADDRESS]),
              "firewall": wall.summary(), "local_ports": len(local)}
    if not rows:
        return [Finding("reach", OK, f"no process listens on any port; {wall.summary()}", values)]
    return [Finding("reach", OK, f"{len(rows)} listening sockets: " + ". ".join(parts) + f". Firewall: {wall.summary()}",
                    values)]


def reach_finding(port: int, readings: Readings | None = None, proto: str = "tcp") -> Finding:
    """Can other machines reach `port`? A warning when it listens only on loopback or not at all."""
    readings = readings or Readings()
    rows = [r for r in listeners(readings, port) if r["proto"] == proto]
    wall = _firewall(readings)
    rules = wall.naming_port(port)
    fw = f"firewall: {wall.summary()}" + (f"; rules naming port {port}: {quote(' | '.join(rules[:5]))}" if rules else "")
    values = {"port": port, "proto": proto, "addresses": sorted({r["address"] for r in rows}), "firewall": wall.summary(),
              "firewall_rules": rules[:20]}
    if not rows:
        return Finding("reach", WARNING, f"nothing listens on {proto} port {port}: no machine can connect to it; {fw}",
                       values, culprit=f"{proto} port {port}")
    owner = rows[0]
    scopes = {reach.scope(r["address"]) for r in rows}
    meanings = "; ".join(reach.meaning(r["address"]) for r in rows)
    if scopes == {reach.LOOPBACK} and owner["pid"] not in readings.own():  # the appliance is never a culprit
        return Finding("reach", WARNING, f"{proto} port {port} ({owner['process']}, pid {owner['pid']}) listens on "
                       f"{meanings}. To be reachable it must listen on 0.0.0.0/:: or this machine's address; {fw}",
                       values, culprit=owner["process"], pid=owner["pid"])
    return Finding("reach", OK, f"{proto} port {port} ({owner['process']}, pid {owner['pid']}) listens on {meanings}; "
                   f"{fw}", values)


ANALYZER = Analyzer("reach", ("other machines", "other machine", "another machine", "other computers",
                              "another computer", "from outside", "remotely", "reachable", "unreachable", "from my laptop",
                              "firewall", "lan", "externally", "works locally", "works here"), analyze)
