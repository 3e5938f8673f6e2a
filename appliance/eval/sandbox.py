"""A place a scenario owns: a temporary directory tree and the processes it starts, torn down together.

Why so careful: an evaluation plants real faults (a CPU hog, 700 MB held in memory, a listener on a
port, big files). Leaving one behind would itself be a fault on the person's machine. So:

- every process starts in its own session (its own process group) and is killed as a group;
- every process asks the kernel to kill it when its parent dies (PR_SET_PDEATHSIG), so even a
  `kill -9` of the evaluator leaves no process behind, and it exits by itself after `max_seconds`;
- processes get a distinctive name (the name of a symlink to the Python interpreter, so
  `/proc/PID/comm`, `ps` and psutil all show it) that tests look for after tear-down;
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
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Iterator, Sequence

PREFIX = "appliance-eval-"
_STALE_NAME = re.compile(rf"^{re.escape(PREFIX)}(?:bin-)?(\d+)-")

# Runs in every child before its own code: die with the parent, exit after a deadline, be nice.
_PREAMBLE = """\
import ctypes, os, sys, threading, time
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG = SIGKILL
except Exception:
    pass
if os.getppid() != {parent}:
    os._exit(0)  # the parent died before the line above took effect
def _deadline():
    time.sleep({max_seconds})
    os._exit(0)
threading.Thread(target=_deadline, daemon=True).start()
os.nice({nice})
def ready(*values):
    sys.stdout.write(" ".join(["ready", *map(str, values)]) + "\\n")
    sys.stdout.flush()
"""

_LIVE: "set[Sandbox]" = set()
_LIVE_LOCK = threading.Lock()


class SandboxError(RuntimeError):
    """A fault could not be set up (a process did not become ready)."""


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
        self.processes: list[subprocess.Popen] = []
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

    # -- processes ----------------------------------------------------------------------------

    def spawn(
        self,
        name: str,
        code: str,
        *,
        args: Sequence[str] = (),
        nice: int = 0,
        ready_timeout: float = 20.0,
    ) -> tuple[subprocess.Popen, list[str]]:
        """Start `code` (Python) as a process called `name` in a new session; wait until it calls
        `ready(...)` and return the process and the values it reported (e.g. a port).

        `name` becomes the process name (at most 15 characters, the kernel's limit for comm).
        """
        if len(name) > 15 or "/" in name:
            raise ValueError(f"process name {name!r} must be at most 15 characters, no '/'")
        link = self.bin_dir / name
        if not link.exists():
            link.symlink_to(os.path.realpath(sys.executable))
        script = _PREAMBLE.format(parent=os.getpid(), max_seconds=self.max_seconds, nice=nice) + code
        process = subprocess.Popen(
            [str(link), "-", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=self.root,
            start_new_session=True,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONDONTWRITEBYTECODE": "1"},
        )
        self.processes.append(process)
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(script.encode())
        process.stdin.close()
        values = self._wait_ready(process, name, ready_timeout)
        return process, values

    @staticmethod
    def _wait_ready(process: subprocess.Popen, name: str, timeout: float) -> list[str]:
        assert process.stdout is not None
        deadline = time.monotonic() + timeout
        line = b""
        fd = process.stdout.fileno()
        while not line.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                raise SandboxError(f"process {name} did not become ready within {timeout:.0f} s")
            readable, _, _ = select.select([fd], [], [], left)
            if not readable:
                continue
            piece = os.read(fd, 4096)
            if not piece:
                raise SandboxError(f"process {name} exited before it was ready (code {process.poll()})")
            line += piece
        process.stdout.close()
        words = line.decode().split()
        if not words or words[0] != "ready":
            raise SandboxError(f"process {name} said {line!r} instead of ready")
        return words[1:]

    def pids(self) -> list[int]:
        return [p.pid for p in self.processes]

    # -- tear-down ----------------------------------------------------------------------------

    def close(self) -> None:
        """Kill every process group and remove every file. Safe to call more than once."""
        if self.closed:
            return
        self.closed = True
        for process in self.processes:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
        for process in self.processes:
            with contextlib.suppress(Exception):
                process.wait(timeout=10)
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    with contextlib.suppress(Exception):
                        stream.close()
        shutil.rmtree(self.root, ignore_errors=True)
        shutil.rmtree(self.bin_dir, ignore_errors=True)
        with _LIVE_LOCK:
            _LIVE.discard(self)

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
    children's parent-death signal still clean up).
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


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale(base: str | os.PathLike | None = None) -> list[Path]:
    """Remove sandbox directories whose owning evaluator no longer runs; return what was removed.

    Needed only after a `kill -9` of an evaluator (nothing else skips atexit); its processes are
    already gone by then thanks to the parent-death signal.
    """
    removed: list[Path] = []
    folder = Path(base or tempfile.gettempdir())
    for entry in folder.glob(f"{PREFIX}*"):
        match = _STALE_NAME.match(entry.name)
        if not match or not entry.is_dir():
            continue
        owner = int(match.group(1))
        if owner == os.getpid() or _pid_alive(owner):
            continue
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed
