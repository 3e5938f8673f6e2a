"""Faults of one named process, program or machine (issue 52): a process stopped by SIGSTOP, a job
pinned to one CPU with sched_setaffinity, a process writing to one file among those it holds open,
a program that is not installed, and this machine's own address. Each control is the same thing in
good health (the same process running, unpinned, holding files for reading only; a program that is
installed; the address asked in other words).

The stopped process cannot watch the evaluator while it is stopped: the reaper wakes it (SIGCONT)
when the evaluator is gone, and it exits (appliance/eval/reaper.py).
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import signal
import socket
import struct
import subprocess
from pathlib import Path

import psutil

from appliance.eval.fault import SLEEP_FOREVER, Fault, process_name, wait_state
from appliance.eval.reaper import SandboxError
from appliance.eval.sandbox import Sandbox
from appliance.eval.scoring import Outcome, mentions, never_says, no_culprit, says_no_fault
from appliance.eval.scoring_values import names_address, says_yes

# -- a process stopped by a signal ----------------------------------------------------------------

def _worker(sandbox: Sandbox) -> tuple[int, str]:
    name = process_name("jobrunner")
    code = "ready()\nwhile True:\n    time.sleep(0.2)\n"  # polls its queue five times a second
    pid, _ = sandbox.spawn(name, code, args=["--queue", "invoices", "--poll", "0.2"])
    return pid, name


def plant_stopped_process(sandbox: Sandbox) -> Fault:
    pid, name = _worker(sandbox)
    os.kill(pid, signal.SIGSTOP)
    wait_state(pid, "T")
    words = ("stopped", "sigstop", "suspended", "paused", "state t", "sigcont", "kill -cont")
    return Fault(sandbox, {"pid": pid, "name": name, "state": "stopped"},
                 [mentions("stopped state", words)], slots={"pid": pid, "name": name}, names=(name,))


def control_stopped_process(sandbox: Sandbox) -> Fault:
    pid, name = _worker(sandbox)
    said_stopped = ("is stopped", "was stopped", "been stopped", "by sigstop", "is suspended", "is paused",
                    "not running")
    fine = ("running", "sleeping", "alive", "not stopped", "healthy", "responsive", "working normally")
    return Fault(sandbox, {"fault": None, "pid": pid, "name": name, "state": "sleeping"},
                 [never_says("says it is stopped", said_stopped), no_culprit(fine=fine, asked_pid=pid)],
                 slots={"pid": pid, "name": name}, names=(name,))


# -- a job pinned to one CPU ----------------------------------------------------------------------

# Each thread hashes (hashlib lets go of the interpreter lock on big buffers, so threads run in
# parallel) for 50 ms, then rests 50 ms: unpinned, the job's threads take half a core each, about one
# core in all; pinned, they all share one core and ask for more than it has.
_HASHING = (
    "import hashlib\ndata = b'\\0' * (1 << 20)\n"
    "def work():\n"
    "    while True:\n"
    "        end = time.monotonic() + 0.05\n"
    "        while time.monotonic() < end:\n"
    "            hashlib.sha256(data).digest()\n"
    "        time.sleep(0.05)\n"
    "for _ in range({threads}):\n    threading.Thread(target=work, daemon=True).start()\n"
    "ready()" + SLEEP_FOREVER
)


def machine_cpus() -> list[int]:
    """The CPUs a process here may run on (the evaluator's own set, which a new process inherits)."""
    return sorted(os.sched_getaffinity(0))


def _job(sandbox: Sandbox, pinned_to: int | None) -> tuple[int, str, list[int]]:
    cpus = machine_cpus()
    if len(cpus) < 2:
        raise SandboxError("this machine has one CPU: a job pinned to one of them is no different")
    # every thread, the evaluator watch started before this code too (what `taskset -a -p` does)
    pin = (f"for task in os.listdir('/proc/self/task'):\n    os.sched_setaffinity(int(task), {{{pinned_to}}})\n"
           if pinned_to is not None else "")
    name = process_name("renderjob")
    pid, _ = sandbox.spawn(name, pin + _HASHING.format(threads=min(4, len(cpus))), args=["--frames", "1-240"])
    return pid, name, cpus


def plant_cpu_pinned(sandbox: Sandbox) -> Fault:
    first = machine_cpus()[0]
    pid, name, cpus = _job(sandbox, pinned_to=first)
    words = ("affinity", "pinned", "taskset", "only allowed", "allowed to run on", "allowed only", "restricted to",
             "bound to cpu", "bound to core", f"cpu {first}", f"core {first}", f"cpu{first}", "cpus_allowed",
             "cpu list")
    return Fault(sandbox, {"pid": pid, "name": name, "allowed_cpus": [first], "machine_cpus": cpus},
                 [mentions("CPU it is pinned to", words)], slots={"pid": pid, "name": name}, names=(name,))


def control_cpu_pinned(sandbox: Sandbox) -> Fault:
    pid, name, cpus = _job(sandbox, pinned_to=None)
    count, last = len(cpus), cpus[-1]
    fine = ("all cpus", "all cores", "all the cpus", "all the cores", "all of the", f"all {count}", "both cpus",
            "both cores", "every cpu", "every core", "any cpu", "any core", "any of the", "not pinned",
            "not restricted", "not limited", "no affinity", f"{cpus[0]}-{last}", f"{count} cpus", f"{count} cores")
    pinned = ("is pinned to", "restricted to cpu", "restricted to core", "only allowed on cpu",
              "only allowed to run on cpu", "can only run on cpu", "can only use cpu", "can only use core")
    return Fault(sandbox, {"fault": None, "pid": pid, "name": name, "allowed_cpus": cpus, "machine_cpus": cpus},
                 [never_says("says it is pinned", pinned), no_culprit(fine=fine, asked_pid=pid)],
                 slots={"pid": pid, "name": name}, names=(name,))


# -- which file a process writes to ---------------------------------------------------------------

def _exporter(sandbox: Sandbox, *, writes: bool) -> tuple[int, str, Path, list[Path]]:
    """An exporter that holds its configuration and a reference table open for reading and, when it
    `writes`, appends a row to this month's export twice a second."""
    conf = sandbox.write("etc/exportd/exportd.conf", "source = orders\nformat = csv\nflush_seconds = 0.5\n")
    table = sandbox.write("data/reference/customers.csv", "id,name\n" + "".join(f"{i},customer {i}\n" for i in range(200)))
    export = sandbox.write("data/exports/orders-2024-06.csv", "order,customer,amount\n")
    code = f"conf = open({str(conf)!r})\ntable = open({str(table)!r})\n"
    if writes:
        code += (f"out = open({str(export)!r}, 'a')\nready()\nrow = 0\nwhile True:\n"
                 "    out.write(f'{row},{row % 200},{row * 7 % 500}.00\\n'); out.flush(); row += 1\n"
                 "    time.sleep(0.5)\n")
    else:
        code += "ready()\nwhile True:\n    table.seek(0); table.read()\n    time.sleep(0.5)\n"
    name = process_name("exportd")
    pid, _ = sandbox.spawn(name, code, args=["--config", str(conf)])
    return pid, name, export, [conf, table]


def plant_writing_to(sandbox: Sandbox) -> Fault:
    pid, name, export, read = _exporter(sandbox, writes=True)
    return Fault(sandbox, {"pid": pid, "name": name, "path": str(export), "reading": [str(p) for p in read]},
                 [mentions("file it writes to", [export.name])], slots={"pid": pid, "name": name}, names=(name,))


def control_writing_to(sandbox: Sandbox) -> Fault:
    pid, name, export, read = _exporter(sandbox, writes=False)
    fine = ("only reading", "only reads", "read-only", "read only", "for reading", "not writing", "isn't writing",
            "no file open for writing", "nothing open for writing", "not changing", "isn't changing")
    return Fault(sandbox, {"fault": None, "pid": pid, "name": name, "reading": [str(p) for p in read]},
                 [no_culprit(decoys=[p.name for p in read], fine=fine, asked_pid=pid)],
                 slots={"pid": pid, "name": name}, names=(name,))


# -- whether a program is installed ---------------------------------------------------------------

_SEARCH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_MADE_UP = ("logsift", "snapvault", "pgrelayd", "certwarden", "dirsyncd")  # plausible, in no distribution
_PRESENT = ("curl", "git", "openssl", "make", "rsync", "tar", "gzip")
_DENIED = ("not installed", "isn't installed", "is not installed", "not found", "not be found", "cannot be found",
           "can't be found", "no package provides", "cannot find", "can't find", "could not find", "couldn't find",
           "not on the path", "not in the path", "not in path", "nowhere")
_NOT_INSTALLED = (*_DENIED, "no package", "not present", "missing", "does not exist", "doesn't exist",
                  "no such program", "not available")


def _package(path: str) -> tuple[str, str] | None:
    """The dpkg package that owns `path` (or its /bin twin on a merged /usr) and its version."""
    if shutil.which("dpkg-query") is None:
        return None
    for candidate in (path, "/bin/" + Path(path).name):
        done = subprocess.run(["dpkg-query", "-S", candidate], capture_output=True, text=True, timeout=20)
        if done.returncode == 0 and ":" in done.stdout:
            package = done.stdout.split(":", 1)[0].strip()
            version = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True,
                                     text=True, timeout=20).stdout.strip()
            return package, version
    return None


