"""A place a scenario owns: a temporary directory tree and the processes it starts, torn down together.

Why so careful: an evaluation plants real faults (a CPU hog, 700 MB held in memory, a listener on a
port, big files). Leaving one behind would itself be a fault on the person's machine. So:

- every process starts in its own session (its own process group) and is killed as a group;
- every process is re-parented (its launcher forks and exits), so it is not a descendant of the
  evaluator (the tools label the appliance's own tree as "this program"); its new parent is the
  evaluator's detached reaper (appliance/eval/reaper.py), which reaps it as soon as it dies (PID 1
  here reaps only every ~2 s, so dead faults lingered as zombies); it watches the
  evaluator's PID and exits within a quarter second of its death, so even a `kill -9` of the
  evaluator leaves no process behind, and it exits by itself after `max_seconds`;
- processes get a distinctive name (the name of a symlink to the Python interpreter, so
  `/proc/PID/comm`, `ps` and psutil all show it) that tests look for after tear-down;
- tmpfs mounts it makes (`mount_tmpfs`) are unmounted after its processes are gone;
- files a plant made immutable (chattr +i) keep no tree alive: their attribute is cleared before
  the tree is removed, by `close()` and by `sweep_stale()` (appliance/eval/file_flags.py);
- lines and files it adds in /etc (`add_etc_lines`, `add_etc_file`) carry a tag and are taken out
  exactly, atomically, first of all (appliance/eval/etc_files.py); the reaper takes them out when
  the evaluator dies first, `sweep_stale()` when the reaper died too;
- `Sandbox` is a context manager, every live sandbox is also closed at interpreter exit (atexit),
  `raise_on_termination()` turns SIGTERM/SIGHUP into KeyboardInterrupt so `finally` blocks run, and
  `sweep_stale()` removes directories left by an evaluator that was killed outright (their names
  carry the owner's PID).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import secrets
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Iterator, Sequence

from appliance.eval import accounts, etc_files
from appliance.eval.reaper import SandboxError, pid_alive, reaper, running
from appliance.eval.file_flags import remove_tree

PREFIX = "appliance-eval-"
_STALE_NAME = re.compile(rf"^{re.escape(PREFIX)}(?:bin-)?(\d+)-")

# Runs in every child before its own code. The launcher forks and exits, so the fault runs
# re-parented (like a real daemon) and is never a descendant of the evaluator: the tools treat the
# appliance's own process tree as "this program", and a fault must not look like part of it. The
# fault watches the evaluator instead of relying on the parent-death signal (which a re-parented
# process cannot use), exits after a deadline, and stays in the launcher's process group.
_PREAMBLE = """\
import os, sys, threading, time
if os.fork() > 0:
    os._exit(0)
def _watch():
    deadline = time.monotonic() + {max_seconds}
    while time.monotonic() < deadline:
        try:
            os.kill({evaluator}, 0)
        except ProcessLookupError:
            os._exit(0)
        except PermissionError:
            pass
        time.sleep(0.25)
    os._exit(0)
threading.Thread(target=_watch, daemon=True).start()
os.nice({nice})
def ready(*values):
    sys.stdout.write(" ".join(["ready", str(os.getpid()), *map(str, values)]) + "\\n")
    sys.stdout.flush()
