"""The parent of every planted process: a detached child-subreaper that starts faults and reaps them.

Why it exists: a fault must not be a descendant of the evaluator (the tools label the appliance's own
process tree as "this program"), so faults are re-parented. Re-parented to PID 1 they stay zombies
until PID 1 gets round to reaping them (this project's containers: PID 1 is `process_api`, which
reaps about every 2 s), so a torn-down scenario left zombies behind that the next case (a `zombies`
control, above all) would see. The reaper is started once per evaluator, double-forked so that its
parent is PID 1 (not the evaluator), marked `PR_SET_CHILD_SUBREAPER`, and from then on every fault
(and every orphan of a fault, such as a zombie parent's children) is re-parented to it and reaped
at once. It leaves only itself, when it exits after the evaluator.

Protocol: an abstract Unix socket (no file to clean up); a request is JSON (argv, cwd, env) with two file
descriptors attached (the child's stdin and stdout, `socket.send_fds`); the reply is the child's pid.
The reaper exits a few seconds after the evaluator's death, once its children are gone; before
that it removes whatever the evaluator planted in /etc (appliance/eval/etc_files.py), so even a
`kill -9` of the evaluator leaves no tagged line or file there, and it sends SIGCONT to its children:
a fault stopped by SIGSTOP (its watch on the evaluator stopped with it) wakes and exits.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import socket
import subprocess
import sys
import threading
from typing import Mapping, Sequence

_SERVER = r"""
import ctypes, json, os, select, socket, sys, time
evaluator, path = int(sys.argv[1]), "\0" + sys.argv[2]
if os.fork() > 0:
    os._exit(0)
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER (fork does not inherit it)
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
server.listen(16)
sys.stdout.write("ready %d\n" % os.getpid()); sys.stdout.flush(); os.close(1)
def reap():
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True
def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
def start(conn):
    message, fds, _, _ = socket.recv_fds(conn, 65536, 2)
    request = json.loads(message)
    pid = os.fork()
    if pid == 0:
        os.setsid()
        os.dup2(fds[0], 0); os.dup2(fds[1], 1)
        null = os.open(os.devnull, os.O_WRONLY); os.dup2(null, 2)
        os.chdir(request["cwd"])
        os.execve(request["argv"][0], request["argv"], request["env"])
    for fd in fds:
        os.close(fd)
    conn.sendall(json.dumps({"pid": pid}).encode())
while alive(evaluator):
    readable, _, _ = select.select([server], [], [], 0.25)
    reap()
    if readable:
        conn, _ = server.accept()
        with conn:
            try:
                start(conn)
            except Exception as exc:
                conn.sendall(json.dumps({"error": str(exc)}).encode())
server.close()
for entry in os.listdir("/proc"):  # a fault stopped by a signal cannot watch the evaluator: wake it to exit
    try:
        with open("/proc/%s/stat" % entry) as handle:
            if int(handle.read().rsplit(")", 1)[1].split()[1]) == os.getpid():
                os.kill(int(entry), 18)  # SIGCONT
    except (ValueError, IndexError, OSError):
        pass
try:  # what the evaluator planted in /etc (appliance/eval/etc_files.py), taken out once it is gone
    sys.path.insert(0, sys.argv[3])
    from appliance.eval.etc_files import sweep
    sweep({evaluator})
except Exception:
    pass
deadline = time.monotonic() + 10
while reap() and time.monotonic() < deadline:
    time.sleep(0.1)
"""


# The folder holding the appliance package, for the reaper's own import of etc_files.
_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class SandboxError(RuntimeError):
    """A fault could not be set up (the reaper did not start, a process did not become ready)."""


def pid_alive(pid: int) -> bool:
    """A process with this pid exists (a zombie too; one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def running(pid: int) -> bool:
    """Alive and not a zombie (a dead process waits in the table until its parent reaps it)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in (b"Z", b"X")


class Reaper:
    """The evaluator's handle on its reaper process (started on first use, one per evaluator)."""

    def __init__(self) -> None:
        self.owner = os.getpid()
        self.name = f"appliance-eval-reaper-{self.owner}-{secrets.token_hex(4)}"  # abstract socket: no file
        launcher = subprocess.Popen(
            [sys.executable, "-c", _SERVER, str(self.owner), self.name, _PACKAGE_PARENT],
            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        assert launcher.stdout is not None
        ready, _, _ = select.select([launcher.stdout], [], [], 20)
        line = launcher.stdout.readline() if ready else b""
        launcher.stdout.close()
        launcher.wait(timeout=20)
        words = line.split()
        if len(words) != 2 or words[0] != b"ready":
            raise SandboxError("the eval's process reaper did not start")
        self.pid = int(words[1])

    def start(self, argv: Sequence[str], *, cwd: str, env: Mapping[str, str], stdin: int, stdout: int) -> int:
        """Start `argv` as the reaper's child, in a new session, with these descriptors; its pid."""
        request = json.dumps({"argv": list(argv), "cwd": cwd, "env": dict(env)}).encode()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(20)
            conn.connect("\0" + self.name)
            socket.send_fds(conn, [request], [stdin, stdout])
            reply = json.loads(conn.recv(4096) or b"{}")
        if "pid" not in reply:
            raise SandboxError(f"the eval's process reaper could not start {argv[0]}: {reply.get('error', '?')}")
        return int(reply["pid"])


_REAPER: Reaper | None = None
_LOCK = threading.Lock()


def current() -> Reaper | None:
    """This evaluator's reaper when one was started (none is started here)."""
    with _LOCK:
        if _REAPER is not None and _REAPER.owner == os.getpid() and running(_REAPER.pid):
            return _REAPER
        return None


def reaper() -> Reaper:
    """This evaluator's reaper (a fork of the evaluator gets its own: the pid is part of the key)."""
    global _REAPER
    with _LOCK:
        # A reaper killed from outside is replaced.
        if _REAPER is None or _REAPER.owner != os.getpid() or not running(_REAPER.pid):
            _REAPER = Reaper()
        return _REAPER
