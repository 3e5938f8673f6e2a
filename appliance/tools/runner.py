"""Running one fixed, read-only program safely: absolute path, no shell, empty stdin, a minimal
environment, its own session and process group (so a timeout kills everything it started), an
output cap and a deadline."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass

TRUSTED_DIRS = ("/usr/bin", "/bin", "/usr/sbin", "/sbin")
_ENV = {"PATH": ":".join(TRUSTED_DIRS), "LC_ALL": "C", "LANG": "C", "SYSTEMD_PAGER": "", "PAGER": "cat",
        "SYSTEMD_COLORS": "0", "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "160"}


def find_program(name: str) -> str | None:
    """The absolute path of `name` in the trusted system directories only (never $PATH)."""
    for directory in TRUSTED_DIRS:
        candidate = os.path.join(directory, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


@dataclass(frozen=True)
class Ran:
    exit_code: int | None
    output: str
    truncated: bool
    timed_out: bool
    seconds: float


def run_capped(argv: list[str], *, timeout: float, cap: int) -> Ran:
    """Run argv (argv[0] absolute), stdout+stderr merged, at most `cap` bytes kept."""
    if not os.path.isabs(argv[0]):
        raise ValueError("the program must be given by absolute path")
    started = time.monotonic()
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        env=_ENV, cwd="/", close_fds=True, start_new_session=True,
    )
    stdout = proc.stdout
    assert stdout is not None  # stdout=PIPE
    chunks: list[bytes] = []
    kept = 0
    truncated = timed_out = False
    deadline = started + timeout
    with selectors.DefaultSelector() as selector:
        selector.register(stdout, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            if not selector.select(timeout=min(remaining, 0.5)):
                continue
            chunk = os.read(stdout.fileno(), 65536)
            if not chunk:
                break
            if kept < cap:
                chunks.append(chunk[: cap - kept])
            kept += len(chunk)
            if kept > cap:
                truncated = True
                break
    if timed_out or truncated:
        _kill_group(proc)
    try:
        code = proc.wait(timeout=2)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        code = proc.wait()
    stdout.close()
    text = b"".join(chunks).decode("utf-8", errors="replace")
    return Ran(None if timed_out else code, text, truncated, timed_out, time.monotonic() - started)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # its own session: this group is only what it started
    except (ProcessLookupError, PermissionError):
        pass
