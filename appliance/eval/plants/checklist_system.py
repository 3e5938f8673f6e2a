"""Plants of the checklist's system side, all real: a listener bound to loopback only (and one on all
interfaces), a busy process held back by a control group's CPU quota, a listener that never accepts
the loopback connections queued at it, and a process stuck in uninterruptible sleep (a parent
waiting in vfork for a child that sleeps). Each control is the same place in good health.

A host name pinned in /etc/hosts and a cron table are planted in checklist_names.py (tagged lines and
files in /etc, taken out exactly). What cannot be planted without changing the host itself: a
broken resolver or route (the machine's one resolv.conf and route table, which the evaluation uses
too), systemd timers (no systemd here), interface errors and TCP retransmits (they need a lossy
link).
"""

from __future__ import annotations

import os
import platform
import subprocess

from appliance.eval.fault import SLEEP_FOREVER, Fault, process_name, wait_state
from appliance.eval.reaper import SandboxError
from appliance.eval.sandbox import Sandbox
from appliance.eval.scoring import mentions, never_says, no_culprit
from appliance.tools import facts

_LISTEN = (
    "import socket\n"
    "s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n"
    "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
    "s.bind(({address!r}, 0))\ns.listen({backlog})\n"
)
_SERVE = "ready(s.getsockname()[1])\nwhile True:\n    conn, _ = s.accept()\n    conn.close()\n"


# -- reach ---------------------------------------------------------------------------------------

def _listener(sandbox: Sandbox, address: str) -> tuple[int, str, int]:
    name = process_name("kioskweb")
    pid, values = sandbox.spawn(name, _LISTEN.format(address=address, backlog=64) + _SERVE,
                                args=["--bind", address])
    return pid, name, int(values[0])


def plant_reach(sandbox: Sandbox) -> Fault:
    pid, name, port = _listener(sandbox, "127.0.0.1")
    return Fault(sandbox, {"pid": pid, "name": name, "port": port, "address": "127.0.0.1"},
                 [mentions("loopback-only address", ["127.0.0.1", "loopback", "localhost"])],
                 slots={"port": port}, names=(name,))


def control_reach(sandbox: Sandbox) -> Fault:
    pid, name, port = _listener(sandbox, "0.0.0.0")
    fine = ("all interfaces", "0.0.0.0", "every interface", "any address", "all addresses", "reachable",
            "can reach", "can connect", "able to reach", "able to connect")
    # The question is about this very service: naming it (and its pid) while saying it is reachable
    # is right; saying other machines cannot reach it is wrong, whatever else the answer says.
    unreachable = ("not be able to", "cannot connect", "can't connect", "cannot reach", "can't reach",
                   "not reachable", "unreachable", "only this machine", "only from this machine", "loopback only",
                   "only on loopback", "only locally")
    return Fault(sandbox, {"port": port, "fault": None, "decoy": name, "decoy_pid": pid},
                 [never_says("says it is unreachable", unreachable), no_culprit(fine=fine, asked_pid=pid)],
                 slots={"port": port}, names=(name,))


# -- cgroup CPU throttling ---------------------------------------------------------------------------

def _in_quota(sandbox: Sandbox, busy: bool) -> tuple[int, str]:
    name = process_name("thumbjob")
    group = sandbox.cpu_group(0.05)
    code = "ready()\n" + ("while True:\n    pass\n" if busy else SLEEP_FOREVER)
    # ready() is answered before the loop starts, so the process joins its group before it works.
    pid, _ = sandbox.spawn(name, code, args=["--workers", "1"])
    sandbox.join_group(group, pid)
    return pid, name


def plant_cgroup_limits(sandbox: Sandbox) -> Fault:
    pid, name = _in_quota(sandbox, busy=True)
    return Fault(sandbox, {"pid": pid, "name": name, "quota": "0.05 CPU"},
                 [mentions("throttled process", [name, "thumbjob"], pid=pid),
                  mentions("cause", ["throttl", "quota", "cgroup", "control group", "limit"])], names=(name,))


def control_cgroup_limits(sandbox: Sandbox) -> Fault:
    pid, name = _in_quota(sandbox, busy=False)
    return Fault(sandbox, {"fault": None, "decoy": name, "decoy_pid": pid},
                 [no_culprit(decoys=[name, "thumbjob"])], names=(name,))


# -- a listener that does not accept ---------------------------------------------------------------

