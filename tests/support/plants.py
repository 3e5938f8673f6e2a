"""Real processes for the profile tests: a Python child that does what a test says, tells when it is
ready, and is killed (with whatever it forked) afterwards. (No tests here.)"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator, Sequence

import psutil

from support.tools import kill

# The child's prelude: `mark()` writes the marker file the parent waits for; `ready()` marks, then sleeps.
PRELUDE = """
import os, sys, time
def mark():
    open(sys.argv[1], "w").close()
def ready():
    mark()
    while True:
        time.sleep(1)
"""


@contextlib.contextmanager
def child(code: str, where: Path, *args: str, env: dict | None = None, program: Sequence[str] = (),
          timeout: float = 20.0, **popen) -> Iterator[subprocess.Popen]:
    """Run `code` (which calls ready()) in a Python child, as a script file in `where` (so its
    command line is short); yield it once ready; kill it after."""
    stamp = time.monotonic_ns()
    marker, script = where / f"ready-{stamp}", where / f"plant-{stamp}.py"
    script.write_text(PRELUDE + code)
    argv = [*(program or [sys.executable]), str(script), str(marker), *args]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **popen)
    try:
        deadline = time.monotonic() + timeout
        while not marker.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"child did not become ready: {proc.stderr.read().decode() if proc.stderr else ''}")
            time.sleep(0.02)
        yield proc
    finally:
        kill(proc.pid)
        proc.wait(timeout=5)


def zombie_children(pid: int, timeout: float = 10.0) -> list[int]:
    """The zombie children of `pid`, once it has one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [c.pid for c in psutil.Process(pid).children() if c.status() == psutil.STATUS_ZOMBIE]
        if found:
            return found
        time.sleep(0.05)
    raise RuntimeError(f"pid {pid} has no zombie child")


def wait_state(pid: int, letter: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(f"/proc/{pid}/stat") as stat:
            if stat.read().rsplit(")", 1)[1].split()[0] == letter:
                return
        time.sleep(0.02)
    raise RuntimeError(f"pid {pid} never reached state {letter}")


def run(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


__all__ = ["child", "run", "wait_state", "zombie_children"]
