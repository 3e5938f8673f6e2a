"""Saturation beyond CPU percent, from kernel counters only (the USE method's S and E columns):
tasks in uninterruptible sleep (D) and what the load average is made of, pressure stall information
(PSI), control groups throttled by their CPU quota or hitting their memory limit, and network
errors, drops, TCP retransmits and full listen queues.

Most of these counters are cumulative since boot, so `snapshot()` is taken twice and `Window`
turns the pair into what happened in between. Every reader gives empty data for a counter this
kernel does not have, and says so in `missing`.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Annotated

import psutil

from appliance.tools import units
from appliance.tools.base import ok, tool
from appliance.tools.context import ToolContext
from appliance.tools.procs import own_tree, self_name
from appliance.tools.schema import Doc, Range

MAX_TASKS = 20000  # threads read per snapshot
MAX_GROUPS = 2000
SHOWN = 10
_CGROUP = "/sys/fs/cgroup"
_CPU_V1 = "/sys/fs/cgroup/cpu"
_LISTEN = "0A"


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def keyed(text: str | None) -> dict[str, int]:
    """`key value` lines (cpu.stat, memory.events) as a dict of their integer values."""
    out = {}
    for line in (text or "").splitlines():
        key, _, value = line.partition(" ")
        if value.strip().lstrip("-").isdigit():
            out[key] = int(value)
    return out


def stuck_tasks() -> dict[int, tuple[int, str, str]]:
    """Threads in uninterruptible sleep now: tid -> (pid, name, wait channel)."""
    found: dict[int, tuple[int, str, str]] = {}
    seen = 0
    for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            seen += 1
            if seen > MAX_TASKS:
                return found
            stat = _read(f"/proc/{pid}/task/{tid}/stat")
            if not stat or ")" not in stat:
                continue
            name = stat[stat.find("(") + 1:stat.rfind(")")]
            if stat[stat.rfind(")") + 2:stat.rfind(")") + 3] == "D":
                wchan = (_read(f"/proc/{pid}/task/{tid}/wchan") or "").strip()
                found[int(tid)] = (pid, name, wchan if wchan not in ("", "0") else "?")
    return found


def kernel_thread(pid: int) -> bool:
    """A kernel thread has no command line (older kernels show their idle ones in D)."""
    return not _read(f"/proc/{pid}/cmdline") and os.path.exists(f"/proc/{pid}")


def pressure() -> dict[str, dict[str, float]]:
    """PSI avg10/avg60 of cpu, memory and io ("some" and "full"), for the resources this kernel has."""
    out = {}
    for resource in ("cpu", "memory", "io"):
        text = _read(f"/proc/pressure/{resource}")
        if text is None:
            continue
        row = {}
        for line in text.splitlines():
            kind, *fields = line.split()
            for f in fields:
                key, _, value = f.partition("=")
                if key in ("avg10", "avg60"):
                    row[f"{kind}_{key}"] = float(value)
        out[resource] = row
    return out


@dataclass(frozen=True)
class Group:
    """One control group's CPU quota counters and memory events (cumulative)."""

    periods: int = 0
    throttled: int = 0
    throttled_us: int = 0
    quota: str | None = None  # "0.10 CPU" when it has a quota
    memory_events: tuple[tuple[str, int], ...] = ()


def cpu_quota(directory: str, v2: bool) -> str | None:
    """A group's CPU quota ("0.10 CPU"; cpu.max or cpu.cfs_quota_us), or None when it has none."""
    if v2:
        words = (_read(os.path.join(directory, "cpu.max")) or "max").split()
        if words[0] == "max" or len(words) < 2:
            return None
        return f"{int(words[0]) / int(words[1]):.2f} CPU"
    quota = (_read(os.path.join(directory, "cpu.cfs_quota_us")) or "-1").strip()
    period = (_read(os.path.join(directory, "cpu.cfs_period_us")) or "100000").strip()
    if not quota.lstrip("-").isdigit() or int(quota) <= 0:
        return None
    return f"{int(quota) / max(1, int(period)):.2f} CPU"


