"""Network interfaces and connections, read from the kernel's tables: no packet is ever sent and
no name is ever resolved (no DNS), so looking at the network never touches it."""

from __future__ import annotations

import socket
import time
from collections import Counter, defaultdict
from typing import Annotated, Any, Literal, Optional

import psutil

from appliance.tools import units
from appliance.tools.base import EMPTY, ok, result, tool
from appliance.tools.context import ToolContext
from appliance.tools.procs import is_root, own_tree, self_name
from appliance.tools.schema import Doc, Range


@tool(reads="network", ttl=3.0, timeout=12.0, example={"sample_seconds": 1.0})
def network_interfaces(
    ctx: ToolContext,
    sample_seconds: Annotated[float, Range(0.2, 5.0), Doc("sampling interval")] = 1.0,
) -> dict:
    """Each network interface: up/down, addresses, speed, MTU, receive/send rates over an interval, errors and drops.
    Use for "no network", "slow network", "which IP do I have"."""
    before = psutil.net_io_counters(pernic=True)
    started = time.monotonic()
    time.sleep(sample_seconds)
    after = psutil.net_io_counters(pernic=True)
    elapsed = max(time.monotonic() - started, 1e-3)
    stats = psutil.net_if_stats()
    addrs = psutil.net_if_addrs()
    rows = []
    for name in sorted(set(stats) | set(after)):
        st = stats.get(name)
        now, was = after.get(name), before.get(name)
        row = {
            "interface": name,
            "up": bool(st and st.isup),
            "addresses": [address_text(a) for a in addrs.get(name, []) if a.family in (socket.AF_INET, socket.AF_INET6)],
        }
        if st:
            row["speed_mbps"] = st.speed or None
            row["mtu"] = st.mtu
        if now and was:
            row["receive"] = units.rate(max(0, now.bytes_recv - was.bytes_recv) / elapsed)
            row["send"] = units.rate(max(0, now.bytes_sent - was.bytes_sent) / elapsed)
            row["received_total"] = units.size(now.bytes_recv)
            row["sent_total"] = units.size(now.bytes_sent)
            problems = {"errors_in": now.errin, "errors_out": now.errout, "drops_in": now.dropin, "drops_out": now.dropout}
            row["errors_and_drops"] = {k: v for k, v in problems.items() if v} or "none"
        rows.append(row)
    rows.sort(key=lambda r: (not r["up"], r["interface"] == "lo", r["interface"]))
    if not rows:
        return result(EMPTY, {"interfaces": []}, "no network interfaces are visible")
    return ok({"sample_seconds": round(elapsed, 2), "interfaces": rows})


def address_text(addr: Any) -> str:
    """An interface address as `ip addr` writes it: 192.0.2.2/24, fe80::1/64 (no zone suffix)."""
    return addr.address.split("%")[0] + (f"/{prefix_length(addr.netmask)}" if addr.netmask else "")


def prefix_length(netmask: str) -> int | str:
    try:
        if ":" in netmask:
            return bin(int.from_bytes(socket.inet_pton(socket.AF_INET6, netmask), "big")).count("1")
        return bin(int.from_bytes(socket.inet_aton(netmask), "big")).count("1")
    except (OSError, ValueError):
        return netmask


def _owner(pid: int | None, names: dict[int, str], own: set[int]) -> str | None:
    if not pid:
        return None
    if pid not in names:
        try:
            names[pid] = psutil.Process(pid).name()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            names[pid] = "?"
    return f"{self_name(names[pid]) if pid in own else names[pid]} (pid {pid})"


@tool(reads="network", ttl=5.0, timeout=10.0, example={"kind": "tcp", "state": "listen"},
      first_for=("listening", "connections"))
