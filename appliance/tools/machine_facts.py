"""The `machine_facts` tool: this machine's own identity and settings (what `ip addr`, `ip route`,
`hostname -f`, /etc/resolv.conf, `swapon --show`, `timedatectl`, `who` and /proc/cmdline show).

Why beside `system_overview` and not inside it: the overview is the first glance every run takes,
its size paid on every question; these facts answer "what is my address?", "which gateway?", "is
the clock synchronized?", and keep this machine's address apart from the gateway's, which a small
model otherwise mixes up.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path

import psutil

from appliance.tools import units
from appliance.tools.base import ok, tool
from appliance.tools.clock import clock_state
from appliance.tools.context import ToolContext
from appliance.tools.flags import Flag, flag_dicts
from appliance.tools.network import address_text
from appliance.tools.redact import redact
from appliance.tools.resolution import RESOLVED_FILES, default_routes, hosts_entries, resolver

CMDLINE_CHARS = 600


def addresses() -> list[dict]:
    """Each interface: up or down, its IPv4 and IPv6 addresses with their prefix length."""
    stats, addrs = psutil.net_if_stats(), psutil.net_if_addrs()
    rows = []
    for name in sorted(set(stats) | set(addrs), key=lambda n: (n == "lo", n)):
        found = addrs.get(name, [])

        def of(family: int) -> list[str]:
            return [address_text(a) for a in found if a.family == family]
        st = stats.get(name)
        rows.append({"interface": name, "up": bool(st and st.isup), "ipv4": of(socket.AF_INET) or "none",
                     "ipv6": of(socket.AF_INET6) or "none"})
    return rows


def fqdn(hostname: str) -> str:
    """The full host name as /etc/hosts gives it (the first name of the line naming this host, which
    is what `hostname -f` gets through nsswitch's "files"). No resolver is asked: that could send a
    DNS query, and the tools send nothing."""
    for entry in hosts_entries(Path("/"), hostname):
        return entry["names"][0]
    return f"{hostname} (no /etc/hosts line names it; a longer name would need a DNS lookup, which is never made)"


def swaps() -> list[dict]:
    """/proc/swaps: each swap device or file, its type, size, use and priority."""
    rows: list[dict] = []
    try:
        with open("/proc/swaps", encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()[1:]
    except OSError:
        return rows
    for line in lines:
        f = line.split()
        if len(f) >= 5:
            size, used = int(f[2]) * 1024, int(f[3]) * 1024
            rows.append({"device": f[0].replace("\\040", " "), "type": f[1], "size": units.size(size),
                         "used": units.size(used), "used_percent": units.pct(used, size) if size else 0.0,
                         "priority": int(f[4])})
    return rows


def kernel_command_line() -> str:
    try:
        with open("/proc/cmdline", encoding="utf-8", errors="replace") as handle:
            return units.clip(redact(handle.read().strip()), CMDLINE_CHARS)
    except OSError:
        return "unreadable"


def dns_servers() -> list[str] | str:
    conf = resolver(Path("/"))
    servers = list(conf.nameservers)
    for relative in RESOLVED_FILES:
        upstream = resolver(Path("/"), relative)
        servers += [f"{s} (systemd-resolved's upstream)" for s in upstream.nameservers if s not in servers]
    if not conf.present:
        return "none: /etc/resolv.conf does not exist or cannot be read"
    return servers or "none listed in /etc/resolv.conf"


def logged_in() -> list[dict] | str:
    rows = [{"user": u.name, "terminal": u.terminal or "?", "from": u.host or "local",
             "since": time.strftime("%Y-%m-%d %H:%M", time.localtime(u.started))} for u in psutil.users()]
    return rows[:20] or "nobody"


def _gateways(routes: list[dict]) -> list[dict] | str:
    return [{"gateway": r["gateway"], "via_interface": r["interface"], "family": r["family"], "metric": r["metric"]}
            for r in routes] or "none: only directly attached networks are reachable"


@tool(reads="system", ttl=10.0, timeout=8.0)
def machine_facts(ctx: ToolContext) -> dict:
    """This machine's addresses per interface, default gateway (not its own address), host name and FQDN, DNS
    servers, swap devices, clock synchronized or not, users logged in, kernel command line, boot time."""
    routes = default_routes()
    clock = clock_state()
    mine = addresses()
    boot = psutil.boot_time()
    flags = []
    if clock.synchronized is False:
        flags.append(Flag("clock_unsynchronized", "warning", f"the system clock is not synchronized: {clock.why}"))
    clock_text = ("synchronized" if clock.synchronized else "not synchronized" if clock.synchronized is False
                  else "unknown") + f" ({clock.why})"
    if clock.max_error_ms is not None:
        clock_text += f", maximum error {clock.max_error_ms:g} ms"
    own = [a for row in mine if row["up"] and row["interface"] != "lo"
           for a in (row["ipv4"] if isinstance(row["ipv4"], list) else [])]
    gateway = f"default gateway {routes[0]['gateway']} via {routes[0]['interface']}" if routes else "no default route"
    data: dict = {
        "headline": f"{socket.gethostname()}: this machine's addresses {', '.join(own) or 'none but loopback'}; "
                    f"{gateway}; clock {clock_text.split(' (')[0]}",
        "hostname": socket.gethostname(), "fqdn": fqdn(socket.gethostname()),
        "this_machine_addresses": mine,
        "default_gateway": _gateways(routes),
        "default_route_interface": sorted({r["interface"] for r in routes}) or "none",
        "dns_servers": dns_servers(),
        "swap_devices": swaps() or "none",
        "clock": clock_text,
        "users_logged_in": logged_in(),
        "kernel_command_line": kernel_command_line(),
        "booted": units.when(boot), "uptime": units.duration(time.time() - boot),
        "flags": flag_dicts(flags),
    }
    return ok(data)
