"""Process faults: CPU, memory, zombies, open files, threads, restarts, disk writes; and uptime.

Each family has a fault plant and a control plant. The control starts a sleeping decoy with the
name the fault would have had, so an answer that names it merely for its name fails.
"""

from __future__ import annotations

import os
import time

import psutil

from appliance.eval.fault import MB, SLEEP_FOREVER, Fault, process_name, spawn_cpu_hog, spawn_idle
from appliance.eval.sandbox import Sandbox
from appliance.eval.scoring import duration_near, mentions, no_culprit


def _culprit(sandbox: Sandbox, label: str, name: str, pid: int, **truth) -> Fault:
    base = name.rsplit("-", 1)[0]
    return Fault(sandbox, {"pid": pid, "name": name, **truth}, [mentions(label, [name, base], pid=pid)],
                 names=(name,))


def _decoy(sandbox: Sandbox, pid: int, name: str, **truth) -> Fault:
    base = name.rsplit("-", 1)[0]
    return Fault(sandbox, {"fault": None, "decoy": name, "decoy_pid": pid, **truth},
                 [no_culprit(decoys=[name, base])], names=(name,))


# -- cpu ------------------------------------------------------------------------------------------

def plant_cpu(sandbox: Sandbox) -> Fault:
    name = process_name("hashminer")
    pid = spawn_cpu_hog(sandbox, name, ["--threads", "1", "--pool", "stratum.local"])
    return _culprit(sandbox, "CPU hog", name, pid)


def control_cpu(sandbox: Sandbox) -> Fault:
    pid, name = spawn_idle(sandbox, "hashminer", ["--threads", "1", "--pool", "stratum.local"])
    return _decoy(sandbox, pid, name)


# -- memory ---------------------------------------------------------------------------------------