def groups() -> dict[str, Group]:
    """Every control group with a CPU quota or memory events, by its path under the hierarchy."""
    v2 = os.path.exists(os.path.join(_CGROUP, "cgroup.controllers"))
    root = _CGROUP if v2 else _CPU_V1
    found: dict[str, Group] = {}
    for count, (directory, _dirs, files) in enumerate(os.walk(root)):
        if count >= MAX_GROUPS:
            break
        name = directory[len(root):] or "/"
        stat = keyed(_read(os.path.join(directory, "cpu.stat"))) if "cpu.stat" in files else {}
        events = keyed(_read(os.path.join(directory, "memory.events"))) if "memory.events" in files else {}
        quota = cpu_quota(directory, v2)
        if quota is None and not any(events.values()):
            continue
        throttled_us = stat.get("throttled_usec", stat.get("throttled_time", 0) // 1000)
        found[name] = Group(stat.get("nr_periods", 0), stat.get("nr_throttled", 0), throttled_us, quota,
                            tuple(sorted(events.items())))
    return found


def group_pids(name: str) -> list[int]:
    v2 = os.path.exists(os.path.join(_CGROUP, "cgroup.controllers"))
    text = _read(os.path.join(_CGROUP if v2 else _CPU_V1, name.lstrip("/"), "cgroup.procs")) or ""
    return [int(p) for p in text.split() if p.isdigit()]


def _table(text: str | None, header: str) -> dict[str, int]:
    """/proc/net/snmp and netstat: a header line and a value line per protocol."""
    lines = [line.split() for line in (text or "").splitlines() if line.startswith(header + ":")]
    if len(lines) < 2:
        return {}
    return {k: int(v) for k, v in zip(lines[0][1:], lines[1][1:]) if v.lstrip("-").isdigit()}


def interface_errors() -> dict[str, dict[str, int]]:
    """/proc/net/dev: received/sent packets, errors and drops per interface."""
    out = {}
    for line in (_read("/proc/net/dev") or "").splitlines()[2:]:
        name, _, rest = line.partition(":")
        f = rest.split()
        if len(f) >= 12:
            out[name.strip()] = {"rx_packets": int(f[1]), "rx_errors": int(f[2]), "rx_drops": int(f[3]),
                                 "tx_packets": int(f[9]), "tx_errors": int(f[10]), "tx_drops": int(f[11])}
    return out


def listen_queues() -> dict[tuple[str, int], int]:
    """TCP listeners: (address, port) -> connections waiting to be accepted (the kernel's
    /proc/net/tcp shows a listener's accept queue as its rx_queue, not the queue's size)."""
    out = {}
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in (_read(path) or "").splitlines()[1:]:
            f = line.split()
            if len(f) < 5 or f[3] != _LISTEN:
                continue
            address, _, port = f[1].rpartition(":")
            out[(address, int(port, 16))] = int(f[4].partition(":")[2], 16)
    return out


@dataclass(frozen=True)
class Snapshot:
    """Every counter above, at one moment."""

    at: float
    stuck: dict[int, tuple[int, str, str]]
    groups: dict[str, Group]
    tcp: dict[str, int]
    udp: dict[str, int]
    tcp_ext: dict[str, int]
    interfaces: dict[str, dict[str, int]]
    queues: dict[tuple[str, int], int]
    running: int = 0
    missing: tuple[str, ...] = field(default=())


def snapshot() -> Snapshot:
    snmp, netstat = _read("/proc/net/snmp"), _read("/proc/net/netstat")
    loadavg = (_read("/proc/loadavg") or "0 0 0 0/0").split()
    missing = tuple(name for name, text in (("/proc/net/snmp", snmp), ("/proc/net/netstat", netstat)) if text is None)
    return Snapshot(time.monotonic(), stuck_tasks(), groups(), _table(snmp, "Tcp"), _table(snmp, "Udp"),
                    _table(netstat, "TcpExt"), interface_errors(), listen_queues(),
                    max(0, int(loadavg[3].split("/")[0]) - 1), missing)


@dataclass(frozen=True)
class Window:
    """Two snapshots: what grew between them."""

    before: Snapshot
    after: Snapshot

    @property
    def seconds(self) -> float:
        return max(self.after.at - self.before.at, 1e-3)

    def stuck(self) -> dict[int, tuple[int, str, str]]:
        """Threads in D at both readings (a moment in D is normal I/O; the whole window is not)."""
        return {tid: info for tid, info in self.after.stuck.items() if tid in self.before.stuck}

    def throttled(self) -> list[dict]:
        """Groups throttled by their quota during the window, most throttled first."""
        rows = []
        for name, now in self.after.groups.items():
            was = self.before.groups.get(name)
            if was is None or now.quota is None:
                continue
            periods, throttled = now.periods - was.periods, now.throttled - was.throttled
            if throttled > 0:
                rows.append({"group": name, "quota": now.quota, "periods": periods, "throttled_periods": throttled,
                             "throttled_percent": units.pct(100.0 * throttled / max(1, periods)),
                             "throttled_ms": round((now.throttled_us - was.throttled_us) / 1000, 1),
                             "throttled_periods_total": now.throttled})
        return sorted(rows, key=lambda r: -r["throttled_periods"])

    def memory_events(self) -> list[dict]:
        """Groups with memory events: hitting memory.max or memory.high, OOM kills (new and total)."""
        rows = []
        for name, now in self.after.groups.items():
            totals = dict(now.memory_events)
            was = dict(self.before.groups[name].memory_events) if name in self.before.groups else {}
            new = {k: v - was.get(k, 0) for k, v in totals.items() if v - was.get(k, 0) > 0}
            if any(totals.get(k) for k in ("max", "oom", "oom_kill", "high")):
                rows.append({"group": name, "since_created": {k: v for k, v in totals.items() if v},
                             "in_window": new or "none"})
        return sorted(rows, key=lambda r: (r["in_window"] == "none", r["group"]))

    def grew(self, before: dict[str, int], after: dict[str, int], key: str) -> int:
        return max(0, after.get(key, 0) - before.get(key, 0))

    def network(self) -> dict:
        """Errors, drops, retransmits and listen overflows in the window (counts and per second)."""
        b, a = self.before, self.after
        out_segs = self.grew(b.tcp, a.tcp, "OutSegs")
        retrans = self.grew(b.tcp, a.tcp, "RetransSegs")
        interfaces = {}
        for name, now in a.interfaces.items():
            was = b.interfaces.get(name, now)
            grown = {k: now[k] - was[k] for k in now if not k.endswith("packets") and now[k] > was[k]}
            if grown:
                interfaces[name] = {k: round(v / self.seconds, 1) for k, v in grown.items()}
        return {
            "tcp_segments_out": out_segs, "tcp_retransmitted": retrans,
            "tcp_retransmit_percent": units.pct(100.0 * retrans / out_segs) if out_segs else 0.0,
            "tcp_in_errors": self.grew(b.tcp, a.tcp, "InErrs"),
            "udp_receive_errors": self.grew(b.udp, a.udp, "InErrors"),
            "udp_buffer_errors": self.grew(b.udp, a.udp, "RcvbufErrors"),
            "listen_overflows": self.grew(b.tcp_ext, a.tcp_ext, "ListenOverflows"),
            "listen_drops": self.grew(b.tcp_ext, a.tcp_ext, "ListenDrops"),
            "interfaces_per_second": interfaces,
        }

    def waiting_queues(self) -> list[tuple[int, int]]:
        """(port, connections waiting) of listeners with connections waiting to be accepted at both
        readings: a program that accepts drains its queue within milliseconds."""
        rows: dict[int, int] = {}
        for key, waiting in self.after.queues.items():
            was = self.before.queues.get(key, 0)
            if waiting and was:
                rows[key[1]] = max(rows.get(key[1], 0), min(waiting, was))
        return sorted(rows.items())


def take(seconds: float) -> Window:
    first = snapshot()
    time.sleep(seconds)
    return Window(first, snapshot())


def _name(pid: int, own: set[int]) -> str | None:
    """A process's name, the appliance's own labelled; None when it is gone."""
    try:
        name = psutil.Process(pid).name()
    except psutil.Error:
        return None
    return self_name(name) if pid in own else name


def port_owners(own: set[int]) -> dict[int, tuple[str, int]]:
    """TCP listening port -> (process name, pid), the appliance's own labelled."""
    owners: dict[int, tuple[str, int]] = {}
    for c in psutil.net_connections("tcp"):
        if c.status == psutil.CONN_LISTEN and c.laddr and c.pid and c.laddr.port not in owners:
            owners[c.laddr.port] = (_name(c.pid, own) or "?", c.pid)
    return owners


def names(pids: list[int], own: set[int]) -> list[str]:
    """"name (pid N)" of the first of `pids` still alive."""
    return [f"{name} (pid {pid})" for pid in pids[:SHOWN] if (name := _name(pid, own)) is not None]


@tool(reads="system", ttl=5.0, timeout=20.0, example={"sample_seconds": 1.0},
      first_for=("stalled_tasks", "cgroup_limits", "network_errors"))
def saturation(
    ctx: ToolContext,
    sample_seconds: Annotated[float, Range(0.3, 5.0), Doc("window for rates")] = 1.0,
) -> dict:
    """Waiting beyond CPU %: D-state tasks, load make-up, PSI, throttled cgroups, cgroup memory events, network
    errors/drops/retransmits, listeners not accepting."""
    window = take(sample_seconds)
    own = own_tree(ctx.self_pids)
    stuck = window.stuck()
    load1, load5, _ = os.getloadavg()
    data: dict = {
        "sample_seconds": round(window.seconds, 2),
        "load": {"1min": round(load1, 2), "5min": round(load5, 2), "cores": psutil.cpu_count() or 1,
                 "running_now": window.after.running, "uninterruptible_now": len(window.after.stuck)},
        "stuck_in_D_whole_window": [
            {"pid": pid, "thread": tid, "name": self_name(name) if pid in own else name, "waiting_in": wchan}
            for tid, (pid, name, wchan) in sorted(stuck.items())[:SHOWN * 2]] or "none",
        "pressure": pressure() or "PSI is not available on this kernel",
    }
    throttled = window.throttled()
    data["cgroups_throttled"] = [dict(row, processes=names(group_pids(row["group"]), own))
                                 for row in throttled[:SHOWN]] or "none in the window"
    data["cgroup_memory_events"] = window.memory_events()[:SHOWN] or "none"
    net = window.network()
    waiting = window.waiting_queues()
    if waiting:
        owners = port_owners(own)
        net["listeners_not_accepting"] = [
            {"port": port, "connections_waiting": count,
             "process": f"{owners[port][0]} (pid {owners[port][1]})" if port in owners else None}
            for port, count in waiting[:SHOWN]]
    data["network_in_window"] = net
    if window.after.missing:
        data["missing"] = list(window.after.missing)
    return ok(data)
