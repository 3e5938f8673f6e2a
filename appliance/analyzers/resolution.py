"""Name resolution and the default route as this machine's files show them: a nameserver
configured, a local stub resolver that actually listens, the nsswitch hosts order asking DNS, a
default route; the names /etc/hosts pins beyond the standard ones are listed in the ok verdict (a
question that names a host gets its own verdict: host_pins.py). Nothing is looked up and no packet
is sent. Thresholds: docs/analyzers.md, `name_resolution`.
"""

from __future__ import annotations

from pathlib import Path

from appliance.analyzers.base import OK, WARNING, Analyzer, Finding
from appliance.analyzers.host_pins import MAX_PINS_SHOWN, other_pins
from appliance.analyzers.network import listeners
from appliance.analyzers.readings import Readings
from appliance.tools import reach, resolution

DNS_PORT = 53


def judge(readings: Readings, root: Path = Path("/"), proc: Path = Path("/proc")) -> list[Finding]:
    """The verdicts over the files under `root` and the route tables under `proc`."""
    conf = resolution.resolver(root)
    hosts = resolution.hosts_line(root)
    routes = resolution.default_routes(proc)
    values = {"nameservers": conf.nameservers, "nsswitch_hosts": hosts, "default_routes": routes}
    findings = []
    if not conf.present:
        findings.append(Finding("name_resolution", WARNING, "/etc/resolv.conf is missing or unreadable: no nameserver "
                                "is known, so only names in /etc/hosts resolve", values, path="/etc/resolv.conf"))
    elif not conf.nameservers:
        findings.append(Finding("name_resolution", WARNING, "/etc/resolv.conf names no nameserver: only names in "
                                "/etc/hosts resolve", values, path="/etc/resolv.conf"))
    else:
        local = [ns for ns in conf.nameservers if reach.scope(ns) == reach.LOOPBACK]
        if local and len(local) == len(conf.nameservers):
            answering = {r["address"] for r in listeners(readings, DNS_PORT)}
            dead = [ns for ns in local if ns not in answering and not answering & {"0.0.0.0", "::", "127.0.0.1"}]
            if dead:
                findings.append(Finding("name_resolution", WARNING,
                                        f"the only nameserver, {', '.join(dead)}, is on this machine but nothing "
                                        f"listens on its port 53: every DNS lookup fails (a local resolver such as "
                                        f"systemd-resolved or dnsmasq is down)", values, culprit=dead[0]))
    if hosts is not None and conf.nameservers and not any(w.split("[")[0] in ("dns", "resolve") for w in hosts.split()):
        findings.append(Finding("name_resolution", WARNING, f"nsswitch.conf's hosts line is '{hosts}': DNS is never "
                                f"asked, only local sources", values, path="/etc/nsswitch.conf"))
    if not routes:
        findings.append(Finding("name_resolution", WARNING, "no default route: only directly attached networks are "
                                "reachable, nothing beyond them (internet, other subnets)", values))
    if findings:
        return findings
    route = "; ".join(f"{r['family']} via {r['gateway']} on {r['interface']}" for r in routes)
    pins = other_pins(root)
    values["hosts_pins"] = pins
    pinned = ""
    if pins:
        shown = ", ".join(f"{'/'.join(p['names'])} -> {p['address']} (line {p['line']})" for p in pins[:MAX_PINS_SHOWN])
        more = f" and {len(pins) - MAX_PINS_SHOWN} more" if len(pins) > MAX_PINS_SHOWN else ""
        pinned = f"; /etc/hosts pins {shown}{more}"
    return [Finding("name_resolution", OK,
                    f"names resolve through {', '.join(conf.nameservers)} (resolv.conf), hosts order "
                    f"'{hosts or 'dns files'}'; default route {route}{pinned}", values)]


def analyze(readings: Readings) -> list[Finding]:
    return judge(readings)


ANALYZER = Analyzer("name_resolution", ("dns", "resolve", "resolving", "resolution", "name resolution", "nameserver",
                                        "hosts file", "etc hosts", "gateway", "route", "routing",
                                        "default route", "internet", "could not resolve", "unknown host",
                                        "temporary failure in name resolution"), analyze)
