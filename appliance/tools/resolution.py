"""How this machine resolves names and where it sends traffic, from its own files: resolv.conf (and
systemd-resolved's copies), nsswitch.conf's hosts line, /etc/hosts, and the kernel's route tables
(/proc/net/route, /proc/net/ipv6_route). No lookup is made and no packet is sent.

The readers take the root they read under, so a test can give them a tree of its own.
"""

from __future__ import annotations

import os
import socket
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Optional

from appliance.tools.base import ok, tool
from appliance.tools.context import ToolContext
from appliance.tools.schema import Doc, MaxLen

FILE_LIMIT = 256 * 1024
HOSTS_SHOWN = 20
RESOLVED_FILES = ("run/systemd/resolve/resolv.conf",)  # the upstream servers behind the 127.0.0.53 stub


def read_text(root: Path, relative: str) -> str | None:
    """The start of a file under `root` (FILE_LIMIT), or None when it cannot be read."""
    try:
        with open(root / relative, encoding="utf-8", errors="replace") as handle:
            return handle.read(FILE_LIMIT)
    except OSError:
        return None


@dataclass
class Resolver:
    """resolv.conf as read: nameservers, search domains, options, and where the file links to."""

    present: bool
    nameservers: list[str] = field(default_factory=list)
    search: list[str] = field(default_factory=list)
    options: list[str] = field(default_factory=list)
    link: str | None = None


def resolver(root: Path, relative: str = "etc/resolv.conf") -> Resolver:
    text = read_text(root, relative)
    if text is None:
        return Resolver(False)
    found = Resolver(True)
    try:
        found.link = os.readlink(root / relative)
    except OSError:
        pass
    for line in text.splitlines():
        words = line.split("#", 1)[0].split(";", 1)[0].split()
        if len(words) < 2:
            continue
        if words[0] == "nameserver":
            found.nameservers.append(words[1])
        elif words[0] in ("search", "domain"):
            found.search += words[1:]
        elif words[0] == "options":
            found.options += words[1:]
    return found


def hosts_line(root: Path) -> str | None:
    """nsswitch.conf's hosts line ("files dns"), or None when there is none (glibc then uses "dns files")."""
    for line in (read_text(root, "etc/nsswitch.conf") or "").splitlines():
        key, _, value = line.split("#", 1)[0].partition(":")
        if key.strip() == "hosts":
            return " ".join(value.split())
    return None


def hosts_entries(root: Path, name: str | None = None) -> list[dict]:
    """/etc/hosts entries (address and names), only those naming `name` when given."""
    rows = []
    for line in (read_text(root, "etc/hosts") or "").splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) < 2:
            continue
        if name is None or name.lower().rstrip(".") in (w.lower().rstrip(".") for w in words[1:]):
            rows.append({"address": words[0], "names": words[1:]})
    return rows


def _ipv4(hex_le: str) -> str:
    return socket.inet_ntoa(struct.pack("<I", int(hex_le, 16)))


def default_routes(proc: Path = Path("/proc")) -> list[dict]:
    """The default routes (IPv4 and IPv6): gateway, interface, metric."""
    routes = []
    for line in (read_text(proc, "net/route") or "").splitlines()[1:]:
        f = line.split()
        if len(f) >= 8 and f[1] == "00000000" and f[7] == "00000000" and int(f[3], 16) & 1:
            routes.append({"family": "ipv4", "gateway": _ipv4(f[2]), "interface": f[0], "metric": int(f[6])})
    for line in (read_text(proc, "net/ipv6_route") or "").splitlines():
        f = line.split()
        if len(f) >= 10 and f[0] == "0" * 32 and f[1] == "00" and f[9] != "lo":
            gateway = socket.inet_ntop(socket.AF_INET6, bytes.fromhex(f[4]))
            routes.append({"family": "ipv6", "gateway": gateway, "interface": f[9], "metric": int(f[5], 16)})
    return routes


def resolution(root: Path = Path("/"), proc: Path = Path("/proc"), name: str | None = None) -> dict:
    """Everything above in one record (what the tool shows and the analyzer judges)."""
    conf = resolver(root)
    data: dict = {
        "resolv_conf": ({"nameservers": conf.nameservers or "none", "search": conf.search, "options": conf.options}
                        if conf.present else "missing: /etc/resolv.conf does not exist or cannot be read"),
    }
    if conf.link:
        data["resolv_conf_links_to"] = conf.link
    for relative in RESOLVED_FILES:
        upstream = resolver(root, relative)
        if upstream.present:
            data["systemd_resolved_upstream"] = upstream.nameservers or "none"
    data["nsswitch_hosts"] = hosts_line(root) or "no hosts line (the default: dns, then files)"
    entries = hosts_entries(root, name)
    if name is not None:
        data[f"hosts_entries_for_{name}"] = entries[:HOSTS_SHOWN] or f"/etc/hosts has no entry for {name}"
    else:
        data["hosts_entries"] = len(entries)
    data["default_routes"] = default_routes(proc) or "none: only directly attached networks are reachable"
    return data


@tool(reads="network", ttl=5.0, timeout=5.0, example={"name": "db.example.com"}, first_for=("name_resolution",))
def name_resolution(
    ctx: ToolContext,
    name: Annotated[Optional[str], MaxLen(253), Doc("a host name to look up in /etc/hosts")] = None,
) -> dict:
    """Nameservers (resolv.conf, systemd-resolved), nsswitch hosts order, /etc/hosts entries for a name, default
    routes. Sends nothing."""
    return ok(resolution(name=name.strip() if name else None))