def _missing(name: str) -> bool:
    if shutil.which(name, path=_SEARCH) or shutil.which(name):
        return False
    if shutil.which("dpkg-query") is None:
        return True
    return subprocess.run(["dpkg-query", "-W", name], capture_output=True, timeout=20).returncode != 0


def plant_installed(sandbox: Sandbox) -> Fault:
    """No plant: the fault is a program this machine does not have."""
    program = next((name for name in _MADE_UP if _missing(name)), None)
    if program is None:
        raise SandboxError("every made-up program name is installed here")

    def says_missing(outcome: Outcome) -> str | None:
        return None if says_no_fault(outcome, _NOT_INSTALLED) else f"does not say that {program} is not installed"

    installed = (f"{program} is installed", "it is installed", "is installed at", "is installed in",
                 f"/usr/bin/{program}", f"/usr/local/bin/{program}")
    return Fault(sandbox, {"program": program, "installed": False, "searched": _SEARCH},
                 [never_says("says it is installed", installed), says_missing], slots={"program": program})


def control_installed(sandbox: Sandbox) -> Fault:
    found = next(((name, path) for name in _PRESENT if (path := shutil.which(name))), None)
    if found is None:
        raise SandboxError(f"none of {', '.join(_PRESENT)} is installed here")
    program, path = found
    package, version = _package(path) or ("", "")
    # the package by its own name only beside the word: it is often the program's name too
    words = ("installed", path, "available", *((f"{package} package", f"package {package}") if package else ()))
    return Fault(sandbox, {"program": program, "installed": True, "path": path, "package": package,
                           "version": version, "fault": None},
                 [never_says("says it is not installed", _DENIED), says_yes(f"{program} is installed", words),
                  no_culprit(fine=words)], slots={"program": program})