def memory_hog_size_mb(minimum_mb: int = 700) -> int:
    """At least `minimum_mb`, and 256 MB more than any other process holds (the evaluator itself
    aside: the tools label it as not a culprit), so the hog really is the answer even beside a
    browser or another model; never more than half of the available memory."""
    own = os.getpid()
    largest = 0
    for proc in psutil.process_iter(["pid", "memory_info"]):
        info = proc.info.get("memory_info")
        if proc.info["pid"] != own and info is not None:
            largest = max(largest, info.rss)
    want = max(minimum_mb * MB, largest + 256 * MB)
    return int(min(want, psutil.virtual_memory().available // 2) // MB)


def _hold_memory(sandbox: Sandbox, size_mb: int) -> tuple[int, str]:
    name = process_name("cachehoard")
    code = (
        f"data = bytearray({size_mb} * 1024 * 1024)\n"
        "for i in range(0, len(data), 4096):\n    data[i] = 1\n"  # touch every page: real RSS
        "ready()" + SLEEP_FOREVER
    )
    pid, _ = sandbox.spawn(name, code, args=["--cache-size", f"{size_mb}M"])
    return pid, name


def plant_memory(sandbox: Sandbox, size_mb: int | None = None) -> Fault:
    size_mb = size_mb or memory_hog_size_mb()
    pid, name = _hold_memory(sandbox, size_mb)
    return _culprit(sandbox, "memory hog", name, pid, rss_mb=size_mb)


def control_memory(sandbox: Sandbox) -> Fault:
    pid, name = _hold_memory(sandbox, 20)
    return _decoy(sandbox, pid, name, rss_mb=20)


# -- zombies --------------------------------------------------------------------------------------

def _parent_of(sandbox: Sandbox, children: int, *, reaps: bool) -> tuple[int, str, list[str]]:
    name = process_name("reaperless")
    wait = "    os.waitpid(pid, 0)\n" if reaps else ""
    code = (
        "kids = []\n"
        f"for i in range({children}):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n        os._exit(0)\n"
        f"{wait}    kids.append(pid)\n"
        "time.sleep(0.2)\nready(*kids)" + SLEEP_FOREVER
    )
    pid, kids = sandbox.spawn(name, code, args=["--workers", str(children)])
    return pid, name, kids


def plant_zombies(sandbox: Sandbox) -> Fault:
    pid, name, kids = _parent_of(sandbox, 5, reaps=False)
    return _culprit(sandbox, "zombies' parent", name, pid, zombies=[int(k) for k in kids], count=len(kids))


def control_zombies(sandbox: Sandbox) -> Fault:
    pid, name, _ = _parent_of(sandbox, 5, reaps=True)
    return _decoy(sandbox, pid, name, count=0)


# -- open files -----------------------------------------------------------------------------------

def _open_files(sandbox: Sandbox, limit: int, count: int) -> tuple[int, str]:
    name = process_name("fdhoarder")
    code = (
        "import resource\n"
        f"resource.setrlimit(resource.RLIMIT_NOFILE, ({limit}, {limit}))\n"
        f"held = [open(os.devnull) for _ in range({count})]\n"
        "ready(len(os.listdir('/proc/self/fd')))" + SLEEP_FOREVER
    )
    pid, _ = sandbox.spawn(name, code, args=["--watch", "/srv/incoming"])
    return pid, name


def plant_open_files(sandbox: Sandbox) -> Fault:
    pid, name = _open_files(sandbox, 256, 240)
    return _culprit(sandbox, "process near its open-file limit", name, pid, limit=256)


def control_open_files(sandbox: Sandbox) -> Fault:
    pid, name = _open_files(sandbox, 1024, 8)
    return _decoy(sandbox, pid, name, limit=1024)


# -- threads --------------------------------------------------------------------------------------

def _threads(sandbox: Sandbox, count: int) -> tuple[int, str]:
    name = process_name("threadfarm")
    code = (
        "threading.stack_size(256 * 1024)\n"
        f"for _ in range({count}):\n"
        "    threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()\n"
        "ready(threading.active_count())" + SLEEP_FOREVER
    )
    pid, _ = sandbox.spawn(name, code, args=["--pool", str(count)])
    return pid, name


def plant_threads(sandbox: Sandbox) -> Fault:
    pid, name = _threads(sandbox, 300)
    return _culprit(sandbox, "process with the most threads", name, pid, threads=300)


def control_threads(sandbox: Sandbox) -> Fault:
    pid, name = _threads(sandbox, 2)
    return _decoy(sandbox, pid, name, threads=2)


# -- restarts -------------------------------------------------------------------------------------

# The supervised child watches its parent, so it never outlives the supervisor.
_CHILD = "import os, sys, time\np = os.getppid()\nt = time.monotonic() + {life}\n" \
         "while os.getppid() == p and time.monotonic() < t:\n    time.sleep(0.1)\nsys.exit(3)\n"


def _supervise(sandbox: Sandbox, life: float) -> tuple[int, str, str, str]:
    """A small supervisor that restarts its child whenever it exits, logging each restart."""
    child = process_name("flakyd")
    link = sandbox.interpreter(child)
    log = sandbox.write(f"var/log/{child.split('-')[0]}/supervisor.log", "")
    name = process_name("minisuper")
    code = (
        "import subprocess\n"
        f"log = open({str(log)!r}, 'a')\nrestarts = 0\n"
        "def note(text):\n    log.write(time.strftime('%Y-%m-%d %H:%M:%S ') + text + '\\n'); log.flush()\n"
        "while True:\n"
        f"    child = subprocess.Popen([{str(link)!r}, '-c', {_CHILD.format(life=life)!r}])\n"
        f"    note('INFO supervisor: started {child} (pid %d)' % child.pid)\n"
        f"    if restarts == {0 if life >= 60 else 2}:\n        ready()\n"  # a flaky child: once it has failed twice
        "    status = child.wait()\n    restarts += 1\n"
        f"    note('ERROR supervisor: {child} exited with status %d; restarting (restart %d)' % (status, restarts))\n"
        "    time.sleep(0.3)\n"
    )
    pid, _ = sandbox.spawn(name, code, args=["--restart", "always"])
    return pid, name, child, str(log)


def plant_restarts(sandbox: Sandbox) -> Fault:
    pid, name, child, log = _supervise(sandbox, life=0.3)
    return Fault(sandbox, {"name": child, "supervisor": name, "supervisor_pid": pid, "log": log},
                 [mentions("crash-looping process", [child, "flakyd"])], names=(name, child))


def control_restarts(sandbox: Sandbox) -> Fault:
    pid, name, child, log = _supervise(sandbox, life=3600)
    return Fault(sandbox, {"fault": None, "decoy": child, "supervisor": name, "supervisor_pid": pid, "log": log},
                 [no_culprit(decoys=[child, "flakyd"])], names=(name, child))


# -- disk I/O -------------------------------------------------------------------------------------

def _writer(sandbox: Sandbox, *, busy: bool) -> tuple[int, str]:
    """Writes 256 KiB blocks with fsync to a file in the sandbox (real disk, not tmpfs), rewinding
    at 32 MiB; the control writes one block and sleeps."""
    name = process_name("dbflusher")
    loop = (
        "written = 0\nwhile True:\n"
        "    os.write(fd, block); os.fsync(fd); written += len(block)\n"
        "    if written == 4 * len(block):\n        ready()\n"
        "    if written % (32 << 20) == 0:\n        os.lseek(fd, 0, 0)\n"
        "    time.sleep(0.05)\n"
    ) if busy else "os.write(fd, block); os.fsync(fd)\nready()" + SLEEP_FOREVER
    code = (
        "block = os.urandom(256 * 1024)\n"
        "fd = os.open('data/journal.dat', os.O_WRONLY | os.O_CREAT, 0o644)\n" + loop
    )
    sandbox.path("data").mkdir(parents=True, exist_ok=True)
    pid, _ = sandbox.spawn(name, code, args=["--sync", "always"])
    return pid, name


def plant_disk_io(sandbox: Sandbox) -> Fault:
    pid, name = _writer(sandbox, busy=True)
    return _culprit(sandbox, "top disk writer", name, pid, path=str(sandbox.path("data/journal.dat")))


def control_disk_io(sandbox: Sandbox) -> Fault:
    pid, name = _writer(sandbox, busy=False)
    return _decoy(sandbox, pid, name)


# -- uptime ---------------------------------------------------------------------------------------

def plant_uptime(sandbox: Sandbox) -> Fault:
    """No fault: the truth is the machine's uptime when the case starts."""
    boot = psutil.boot_time()
    seconds = time.time() - boot
    return Fault(sandbox, {"uptime_seconds": round(seconds), "boot_time": boot},
                 [duration_near("uptime", seconds, boot_time=boot)])
