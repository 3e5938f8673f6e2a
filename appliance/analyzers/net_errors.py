"""Network errors the connection counts do not show: interface errors and drops, TCP retransmits,
and listeners that leave connections waiting to be accepted (clients hang, then new connections are
dropped when the queue is full: "it times out sometimes").
From /proc/net/dev, /proc/net/snmp, /proc/net/netstat and /proc/net/tcp over the check's
interval. Thresholds: docs/analyzers.md, `network_errors`.
"""

from __future__ import annotations

from appliance.analyzers.base import OK, WARNING, Analyzer, Finding, beside
from appliance.analyzers.readings import Readings
from appliance.analyzers.saturation_window import window
from appliance.tools import saturation

RETRANSMIT_PERCENT = 5.0  # of the TCP segments sent in the window
MIN_SEGMENTS = 200  # fewer segments: a percentage of a handful is noise
INTERFACE_PER_SECOND = 1.0  # errors or drops per second on one interface


def analyze(readings: Readings) -> list[Finding]:
    win = window(readings)
    net = win.network()
    findings = []
    waiting_queues = win.waiting_queues()
    if waiting_queues:
        own = readings.own()
        owners = saturation.port_owners(own)
        for port, waiting in waiting_queues:
            name, pid = owners.get(port, (None, None))
            if pid in own:
                continue  # the appliance is never a culprit
            findings.append(Finding(
                "network_errors", WARNING,
                f"tcp port {port}" + (f" of {name} (pid {pid})" if name else "") + f": {waiting} connections waited to be "
                f"accepted the whole {win.seconds:.1f} s: the program is not accepting connections, so clients hang "
                f"and time out" + (f"; {net['listen_overflows']} were dropped during the check, its queue is full"
                                   if net["listen_overflows"] else ""),
                {"port": port, "waiting": waiting, **net}, culprit=name or f"tcp port {port}",
                pid=pid))
    if not waiting_queues and net["listen_overflows"]:
        findings.append(Finding("network_errors", WARNING,
                                f"{net['listen_overflows']} connections were dropped during the check because a "
                                f"listener's accept queue was full", net))
    if net["tcp_segments_out"] >= MIN_SEGMENTS and net["tcp_retransmit_percent"] >= RETRANSMIT_PERCENT:
        findings.append(Finding("network_errors", WARNING,
                                f"TCP retransmits {net['tcp_retransmit_percent']:.1f} % of the "
                                f"{net['tcp_segments_out']} segments sent during the check: packets are lost on the "
                                f"way", net))
    for name, rates in net["interfaces_per_second"].items():
        bad = {k: v for k, v in rates.items() if v >= INTERFACE_PER_SECOND}
        if bad:
            findings.append(Finding("network_errors", WARNING,
                                    f"interface {name} has " + ", ".join(f"{v:g} {k.replace('_', ' ')}/s"
                                                                          for k, v in sorted(bad.items())),
                                    dict(net, interface=name), culprit=name))
    if findings:
        return findings
    return [Finding("network_errors", OK,
                    f"no network errors: {net['tcp_retransmitted']} TCP retransmits of {net['tcp_segments_out']} "
                    f"segments, no interface errors or drops growing, no listener leaving connections waiting", net)]


# A port or its connections said to hang or crawl: a listener that leaves connections waiting.
_HANGS = ("hang", "hangs", "hanging", "slow", "sluggish", "laggy", "lag", "waiting", "stuck", "timeouts")
ANALYZER = Analyzer("network_errors", ("packet loss", "dropped", "drops", "retransmit", "retransmits", "retransmitting",
                                       "retransmission", "retransmissions", "dropping packets", "losing packets",
                                       "lost packets", "timeout",
                                       "times out", "timing out", "flaky", "intermittent", "network errors",
                                       "backlog", "slow network")
                    + beside(("port", "connection", "connections", "clients", "connecting"), _HANGS), analyze)