def _queued(sandbox: Sandbox, accepting: bool) -> tuple[int, str, int]:
    name = process_name("quoteapi")
    code = _LISTEN.format(address="127.0.0.1", backlog=1) + (
        "port = s.getsockname()[1]\nclients = []\n"
        "for _ in range(4):\n"
        "    c = socket.socket()\n    c.setblocking(False)\n    c.connect_ex(('127.0.0.1', port))\n"
        "    clients.append(c)\n"
    ) + (_SERVE.replace("ready(s.getsockname()[1])", "ready(port)") if accepting
         else "ready(port)" + SLEEP_FOREVER)
    pid, values = sandbox.spawn(name, code, args=["--port", "auto"])
    return pid, name, int(values[0])


def plant_network_errors(sandbox: Sandbox) -> Fault:
    pid, name, port = _queued(sandbox, accepting=False)
    return Fault(sandbox, {"pid": pid, "name": name, "port": port},
                 [mentions("process that does not accept", [name, "quoteapi"], pid=pid)],
                 slots={"port": port}, names=(name,))


def control_network_errors(sandbox: Sandbox) -> Fault:
    pid, name, port = _queued(sandbox, accepting=True)
    # "all of them take their connections" says it as plainly as "nothing is wrong"
    fine = ("taking their connections", "taking its connections", "take their connections", "takes its connections",
            "accepting their connections", "accepting its connections", "accept their connections",
            "accepts its connections", "are accepting", "is accepting", "not piling up", "nothing is piling up",
            "no connections are piling up", "none are piling up")
    return Fault(sandbox, {"fault": None, "decoy": name, "decoy_pid": pid, "port": port},
                 [no_culprit(decoys=[name, "quoteapi"], fine=fine)], slots={"port": port}, names=(name,))


# -- uninterruptible sleep ------------------------------------------------------------------------

_VFORK_WAIT = r"""
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
int main(int argc, char **argv) {
    pid_t watch = (pid_t)atoi(argv[1]);
    long left = atol(argv[2]) * 4;
    if (vfork() == 0) {
        while (left-- > 0 && kill(watch, 0) == 0) usleep(250000);
        _exit(0);
    }
    return 0;
}
"""


def _compiled(sandbox: Sandbox, name: str) -> str:
    """A tiny C program, named `name`, whose parent waits in vfork (state D) while its child sleeps;
    the child exits when the evaluator is gone or after the sandbox's time."""
    folder = sandbox.bin_dir / "c"  # beside, not in, the interpreter links named like processes
    folder.mkdir(exist_ok=True)
    source = folder / f"{name}.c"
    binary = folder / name
    source.write_text(_VFORK_WAIT)
    compiler = next((p for p in ("/usr/bin/cc", "/usr/bin/gcc") if os.access(p, os.X_OK)), None)
    if compiler is None:
        raise SandboxError("no C compiler: a task in uninterruptible sleep cannot be planted here")
    subprocess.run([compiler, "-O1", "-o", str(binary), str(source)], check=True, capture_output=True, timeout=60)
    return str(binary)


def plant_stalled_tasks(sandbox: Sandbox) -> Fault:
    name = process_name("nfsbackup")
    binary = _compiled(sandbox, name)
    code = f"ready()\nos.execv({binary!r}, [{binary!r}, '{os.getpid()}', '{int(sandbox.max_seconds)}'])\n"
    pid, _ = sandbox.spawn(name, code, args=["--target", "archive"])
    wait_state(pid, "D")
    return Fault(sandbox, {"pid": pid, "name": name},
                 [mentions("stuck process", [name, "nfsbackup"], pid=pid),
                  mentions("cause", ["uninterruptible", "D state", "state D", "(D)", "D (", "stuck", "waiting",
                                     "blocked"])], names=(name,))


def control_stalled_tasks(sandbox: Sandbox) -> Fault:
    name = process_name("nfsbackup")
    pid, _ = sandbox.spawn(name, "ready()" + SLEEP_FOREVER, args=["--target", "archive"])
    return Fault(sandbox, {"fault": None, "decoy": name, "decoy_pid": pid},
                 [no_culprit(decoys=[name, "nfsbackup"])], names=(name,))


# -- system facts (no fault) -----------------------------------------------------------------------

def plant_system_facts(sandbox: Sandbox) -> Fault:
    """No fault: the truth is this machine's kernel release and what it runs on."""
    release = platform.release()
    box, vm = facts.container(), facts.virtual_machine()
    words = (["container", box] if box else []) + (["virtual machine", "VM", vm] if vm else [])
    return Fault(sandbox, {"kernel": release, "virtualization": facts.virtualization()},
                 [mentions("kernel release", [release]),
                  mentions("virtualization", [w for w in words if w] or ["bare metal", "physical"])])
