"""Faults of the checklist's process and path readings (issue 32): a mount held busy, a parent that
keeps many copies of one worker, a user's processes hogging the CPU, a process whose memory grows, a
filesystem a writer fills, a path through a dangling link, a folder its user may not pass, a folder
of too many files. Each control is the same place in good health, with the same names.
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path

from appliance.eval.fault import MB, SLEEP_FOREVER, Fault, process_name
from appliance.eval.sandbox import Sandbox
from appliance.eval.scoring import mentions, no_culprit

# A process that drops its privileges cannot signal the evaluator any more (the preamble's watch
# then waits for its deadline): it watches its parent, the sandbox's reaper, which exits with the
# evaluator, and exits when it is re-parented.
_WATCH_PARENT = (
    "_parent = os.getppid()\n"
    "def _orphaned():\n"
    "    while os.getppid() == _parent:\n        time.sleep(0.25)\n"
    "    os._exit(0)\n"
    "threading.Thread(target=_orphaned, daemon=True).start()\n"
)


def service_user() -> pwd.struct_passwd:
    """The unprivileged account a web or file service runs as here."""
    for name in ("www-data", "nobody", "daemon"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise RuntimeError("no unprivileged service account (www-data, nobody, daemon) on this machine")


def _as_user(user: pwd.struct_passwd) -> str:
    return _WATCH_PARENT + f"os.setgroups([])\nos.setgid({user.pw_gid})\nos.setuid({user.pw_uid})\n"


def _culprit(sandbox: Sandbox, label: str, name: str, pid: int, needles: tuple[str, ...] = (), **truth) -> Fault:
    base = name.rsplit("-", 1)[0]
    return Fault(sandbox, {"pid": pid, "name": name, **truth}, [mentions(label, [name, base, *needles], pid=pid)],
                 names=(name,))


def _decoy(sandbox: Sandbox, pid: int, name: str, **truth) -> Fault:
    base = name.rsplit("-", 1)[0]
    return Fault(sandbox, {"fault": None, "decoy": name, "decoy_pid": pid, **truth},
                 [no_culprit(decoys=[name, base])], names=(name,))


# -- a mount held busy ----------------------------------------------------------------------------

def _backup_disk(sandbox: Sandbox, *, held: bool) -> tuple[int, str, Path]:
    mount = sandbox.mount_tmpfs("media/backup-disk", size="16m")
    for year in (2021, 2022, 2023):  # even sizes: no one file is the story
        sandbox.fill(f"media/backup-disk/photos-{year}.tar", 2 * MB)
    name = process_name("syncagent")
    where = str(mount) if held else str(sandbox.root)
    code = (f"os.chdir({where!r})\nhandle = open('sync-journal.db', 'ab')\nhandle.write(b'x' * 4096)\n"
            "handle.flush()\nready()" + SLEEP_FOREVER)
    pid, _ = sandbox.spawn(name, code, args=["--watch", str(mount)])
    return pid, name, mount


def plant_path_holders(sandbox: Sandbox) -> Fault:
    pid, name, mount = _backup_disk(sandbox, held=True)
    fault = _culprit(sandbox, "process keeping the mount busy", name, pid, mount=str(mount))
    fault.slots = {"mount": str(mount)}
    return fault


def control_path_holders(sandbox: Sandbox) -> Fault:
    pid, name, mount = _backup_disk(sandbox, held=False)
    fault = _decoy(sandbox, pid, name, mount=str(mount))
    fault.slots = {"mount": str(mount)}
    return fault


# -- many copies of one worker, and their parent --------------------------------------------------

def _job_queue(sandbox: Sandbox, workers: int) -> tuple[int, str, str]:
    """A parent that forks `workers` children named like a worker program (prctl PR_SET_NAME), each
    asleep and gone when the parent is."""
    parent, worker = process_name("jobqueue"), process_name("pdfrender")
    code = (
        "import ctypes\nlibc = ctypes.CDLL(None)\nkids = []\n"
        f"for _ in range({workers}):\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        f"        libc.prctl(15, {worker.encode()!r}, 0, 0, 0)\n"
        "        boss = os.getppid()\n"
        "        while os.getppid() == boss:\n            time.sleep(1.0)\n"
        "        os._exit(0)\n"
        "    kids.append(pid)\n"
        "ready(len(kids))" + SLEEP_FOREVER
    )
    pid, _ = sandbox.spawn(parent, code, args=["--workers", str(workers), "--spawn", worker.split("-")[0]])
    return pid, parent, worker


def plant_process_names(sandbox: Sandbox) -> Fault:
    pid, parent, worker = _job_queue(sandbox, 72)
    fault = _culprit(sandbox, "parent of the many workers", parent, pid, worker=worker, count=72)
    fault.slots = {"worker": worker.split("-")[0]}
    fault.names = (parent, worker)
    return fault


def control_process_names(sandbox: Sandbox) -> Fault:
    pid, parent, worker = _job_queue(sandbox, 3)
    fault = _decoy(sandbox, pid, parent, worker=worker, count=3)
    fault.slots = {"worker": worker.split("-")[0]}
    fault.names = (parent, worker)
    return fault


# -- one user's processes hog the CPU --------------------------------------------------------------

def _user_workers(sandbox: Sandbox, *, busy: bool) -> tuple[list[int], str, str]:
    user = service_user()
    name = process_name("thumbnails")
    work = "ready()\nx = 0\nwhile True:\n    x = (x * 31 + 7) % 1000003\n" if busy else "ready()" + SLEEP_FOREVER
    pids = [sandbox.spawn(name, _as_user(user) + work, args=["--queue", "uploads"])[0] for _ in range(2)]
    return pids, name, user.pw_name


def plant_user_load(sandbox: Sandbox) -> Fault:
    pids, name, user = _user_workers(sandbox, busy=True)
    return Fault(sandbox, {"user": user, "pid": pids[0], "pids": pids, "name": name},
                 [mentions("user hogging the CPU", [user])], names=(name,))


def control_user_load(sandbox: Sandbox) -> Fault:
    pids, name, user = _user_workers(sandbox, busy=False)
    return Fault(sandbox, {"fault": None, "decoy": user, "decoy_pid": pids[0], "name": name},
                 [no_culprit(decoys=[user, name])], names=(name,))


# -- memory that keeps growing ---------------------------------------------------------------------

def _session_cache(sandbox: Sandbox, *, grows: bool) -> tuple[int, str]:
    """8 MiB/s in 2 MiB touched blocks, dropped at 1 GiB and grown again; the control holds 64 MiB."""
    name = process_name("sesscache")
    if grows:
        code = ("held = []\nwhile True:\n"
                "    block = bytearray(2 << 20)\n"
                "    for i in range(0, len(block), 4096):\n        block[i] = 1\n"
                "    held.append(block)\n"
                "    if len(held) == 3:\n        ready()\n"
                "    if len(held) >= 512:\n        held.clear()\n"
                "    time.sleep(0.25)\n")
    else:
        code = ("held = bytearray(64 << 20)\nfor i in range(0, len(held), 4096):\n    held[i] = 1\n"
                "ready()" + SLEEP_FOREVER)
    pid, _ = sandbox.spawn(name, code, args=["--ttl", "0"])
    return pid, name


def plant_memory_growth(sandbox: Sandbox) -> Fault:
    pid, name = _session_cache(sandbox, grows=True)
    return _culprit(sandbox, "process whose memory grows", name, pid)


def control_memory_growth(sandbox: Sandbox) -> Fault:
    pid, name = _session_cache(sandbox, grows=False)
    return _decoy(sandbox, pid, name)


# -- a filesystem a writer fills -----------------------------------------------------------------

def _ingest(sandbox: Sandbox, *, busy: bool) -> tuple[int, str, Path, Path]:
    """2 MiB/s of debug lines appended to a trace on a 256 MiB tmpfs, emptied at 128 MiB (never
    full); the control wrote 4 MiB once."""
    mount = sandbox.mount_tmpfs("var/spool/ingest", size="256m")
    trace = mount / "trace-debug.log"
    name = process_name("ingestd")
    loop = ("written = 0\nwhile True:\n"
            "    out.write(block); out.flush(); written += len(block)\n"
            "    if written == 4 * len(block):\n        ready()\n"
            "    if written >= 128 << 20:\n        out.truncate(0); out.seek(0); written = 0\n"
            "    time.sleep(0.125)\n") if busy else \
        "for _ in range(16):\n    out.write(block)\nout.flush()\nready()" + SLEEP_FOREVER
    code = (f"out = open({str(trace)!r}, 'ab')\n"
            "block = b''.join(b'2024-06-01 12:00:00 DEBUG ingest: frame %06d accepted, 412 bytes queued\\n' % i "
            "for i in range(4000))[:256 << 10]\n" + loop)
    pid, _ = sandbox.spawn(name, code, args=["--debug", "--spool", str(mount)])
    return pid, name, mount, trace


def plant_disk_growth(sandbox: Sandbox) -> Fault:
    pid, name, mount, trace = _ingest(sandbox, busy=True)
    fault = _culprit(sandbox, "what fills the filesystem", name, pid, (trace.name,), mount=str(mount), path=str(trace))
    fault.slots = {"mount": str(mount)}
    return fault


def control_disk_growth(sandbox: Sandbox) -> Fault:
    pid, name, mount, _ = _ingest(sandbox, busy=False)
    fault = _decoy(sandbox, pid, name, mount=str(mount))
    fault.slots = {"mount": str(mount)}
    return fault


# -- a path through a dangling link ------------------------------------------------------------------

def _releases(sandbox: Sandbox, *, dangling: bool) -> tuple[Path, str]:
    sandbox.write("srv/shop/releases/2024-05-14/config.yml", "listen: 127.0.0.1:8080\nworkers: 4\n")
    target = "2024-06-01" if dangling else "2024-05-14"
    (sandbox.path("srv/shop/current")).symlink_to(sandbox.path(f"srv/shop/releases/{target}"))
    return sandbox.path("srv/shop/current/config.yml"), target


def plant_path_lookup(sandbox: Sandbox) -> Fault:
    path, target = _releases(sandbox, dangling=True)
    return Fault(sandbox, {"path": str(path), "link": str(sandbox.path("srv/shop/current")), "target": target},
                 [mentions("dangling link's missing target", [target, "dangling", "broken link", "broken symlink"])],
                 slots={"path": str(path)})


def control_path_lookup(sandbox: Sandbox) -> Fault:
    path, _ = _releases(sandbox, dangling=False)
    return Fault(sandbox, {"path": str(path), "fault": None}, [no_culprit(fine=("exists", "can be opened", "readable"))],
                 slots={"path": str(path)})


# -- a folder its user may not pass ------------------------------------------------------------------

_LOCKED_WORDS = ("drwx------", "0700", "only root", "root only", "only its owner", "owner only", "only accessible",
                 "accessible only", "cannot enter", "can't enter", "search permission", "execute permission")


def _reports(sandbox: Sandbox, *, locked: bool) -> Path:
    os.chmod(sandbox.root, 0o755)  # the sandbox itself is private (mkdtemp); its tree is what is judged
    path = sandbox.write("srv/reports/archive/2024/q2-summary.csv", "quarter,revenue\nq2,1200\n")
    for folder in ("srv", "srv/reports", "srv/reports/archive/2024"):
        os.chmod(sandbox.path(folder), 0o755)
    os.chmod(sandbox.path("srv/reports/archive"), 0o700 if locked else 0o755)
    os.chmod(path, 0o644)
    return path


def plant_path_permission(sandbox: Sandbox) -> Fault:
    path = _reports(sandbox, locked=True)
    folder = sandbox.path("srv/reports/archive")
    return Fault(sandbox, {"path": str(path), "folder": str(folder), "user": service_user().pw_name},
                 [mentions("folder that blocks the user", _LOCKED_WORDS)],
                 slots={"path": str(path), "user": service_user().pw_name})


def control_path_permission(sandbox: Sandbox) -> Fault:
    path = _reports(sandbox, locked=False)
    return Fault(sandbox, {"path": str(path), "fault": None},
                 [no_culprit(fine=("can read", "may read", "readable", "allowed", "can be read", "has access"))],
                 slots={"path": str(path), "user": service_user().pw_name})


# -- a folder of too many files ----------------------------------------------------------------------

def _mail_queue(sandbox: Sandbox, crowded: int) -> Path:
    root = sandbox.path("var/mail-queue")
    for folder, count in (("deferred", crowded), ("active", 12), ("incoming", 30), ("corrupt", 2)):
        target = root / folder
        target.mkdir(parents=True)
        for i in range(count):
            (target / f"msg-{i:06d}.eml").touch()
    return root


def plant_file_counts(sandbox: Sandbox) -> Fault:
    root = _mail_queue(sandbox, 24_000)
    return Fault(sandbox, {"path": str(root / "deferred"), "count": 24_000},
                 [mentions("folder with the most files", ["deferred"])], slots={"root": str(root)})


def control_file_counts(sandbox: Sandbox) -> Fault:
    root = _mail_queue(sandbox, 40)
    return Fault(sandbox, {"path": str(root), "fault": None}, [no_culprit(decoys=["deferred"])],
                 slots={"root": str(root)})
