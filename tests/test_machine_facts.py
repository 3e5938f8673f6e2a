"""machine_facts against what the machine's own commands and files say: `ip -o addr`, `ip route`,
`hostname`, /etc/resolv.conf, /proc/swaps, /proc/cmdline, /proc/stat's boot time and the kernel's
clock state through another system call (clock_adjtime), with the gateway kept apart from this
machine's addresses."""

from __future__ import annotations

import ctypes
import socket
import subprocess
import time

from appliance.tools.clock import STA_UNSYNC, TIME_ERROR, _Timex
from appliance.tools.redact import redact
from support.tools import check_invariants, registry_for

REGISTRY = registry_for("/tmp", default=True, self_pids=frozenset())


def facts() -> dict:
    outcome = REGISTRY.call("machine_facts", {})
    check_invariants("machine_facts", outcome)
    assert outcome["status"] == "ok", outcome
    return outcome["data"]


def ip(*args: str) -> list[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=True).stdout.splitlines()


def test_addresses_per_interface_match_ip_addr_and_the_gateway_is_not_one_of_them():
    data = facts()
    shown = {row["interface"]: row for row in data["this_machine_addresses"]}
    for line in ip("-o", "addr"):
        words = line.split()
        interface, family, address = words[1], words[2], words[3]
        listed = shown[interface]["ipv4" if family == "inet" else "ipv6"]
        assert address in listed, (address, listed)
    for line in ip("-o", "link"):
        interface = line.split(":")[1].strip().split("@")[0]
        assert shown[interface]["up"] == ("UP" in line.split("<", 1)[1].split(">", 1)[0].split(",")), line
    routes = ip("route", "show", "default")
    mine = {a.split("/")[0] for row in shown.values() for a in (row["ipv4"] if isinstance(row["ipv4"], list) else [])}
    if routes:
        gateway, interface = routes[0].split()[2], routes[0].split()[4]
        assert {"gateway": gateway, "via_interface": interface} in [
            {k: g[k] for k in ("gateway", "via_interface")} for g in data["default_gateway"]]
        assert gateway not in mine and interface in data["default_route_interface"]
        assert f"default gateway {gateway} via {interface}" in data["headline"]
    else:
        assert isinstance(data["default_gateway"], str) and data["default_gateway"].startswith("none")


def test_names_dns_swap_kernel_line_and_boot_time_match_the_machines_own_readings():
    data = facts()
    assert data["hostname"] == socket.gethostname()
    full = subprocess.run(["hostname", "-f"], capture_output=True, text=True).stdout.strip()
    assert data["fqdn"] == full or data["fqdn"].startswith(socket.gethostname())
    servers = [line.split()[1] for line in open("/etc/resolv.conf") if line.startswith("nameserver")]
    assert [s for s in data["dns_servers"] if "(" not in s] == servers
    swaps = open("/proc/swaps").read().splitlines()[1:]
    if swaps:
        assert [row["device"] for row in data["swap_devices"]] == [line.split()[0] for line in swaps]
    else:
        assert data["swap_devices"] == "none"
    assert data["kernel_command_line"] == redact(open("/proc/cmdline").read().strip())[:600]
    btime = next(int(line.split()[1]) for line in open("/proc/stat") if line.startswith("btime"))
    assert data["booted"] == time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(btime))


def test_the_clock_state_matches_clock_adjtime_and_an_unsynchronized_clock_is_a_warning():
    timex = _Timex()
    state = ctypes.CDLL(None, use_errno=True).clock_adjtime(0, ctypes.byref(timex))  # CLOCK_REALTIME, read only
    synchronized = state != TIME_ERROR and not timex.status & STA_UNSYNC
    data = facts()
    flags = {f["kind"]: f for f in data["flags"]}
    assert data["clock"].startswith("synchronized" if synchronized else "not synchronized")
    assert ("clock_unsynchronized" in flags) is (not synchronized)
    if not synchronized:
        assert flags["clock_unsynchronized"]["severity"] == "warning"


def test_users_logged_in_match_who():
    who = [line.split()[0] for line in subprocess.run(["who"], capture_output=True, text=True).stdout.splitlines()]
    listed = facts()["users_logged_in"]
    assert (listed == "nobody") if not who else sorted(u["user"] for u in listed) == sorted(who)[:20]