"""

_LIVE: "set[Sandbox]" = set()
_LIVE_LOCK = threading.Lock()


def short_token(length: int = 4) -> str:
    """A few random lowercase hex characters, so names are unique per set-up (parallel runs)."""
    return secrets.token_hex((length + 1) // 2)[:length]


class Sandbox:
    """A temporary tree (`root`) plus the processes started in it; `close()` removes both.

    The interpreter symlinks live in a separate directory (`bin_dir`), so the fault tree the agent
    explores contains only what the scenario planted.
    """

    def __init__(self, *, max_seconds: float = 1800.0) -> None:
        owner = os.getpid()
        self.root = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{owner}-")).resolve()
        self.bin_dir = Path(tempfile.mkdtemp(prefix=f"{PREFIX}bin-{owner}-")).resolve()
        self.max_seconds = max_seconds
        self.groups: list[int] = []  # process group ids (one per spawn)
        self.fault_pids: list[int] = []  # the fault processes themselves
        self.mounts: list[Path] = []  # tmpfs mounts inside root, unmounted before root is removed
        self.cgroups: list[Path] = []  # control groups it made, removed once their processes are gone
        self.undo: list[Callable[[], object]] = []  # its changes in /etc (tagged), taken out first
        self.closed = False
        with _LIVE_LOCK:
            _LIVE.add(self)

    # -- files --------------------------------------------------------------------------------

    def path(self, relative: str) -> Path:
        return self.root / relative

    def write(self, relative: str, text: str) -> Path:
        target = self.path(relative)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        return target

    def fill(self, relative: str, size: int, *, chunk: int = 1 << 20) -> Path:
        """A file of `size` real bytes (not sparse: disk-usage tools count blocks)."""
        target = self.path(relative)
        target.parent.mkdir(parents=True, exist_ok=True)
        block = os.urandom(min(chunk, max(size, 1)))
        with open(target, "wb") as handle:
            left = size
            while left > 0:
                piece = block[: min(left, len(block))]
                handle.write(piece)
                left -= len(piece)
        return target

    def mount_tmpfs(self, relative: str, *, size: str, inodes: int | None = None) -> Path:
        """A real tmpfs of `size` (e.g. "16m") mounted at root/relative; `inodes` caps its inode
        count (tmpfs nr_inodes). Needs root; unmounted by `close()`."""
        target = self.path(relative)
        target.mkdir(parents=True, exist_ok=True)
        options = f"size={size},mode=0755" + (f",nr_inodes={inodes}" if inodes else "")
        _mount(["-t", "tmpfs", "-o", options, "tmpfs", str(target)])
        self.mounts.append(target)
        return target

    def remount_readonly(self, target: Path) -> None:
        _mount(["-o", "remount,ro", str(target)])

    def cpu_group(self, cpus: float) -> Path:
        """A control group whose CPU quota is `cpus` of one core (cgroup v1 cpu.cfs_quota_us or v2
        cpu.max); needs root; removed by `close()`. Move a process in with `join_group`."""
        name = f"{PREFIX}{os.getpid()}-{short_token(6)}"
        v2 = Path("/sys/fs/cgroup/cgroup.controllers").exists()
        if v2 and "cpu" not in Path("/sys/fs/cgroup/cgroup.subtree_control").read_text().split():
            raise SandboxError("the cgroup v2 cpu controller is not enabled for child groups here")
        group = Path("/sys/fs/cgroup" if v2 else "/sys/fs/cgroup/cpu") / name
        group.mkdir()
        self.cgroups.append(group)
        period = 100000
        if v2:
            (group / "cpu.max").write_text(f"{int(cpus * period)} {period}")
        else:
            (group / "cpu.cfs_period_us").write_text(str(period))
            (group / "cpu.cfs_quota_us").write_text(str(int(cpus * period)))
        return group

    @staticmethod
    def join_group(group: Path, pid: int) -> None:
        (group / "cgroup.procs").write_text(str(pid))

    # -- /etc (appliance/eval/etc_files.py) ------------------------------------------------------

    def add_etc_lines(self, path: Path, lines: list[str]) -> str:
        """Append tagged `lines` to a system file (/etc/hosts); `close()` takes out exactly them, and
        the reaper does if this evaluator dies first (it is started here, before the change)."""
        reaper()
        tag = etc_files.new_tag()
        etc_files.add_lines(path, lines, tag)
        self.undo.append(lambda: etc_files.remove_lines(path, tag))
        return tag

    def add_etc_file(self, folder: Path, name: str, text: str) -> Path:
        """A new tagged file in a system folder (/etc/cron.d), removed like `add_etc_lines`' lines."""
        reaper()
        tag = etc_files.new_tag()
        target = etc_files.add_file(folder, name, text, tag)
        self.undo.append(lambda: etc_files.remove_file(target, tag))
        return target

    # -- processes ----------------------------------------------------------------------------

    def interpreter(self, name: str) -> Path:
        """The Python interpreter under the name `name` (a symlink: comm, ps and psutil show it)."""
        if len(name) > 15 or "/" in name:
            raise ValueError(f"process name {name!r} must be at most 15 characters, no '/'")
        link = self.bin_dir / name
        if not link.exists():
            link.symlink_to(os.path.realpath(sys.executable))
        return link

    def spawn(
        self,
        name: str,
        code: str,
        *,
        args: Sequence[str] = (),
        nice: int = 0,
        ready_timeout: float = 20.0,
    ) -> tuple[int, list[str]]:
        """Start `code` (Python) as a process called `name` in a new session; wait until it calls
        `ready(...)` and return its PID and the values it reported (e.g. a port).

        `name` becomes the process name (at most 15 characters, the kernel's limit for comm).
        """
        link = self.interpreter(name)
        script = _PREAMBLE.format(evaluator=os.getpid(), max_seconds=self.max_seconds, nice=nice) + code
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONDONTWRITEBYTECODE": "1"}
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        with open(stdin_w, "wb") as script_in, open(stdout_r, "rb", buffering=0) as ready_out:
            try:
                # Its own session (pgid = launcher pid, kept by the fault), a child of the reaper.
                launcher = reaper().start([str(link), "-", *args], cwd=str(self.root), env=env,
                                          stdin=stdin_r, stdout=stdout_w)
            finally:
                os.close(stdin_r)  # the launcher has its own copies
                os.close(stdout_w)
            self.groups.append(launcher)
            script_in.write(script.encode())
            script_in.close()  # Python reads its script to the end before running it
            values = self._wait_ready(ready_out.fileno(), name, ready_timeout)
        pid = int(values[0])
        self.fault_pids.append(pid)
        return pid, values[1:]

    @staticmethod
    def _wait_ready(fd: int, name: str, timeout: float) -> list[str]:
        deadline = time.monotonic() + timeout
        line = b""
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                raise SandboxError(f"process {name} did not become ready within {timeout:.0f} s")
            readable, _, _ = select.select([fd], [], [], left)
            if not readable:
                continue
            piece = os.read(fd, 4096)
            if not piece:
                raise SandboxError(f"process {name} exited before it was ready")
            line += piece
        words = line.decode().split()
        if len(words) < 2 or words[0] != "ready":
            raise SandboxError(f"process {name} said {line!r} instead of ready")
        return words[1:]

    def pids(self) -> list[int]:
        return list(self.fault_pids)

    # -- tear-down ----------------------------------------------------------------------------

    def close(self) -> None:
        """Kill every process group and remove every file. Safe to call more than once."""
        if self.closed:
            return
        self.closed = True
        failed: list[str] = []
        for undo in reversed(self.undo):
            try:
                undo()
            except Exception as exc:  # the rest of the tear-down still runs; said at the end
                failed.append(str(exc))
        for group in self.groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL)
        _wait_gone(self.fault_pids, timeout=10.0)
        for cgroup in reversed(self.cgroups):
            for _ in range(40):  # the kernel frees a group a moment after its last process is reaped
                try:
                    cgroup.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.05)
        for target in reversed(self.mounts):
            _unmount(target)
        remove_tree(self.root)  # an immutable file a plant set is cleared first (appliance/eval/file_flags.py)
        remove_tree(self.bin_dir)
        with _LIVE_LOCK:
            _LIVE.discard(self)
        if failed:
            raise SandboxError("tear-down could not undo a change in /etc: " + "; ".join(failed))

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def close_all() -> None:
    """Close every sandbox still open in this process (atexit, and after an interrupt)."""
    with _LIVE_LOCK:
        live = list(_LIVE)
    for sandbox in live:
        sandbox.close()


