"""Plants of the `unnamed` split about single processes and the machine's memory, all real: the
parent of a given process, how long a process has run, which of two named processes holds more
memory, the folder a process works in, the options it was started with, its nice value (and one at
the normal priority), how much memory one process holds, how much memory the machine still has
available, and a well-known server that is not running.
"""

from __future__ import annotations

import psutil

from appliance.eval.fault import SLEEP_FOREVER, Fault, process_name, spawn_idle
from appliance.eval.reaper import SandboxError
from appliance.eval.sandbox import Sandbox
from appliance.eval.scoring import mentions, no_culprit
from appliance.eval.scoring_values import age_near, number_stated, size_near


def _holding(sandbox: Sandbox, base: str, size_mb: int, args: tuple[str, ...] = ()) -> tuple[int, str, int]:
    """A process holding `size_mb` touched; its resident size as the kernel reports it."""
    name = process_name(base)
    code = (f"data = bytearray({size_mb} * 1024 * 1024)\n"
            "for i in range(0, len(data), 4096):\n    data[i] = 1\n"
            "ready()" + SLEEP_FOREVER)
    pid, _ = sandbox.spawn(name, code, args=args)
    return pid, name, psutil.Process(pid).memory_info().rss


# -- the parent of a given process -------------------------------------------------------------------

def plant_parent(sandbox: Sandbox) -> Fault:
    parent = process_name("deployctl")
    child = process_name("rsyncstage")
    code = ("import ctypes\nlibc = ctypes.CDLL(None)\n"
            "kid = os.fork()\n"
            "if kid == 0:\n"
            f"    libc.prctl(15, {child.encode()!r}, 0, 0, 0)\n"
            "    boss = os.getppid()\n"
            "    while os.getppid() == boss:\n        time.sleep(0.5)\n"
            "    os._exit(0)\n"
            "time.sleep(0.2)\nready(kid)" + SLEEP_FOREVER)
    pid, values = sandbox.spawn(parent, code, args=["--stage", "release"])
    kid = int(values[0])
    return Fault(sandbox, {"pid": pid, "name": parent, "child_pid": kid, "child": child},
                 [mentions("parent process", [parent, "deployctl"], pid=pid)], slots={"pid": kid},
                 names=(parent, child))


# -- how long a process has run ------------------------------------------------------------------------

def plant_process_age(sandbox: Sandbox) -> Fault:
    pid, name = spawn_idle(sandbox, "nightjob", ["--window", "02:00-04:00"])
    started = psutil.Process(pid).create_time()
    return Fault(sandbox, {"pid": pid, "name": name, "started": started},
                 [age_near("time it has been running", started)], slots={"name": name}, names=(name,))


# -- which of two uses more memory ------------------------------------------------------------------------

def plant_compare_memory(sandbox: Sandbox) -> Fault:
    small_pid, small, small_rss = _holding(sandbox, "mailidx", 40, ("--folder", "inbox"))
    big_pid, big, big_rss = _holding(sandbox, "photoidx", 360, ("--library", "photos"))
    return Fault(sandbox, {"pid": big_pid, "name": big, "rss_bytes": big_rss, "other": small,
                           "other_rss_bytes": small_rss},
                 [mentions("process using more memory", [big, "photoidx"], pid=big_pid),
                  size_near("memory it uses", big_rss, within=0.25)],
                 slots={"first": small, "second": big}, names=(small, big))


# -- the folder a process works in, the options it was started with -----------------------------------------

def plant_process_cwd(sandbox: Sandbox) -> Fault:
    folder = sandbox.path("srv/fax/outgoing")
    folder.mkdir(parents=True)
    name = process_name("faxrelay")
    pid, _ = sandbox.spawn(name, f"os.chdir({str(folder)!r})\nready()" + SLEEP_FOREVER)
    return Fault(sandbox, {"pid": pid, "name": name, "cwd": str(folder)},
                 [mentions("folder it works in", [str(folder), "fax/outgoing"])], slots={"name": name}, names=(name,))


def plant_process_options(sandbox: Sandbox) -> Fault:
    pid, name = spawn_idle(sandbox, "ledgerexp", ["--profile", "quarterly-close", "--format", "parquet"])
    return Fault(sandbox, {"pid": pid, "name": name, "options": "--profile quarterly-close --format parquet"},
                 [mentions("options it was started with", ["quarterly-close"])], slots={"name": name}, names=(name,))


# -- its priority --------------------------------------------------------------------------------------------

def _niced(sandbox: Sandbox, nice: int) -> tuple[int, str]:
    name = process_name("thumbgen")
    pid, _ = sandbox.spawn(name, "ready()" + SLEEP_FOREVER, args=["--size", "256"], nice=nice)
    return pid, name


def plant_nice(sandbox: Sandbox) -> Fault:
    pid, name = _niced(sandbox, 12)
    return Fault(sandbox, {"pid": pid, "name": name, "nice": psutil.Process(pid).nice()},
                 [number_stated("nice value", 12)], slots={"name": name}, names=(name,))


def control_nice(sandbox: Sandbox) -> Fault:
    pid, name = _niced(sandbox, 0)
    fine = ("normal priority", "default priority", "regular priority", "usual priority", "same priority",
            "nice value of 0", "nice value is 0", "niceness of 0", "nice 0", "not niced", "not lowered", "priority 20")
    return Fault(sandbox, {"pid": pid, "name": name, "nice": 0, "fault": None},
                 [no_culprit(fine=fine, asked_pid=pid)], slots={"name": name}, names=(name,))


# -- how much memory: one process, the machine ---------------------------------------------------------------

def plant_process_memory(sandbox: Sandbox) -> Fault:
    pid, name, rss = _holding(sandbox, "tilecache", 220, ("--zoom", "14"))
    return Fault(sandbox, {"pid": pid, "name": name, "rss_bytes": rss},
                 [size_near("memory it uses", rss, within=0.15)], slots={"name": name}, names=(name,))


def plant_memory_available(sandbox: Sandbox) -> Fault:
    """A real 512 MiB holder, then the machine's available memory as the kernel counts it (free
    pages plus what can be reclaimed); the answer may give it in MB or GB, within 10 %, or the
    free memory when that is within 10 % of it too."""
    pid, name, _ = _holding(sandbox, "blobcache", 512, ("--warm",))
    memory = psutil.virtual_memory()
    return Fault(sandbox, {"available_bytes": memory.available, "total_bytes": memory.total, "holder": name},
                 [size_near("memory still available", memory.available, within=0.1)], names=(name,))


# -- a well-known server that is not running -------------------------------------------------------------------

def control_not_running(sandbox: Sandbox) -> Fault:
    """Its configuration is there; no process of it runs (checked: else the case cannot be asked)."""
    sandbox.write("etc/redis/redis.conf", "bind 127.0.0.1\nport 6379\nmaxmemory 256mb\n")
    running = [p.info["name"] for p in psutil.process_iter(["name"]) if "redis" in (p.info["name"] or "")]
    if running:
        raise SandboxError(f"a redis process runs here ({running[0]}): its absence cannot be asked")
    fine = ("not running", "isn't running", "no redis", "is not running")
    return Fault(sandbox, {"program": "redis", "running": False, "fault": None}, [no_culprit(fine=fine)])

