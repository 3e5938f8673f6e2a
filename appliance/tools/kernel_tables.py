"""Whether a firewall listing can run without changing the kernel.

Why: listing rules is not always a read. With the legacy backend, `iptables -S` (and `ip6tables -S`)
makes the kernel load the ip_tables (ip6_tables) module and create the filter table when they are
not there yet; `nft list ruleset` (and iptables' nf_tables backend) may load nf_tables. A read-only
tool must leave the kernel as it found it, so a listing runs only when its tables already exist:

- legacy iptables: /proc/net/ip_tables_names (ip6_tables_names for ip6tables) lists a table;
- nft, and iptables on the nf_tables backend: the nf_tables module is present (/sys/module/nf_tables).

Which backend an iptables binary uses is read from where its link points (xtables-nft-multi or
xtables-legacy-multi, usually through /etc/alternatives), never by running it. The paths are
module-level so a test can point them at a tree of its own.
"""

from __future__ import annotations

import os
from pathlib import Path

from appliance.tools.runner import find_program

PROC_NET = Path("/proc/net")
SYS_MODULE = Path("/sys/module")
_LEGACY_TABLES = {"iptables": "ip_tables_names", "ip6tables": "ip6_tables_names"}
_NOUN = {"iptables": "iptables", "ip6tables": "ip6tables", "nft": "nftables"}


def _tables(name: str) -> list[str]:
    try:
        return (PROC_NET / name).read_text(encoding="utf-8", errors="replace").split()
    except OSError:
        return []


def nf_tables_loaded() -> bool:
    return (SYS_MODULE / "nf_tables").is_dir()


def backend(program: str, path: str | None = None) -> str:
    """"nft" or "legacy" for iptables and ip6tables (by the binary's link target); "nft" for nft."""
    if program == "nft":
        return "nft"
    path = path if path is not None else find_program(program)
    target = os.path.basename(os.path.realpath(path)) if path else ""
    return "nft" if "nft" in target else "legacy"


def not_loaded(program: str, path: str | None = None) -> str | None:
    """None when listing `program`'s rules reads tables that already exist; otherwise the plain
    reason it is not run ("no iptables rules loaded in the kernel ...")."""
    if program not in _NOUN:
        return None
    if backend(program, path) == "nft":
        if nf_tables_loaded():
            return None
        return (f"no {_NOUN[program]} rules loaded in the kernel (the nf_tables module is not loaded): "
                f"not listed, since listing would load it")
    if _tables(_LEGACY_TABLES[program]):
        return None
    return (f"no {_NOUN[program]} rules loaded in the kernel (no table in /proc/net/{_LEGACY_TABLES[program]}): "
            f"not listed, since listing would load the module")
