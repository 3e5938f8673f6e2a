"""Plants of the `unnamed` split about sockets and a scheduled job, all real and on loopback: a port
two processes listen on at once (and one only one process has), a client connected to a named
server (and the same client connected to nothing), a server listening on IPv6 only, a program
behind a socket file, and a weekly job in /etc/cron.d (tagged, taken out exactly: etc_files.py).
"""

from __future__ import annotations

import socket

from appliance.eval import etc_files
from appliance.eval.fault import SLEEP_FOREVER, Fault, process_name
from appliance.eval.reaper import SandboxError
from appliance.eval.sandbox import Sandbox, short_token
from appliance.eval.scoring import mentions, never_says, no_culprit, whole_number
from appliance.eval.scoring_values import any_of, says_yes

_SHARED = (
    "import socket\n"
    "s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
    "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)\n"
    "s.bind(('127.0.0.1', {port}))\ns.listen(16)\n"
    "ready(s.getsockname()[1])" + SLEEP_FOREVER
)


# -- a port more than one process listens on ----------------------------------------------------------

def _edge(sandbox: Sandbox, port: int = 0) -> tuple[int, str, int]:
    name = process_name("edgeproxy")
    pid, values = sandbox.spawn(name, _SHARED.format(port=port), args=["--workers", "1"])
    return pid, name, int(values[0])


def plant_port_shared(sandbox: Sandbox) -> Fault:
    first, first_name, port = _edge(sandbox)
    second, second_name, _ = _edge(sandbox, port)
    more = ("two processes", "two programs", "2 processes", "both", "two of them", "two different")
    return Fault(sandbox, {"port": port, "pids": [first, second], "names": [first_name, second_name]},
                 [never_says("says one process", ("only one", "just one", "a single process", "a single program")),
                  says_yes("more than one process listens", more)],
                 slots={"port": port}, names=(first_name, second_name))


def control_port_shared(sandbox: Sandbox) -> Fault:
    pid, name, port = _edge(sandbox)
    fine = ("only one", "just one", "a single", "one process", "one program")
    return Fault(sandbox, {"port": port, "pid_listening": pid, "name": name, "fault": None},
                 [no_culprit(fine=fine, asked_pid=pid)], slots={"port": port}, names=(name,))


# -- what a client is connected to ------------------------------------------------------------------------

def _feed(sandbox: Sandbox) -> tuple[int, str, int]:
    name = process_name("pricefeed")
    code = ("import socket\ns = socket.socket()\ns.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
            "s.bind(('127.0.0.1', 0))\ns.listen(8)\nready(s.getsockname()[1])\nheld = []\n"
            "while True:\n    held.append(s.accept()[0])\n")
    pid, values = sandbox.spawn(name, code, args=["--symbols", "eu-equities"])
    return pid, name, int(values[0])


def _ticker(sandbox: Sandbox, port: int | None) -> tuple[int, str]:
    name = process_name("tickerbot")
    connect = f"import socket\nfeed = socket.create_connection(('127.0.0.1', {port}))\n" if port else ""
    pid, _ = sandbox.spawn(name, connect + "ready()" + SLEEP_FOREVER, args=["--interval", "5s"])
    return pid, name


def plant_socket_peer(sandbox: Sandbox) -> Fault:
    feed_pid, feed, port = _feed(sandbox)
    pid, name = _ticker(sandbox, port)
    return Fault(sandbox, {"pid": pid, "name": name, "peer_port": port, "peer": feed, "peer_pid": feed_pid},
                 [any_of(whole_number("port it is connected to", port),
                         mentions("program it is connected to", [feed, "pricefeed"], pid=feed_pid))],
                 slots={"name": name}, names=(name, feed))


def control_socket_peer(sandbox: Sandbox) -> Fault:
    _, feed, _ = _feed(sandbox)
    pid, name = _ticker(sandbox, None)
    fine = ("not connected", "no connections", "no network connections", "isn't connected", "no open connections",
            "no sockets", "not talking")
    return Fault(sandbox, {"pid": pid, "name": name, "fault": None, "decoy": feed},
                 [no_culprit(fine=fine, asked_pid=pid)], slots={"name": name}, names=(name, feed))


# -- a server on IPv6 ---------------------------------------------------------------------------------------

def plant_ipv6_listener(sandbox: Sandbox) -> Fault:
    if not socket.has_ipv6:
        raise SandboxError("this Python has no IPv6: an IPv6 listener cannot be planted")
    name = process_name("mqttbridge")
    code = ("import socket\ns = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)\n"
            "s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)\n"
            "s.bind(('::1', 0))\ns.listen(8)\nready(s.getsockname()[1])" + SLEEP_FOREVER)
    pid, values = sandbox.spawn(name, code, args=["--broker", "local"])
    no_v6 = ("not listening on ipv6", "not on ipv6", "only ipv4", "only on ipv4", "ipv4 only", "no ipv6")
    return Fault(sandbox, {"pid": pid, "name": name, "address": "::1", "port": int(values[0])},
                 [never_says("says it is not on IPv6", no_v6),
                  says_yes("it listens on IPv6", ("::1", "ipv6 loopback", "on ipv6", "over ipv6", "tcp6"))],
                 slots={"name": name}, names=(name,))


# -- the program behind a socket file ------------------------------------------------------------------------

def plant_unix_socket(sandbox: Sandbox) -> Fault:
    path = sandbox.path("run/printspool/spool.sock")
    path.parent.mkdir(parents=True)
    name = process_name("printspool")
    code = (f"import socket\ns = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\ns.bind({str(path)!r})\n"
            "s.listen(4)\nready()" + SLEEP_FOREVER)
    pid, _ = sandbox.spawn(name, code, args=["--queue", "office"])
    return Fault(sandbox, {"pid": pid, "name": name, "path": str(path)},
                 [mentions("program behind the socket", [name, "printspool"], pid=pid)], slots={"path": str(path)},
                 names=(name,))


# -- when a scheduled job runs -------------------------------------------------------------------------------

def plant_job_schedule(sandbox: Sandbox) -> Fault:
    job = f"archive-logs-{short_token()}"
    line = "30 2 * * 0 root /usr/bin/find /var/log/archive -name '*.gz' -mtime +90 -delete"
    path = sandbox.add_etc_file(etc_files.CRON_D, job, f"SHELL=/bin/sh\n{line}\n")
    raw = "30 2 * * 0"
    return Fault(sandbox, {"table": str(path), "schedule": raw, "when": "Sundays at 02:30"},
                 [mentions("time of day it runs", ["2:30", "02:30", "2.30", raw]),
                  mentions("day it runs", ["sunday", raw])], slots={"job": job})
