"""What a listening address means for who can connect, and what firewall rules this machine shows.

A socket bound to 127.0.0.1 or ::1 answers only programs on this machine; one bound to 0.0.0.0 or ::
answers on every address of the machine; one bound to a single address answers only there. That is
the usual answer to "it works here but not from other machines". Firewall rules are read through
the read-only allow-list (`nft list ruleset`, `iptables -S`, `ip6tables -S`), each only when its
kernel tables already exist (a listing could load a module otherwise: tools/kernel_tables.py);
nothing is sent.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Annotated, Optional

import psutil

from appliance.tools.base import EMPTY, ok, result, tool
from appliance.tools.commands import run_allowed
from appliance.tools.context import ToolContext
from appliance.tools.kernel_tables import not_loaded
from appliance.tools.network import _sort_sockets
from appliance.tools.procs import is_root, own_tree
from appliance.tools.runner import find_program
from appliance.tools.schema import Doc, Range

LOOPBACK = "loopback only"
EVERYWHERE = "all interfaces"
ONE_ADDRESS = "one address"
FIREWALL_COMMANDS = ("nft list ruleset", "iptables -S", "ip6tables -S")
RULES_SHOWN = 40
_BLOCKING = re.compile(r"\b(drop|reject|DROP|REJECT)\b")


def scope(address: str) -> str:
    """LOOPBACK, EVERYWHERE or ONE_ADDRESS for a socket's local address ("" and "*" are everywhere)."""
    text = address.split("%", 1)[0].strip("[]")
    if text in ("", "*"):
        return EVERYWHERE
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return ONE_ADDRESS
    mapped = getattr(ip, "ipv4_mapped", None)
    ip = mapped or ip
    if ip.is_unspecified:
        return EVERYWHERE
    return LOOPBACK if ip.is_loopback else ONE_ADDRESS


def meaning(address: str) -> str:
    """What the address means for another machine, in plain words."""
    where = scope(address)
    if where == LOOPBACK:
        return f"{LOOPBACK} ({address}): only programs on this machine can connect; other machines cannot reach it"
    if where == EVERYWHERE:
        return (f"{EVERYWHERE} ({address or '*'}): other machines can connect to any address of this machine, "
                f"unless a firewall blocks the port")
    return f"{ONE_ADDRESS} ({address}): other machines can connect only to {address}"


@dataclass
class Firewall:
    """What the firewall listings showed: which commands could be read, their rule lines, and why
    none could be (not installed, no tables in the kernel, not root, an error)."""

    read_with: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    unloaded: list[str] = field(default_factory=list)  # installed, but no rules loaded in the kernel

    @property
    def readable(self) -> bool:
        return bool(self.read_with)

    def blocking(self) -> list[str]:
        """Rules and chain policies that drop or reject traffic."""
        return [r for r in self.rules if _BLOCKING.search(r)]

    def naming_port(self, port: int) -> list[str]:
        pattern = re.compile(rf"(?:dport|port|dports)\s+(?:\{{[^}}]*\b)?{port}\b")
        return [r for r in self.rules if pattern.search(r)]

    def summary(self) -> str:
        if not self.readable:
            others = [p for p in self.problems if p not in self.unloaded and not p.endswith("is not installed")]
            if self.unloaded and not others:  # what is installed has no tables in the kernel
                return "no firewall rules loaded in the kernel: " + "; ".join(self.problems)
            return "no firewall rules can be read here: " + "; ".join(self.problems)
        blocking = self.blocking()
        return (f"{len(self.rules)} firewall rule lines ({', '.join(self.read_with)}), "
                f"{len(blocking)} of them drop or reject traffic")


def read_firewall(timeout: float = 5.0) -> Firewall:
    """The rules of every firewall listing this machine has (each command on the allow-list), run
    only when its tables already exist in the kernel."""
    found = Firewall()
    for command in FIREWALL_COMMANDS:
        program = command.split()[0]
        path = find_program(program)
        if path is None:
            found.problems.append(f"{program} is not installed")
            continue
        unloaded = not_loaded(program, path)
        if unloaded is not None:
            found.problems.append(unloaded)
            found.unloaded.append(unloaded)
            continue
        ran = run_allowed(command, timeout)
        if ran is None:
            found.problems.append(f"{program} is not installed")
            continue
        lines = [" ".join(line.split()) for line in ran.output.splitlines() if line.strip()]
        if ran.exit_code != 0:
            why = lines[0] if lines else f"exit code {ran.exit_code}"
            found.problems.append(f"{program} failed ({why[:120]})" + ("" if is_root() else "; not running as root"))
            continue
        found.read_with.append(command)
        found.rules += [line for line in lines if not line.startswith(("table", "}", "#")) and line != "{"]
    if not found.readable and not found.problems:
        found.problems.append("no firewall tool answered")
    return found


def _listeners(own: set[int], port: int | None) -> list[dict]:
    """The listening sockets (network_connections' own reading), each with what its address means."""
    found = _sort_sockets(psutil.net_connections("inet"), "listen", port, own).listening
    rows = {(r["proto"], r["address"], r["port"]): dict(r, reach=meaning(r["address"])) for r in found}
    return sorted(rows.values(), key=lambda r: (r["port"], r["proto"], r["address"]))


@tool(reads="network", ttl=5.0, timeout=15.0, example={"port": 8080}, first_for=("reach",),
      also_for=("listening",))
def listening_reach(
    ctx: ToolContext,
    port: Annotated[Optional[int], Range(1, 65535), Doc("only this port")] = None,
) -> dict:
    """Who can reach each listening port (loopback only, all interfaces, one address) and the firewall rules.
    For "works here but not from other machines"."""
    rows = _listeners(own_tree(ctx.self_pids), port)
    wall = read_firewall(min(5.0, ctx.command_timeout))
    data: dict = {}
    if port is not None:
        scopes = sorted({scope(r["address"]) for r in rows})
        data["headline"] = (f"port {port} listens on {', '.join(scopes)}: " + "; ".join(r["reach"] for r in rows)
                            if rows else f"nothing listens on port {port}: no machine can connect to it")
    data["listening"] = rows[:60]
    data["firewall"] = wall.summary()
    shown = wall.naming_port(port) if port is not None else wall.blocking()
    if shown:
        data["firewall_rules" + (f"_naming_port_{port}" if port is not None else "_that_block")] = shown[:RULES_SHOWN]
    if not rows:
        return result(EMPTY, data, f"nothing listens on port {port}" if port else "no process listens on any port")
    return ok(data)