atexit.register(close_all)


@contextlib.contextmanager
def raise_on_termination() -> Iterator[None]:
    """While inside, SIGTERM and SIGHUP raise KeyboardInterrupt, so `with`/`finally` tear-downs run.

    Only the main thread can install handlers; elsewhere this does nothing (atexit and the
    faults' watch on the evaluator still clean up).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _wait_gone(pids: Sequence[int], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while any(running(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)


def sweep_stale(base: str | os.PathLike | None = None) -> list[Path]:
    """Remove sandbox directories whose owning evaluator no longer runs; return what was removed.

    Needed only after a `kill -9` of an evaluator (nothing else skips atexit); its processes are
    already gone by then (they watch the evaluator's PID).
    """
    removed: list[Path] = []
    folder = Path(base or tempfile.gettempdir())
    for entry in folder.glob(f"{PREFIX}*"):
        match = _STALE_NAME.match(entry.name)
        if not match or not entry.is_dir():
            continue
        owner = int(match.group(1))
        if owner == os.getpid() or pid_alive(owner):
            continue
        for target in reversed(mounts_under(entry)):
            _unmount(target)
        remove_tree(entry)
        removed.append(entry)
    etc_files.sweep_dead()  # their tagged lines and files in /etc (the reaper's sweep, if it died too)
    accounts.sweep_dead()  # the user accounts they made (appliance/eval/accounts.py)
    return removed


def _mount(args: Sequence[str]) -> None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True, timeout=20)
    if done.returncode != 0:
        raise SandboxError(f"mount {' '.join(args)} failed: {done.stderr.strip() or done.returncode}")


def _unmount(target: Path) -> None:
    """Unmount; if something still holds it (a process not yet gone), detach it lazily instead."""
    if subprocess.run(["umount", str(target)], capture_output=True, timeout=20).returncode != 0:
        subprocess.run(["umount", "-l", str(target)], capture_output=True, timeout=20)


def mounts_under(folder: Path) -> list[Path]:
    """Mount points at or below `folder`, outermost first (from /proc/self/mounts)."""
    base = str(Path(folder).resolve())
    found = []
    with open("/proc/self/mounts", encoding="utf-8") as handle:
        for line in handle:
            point = line.split()[1].replace("\\040", " ").replace("\\011", "\t")
            if point == base or point.startswith(base + "/"):
                found.append(Path(point))
    return sorted(found, key=lambda p: len(p.parts))