def network_connections(
    ctx: ToolContext,
    kind: Annotated[Literal["tcp", "udp", "all"], Doc("protocol")] = "all",
    state: Annotated[Literal["listen", "established", "all"], Doc("which sockets")] = "all",
    port: Annotated[Optional[int], Range(1, 65535), Doc("only this local or remote port")] = None,
) -> dict:
    """Listening TCP/UDP ports with the process (name and pid) that owns each, and established connections grouped by remote address.
    Use for "what is listening on port X", "who is connected", "port already in use"; when the question names a port, pass it as port."""
    conns = psutil.net_connections({"tcp": "tcp", "udp": "udp", "all": "inet"}[kind])
    found = _sort_sockets(conns, state, port, own_tree(ctx.self_pids))
    found.listening.sort(key=lambda r: (r["port"], r["proto"], r["address"]))
    unique = list({(r["proto"], r["address"], r["port"]): r for r in found.listening}.values())
    established = sorted(
        ({"remote": addr, "connections": g["connections"], "local_ports": sorted(g["local_ports"])[:5],
          "processes": sorted(g["processes"])[:5]} for addr, g in found.remote.items()),
        key=lambda r: -r["connections"],
    )
    data: dict = {}
    if port is not None and state in ("listen", "all"):
        # the answer to "what listens on port X" first, on its own line
        owners = sorted({r["process"] or "an unknown process" for r in unique if r["port"] == port})
        data["headline"] = (f"port {port} is listened on by: {', '.join(owners)}" if owners
                            else f"port {port}: no process listens on it")
    if state in ("listen", "all"):
        data["listening"] = unique[:60]
    if state in ("established", "all"):
        data["established_by_remote"] = established[:30]
    if found.other_states:
        data["other_states"] = dict(sorted(found.other_states.items()))
    if found.unknown_owner:
        data["note"] = _ownerless_note(found.unknown_owner)
    if not unique and not established and not found.other_states:
        if port is not None or state != "all" or kind != "all":
            # "nothing matched" alone reads as "nothing is there": say what there is without the filters
            data = {"without_filters": _unfiltered(port, own_tree(ctx.self_pids)), **data}
        return result(EMPTY, data, "no matching sockets" + (f" on port {port}" if port else ""))
    return ok(data)


def _unfiltered(port: int | None, own: set[int]) -> str:
    """One line on every socket of the machine: who listens on `port`, how many ports listen and
    connections are established, and the process with the most of them."""
    everything = _sort_sockets(psutil.net_connections("inet"), "all", None, own)
    parts = []
    if port is not None:
        owners = sorted({r["process"] or "an unknown process" for r in everything.listening if r["port"] == port})
        parts.append(f"port {port} is listened on by: {', '.join(owners)}" if owners
                     else f"no process listens on port {port}")
    listening = len({(r["proto"], r["port"]) for r in everything.listening})
    established = sum(g["connections"] for g in everything.remote.values())
    text = f"{listening} listening ports and {established} established connections on all ports"
    if everything.by_process:
        name, count = everything.by_process.most_common(1)[0]
        text += f"; the most connections: {name}, {count}"
    return "; ".join(parts + [text])


class _Sockets:
    """The sockets that match, sorted into listening ones, established ones grouped by remote
    address, counts of the other states, and how many have no visible owner."""

    def __init__(self) -> None:
        self.listening: list[dict] = []
        self.remote: dict[str, dict] = defaultdict(lambda: {"connections": 0, "local_ports": set(), "processes": set()})
        self.other_states: dict[str, int] = defaultdict(int)
        self.unknown_owner = 0
        self.by_process: Counter[str] = Counter()  # established connections per owning process


def _sort_sockets(conns: list, state: str, port: int | None, own: set[int]) -> _Sockets:
    found = _Sockets()
    names: dict[int, str] = {}
    for c in conns:
        lport = c.laddr.port if c.laddr else None
        rport = c.raddr.port if c.raddr else None
        if port is not None and port not in (lport, rport):
            continue
        proto = "tcp" if c.type == socket.SOCK_STREAM else "udp"
        is_listen = c.status == psutil.CONN_LISTEN or (proto == "udp" and not c.raddr)
        if c.pid is None:
            found.unknown_owner += 1
        if is_listen and state in ("listen", "all"):
            found.listening.append({"proto": proto, "address": c.laddr.ip if c.laddr else "", "port": lport,
                                    "process": _owner(c.pid, names, own)})
        elif c.status == psutil.CONN_ESTABLISHED and state in ("established", "all"):
            group = found.remote[f"{c.raddr.ip if c.raddr else ''}:{rport}"]
            group["connections"] += 1
            group["local_ports"].add(lport)
            owner = _owner(c.pid, names, own)
            if owner:
                group["processes"].add(owner)
                found.by_process[owner] += 1
        elif not is_listen and state == "all":
            found.other_states[c.status] += 1
    return found


def _ownerless_note(unknown_owner: int) -> str:
    return f"{unknown_owner} socket{'s' if unknown_owner != 1 else ''} without a visible owner" + (
        "" if is_root() else " (not running as root: other users' processes are hidden)"
    ) + (" or belong to another network namespace/container" if is_root() else "")