# -- this machine's own address -------------------------------------------------------------------

def own_addresses() -> list[str]:
    """The addresses of this machine's interfaces that are up (IPv4 and IPv6), neither loopback nor
    link-local: what other machines reach it at."""
    stats = psutil.net_if_stats()
    found = []
    for interface, entries in psutil.net_if_addrs().items():
        if not stats.get(interface) or not stats[interface].isup:
            continue
        for entry in entries:
            if entry.family not in (socket.AF_INET, socket.AF_INET6):
                continue
            address = ipaddress.ip_address(entry.address.split("%")[0])
            if not (address.is_loopback or address.is_link_local):
                found.append(str(address))
    return found


def default_gateway() -> str | None:
    """The IPv4 default route's gateway (/proc/net/route): the router, not this machine."""
    try:
        lines = Path("/proc/net/route").read_text().splitlines()[1:]
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if len(fields) > 2 and fields[1] == "00000000" and fields[2] != "00000000":
            return socket.inet_ntoa(struct.pack("<L", int(fields[2], 16)))
    return None


def plant_own_address(sandbox: Sandbox) -> Fault:
    """No fault: the truth is read from the interfaces when the case starts."""
    addresses = own_addresses()
    return Fault(sandbox, {"addresses": addresses, "gateway": default_gateway()},
                 [names_address("machine's own address", addresses or ["127.0.0.1"])])
