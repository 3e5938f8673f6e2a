"""Real resource faults for the analyzer and `appliance check` tests: tmpfs mounts, memory control
groups, and processes that are not descendants of the test (the eval's Sandbox re-parents them).

Root and mount(8) are needed; without them the test is skipped with a loud reason, and under CI
(env CI set, where tests run as root) it fails instead, so a CI run never skips these silently.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

import pytest

MIB = 1 << 20


def need(condition: bool, reason: str) -> None:
    if condition:
        return
    message = f"!!! RESOURCE FAULT NOT PLANTED: {reason}; this test did NOT run"
    if os.environ.get("CI"):
        pytest.fail(message, pytrace=False)
    print(message, file=sys.stderr)
    pytest.skip(message)


def need_root() -> None:
    need(os.geteuid() == 0 and shutil.which("mount") is not None, "needs root and mount(8)")


@contextlib.contextmanager
def tmpfs(where: Path, options: str) -> Iterator[Path]:
    """A tmpfs mounted at `where` with `options` (e.g. size=8m), lazily unmounted afterwards."""
    need_root()
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "an-test", str(where)],
                          capture_output=True, text=True)
    need(done.returncode == 0, f"mount -t tmpfs failed: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def remount(where: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(where)], check=True, capture_output=True)


def fill(path: Path, size: int | None = None) -> int:
    """Write real bytes into `path` until `size` or until the filesystem is full; bytes written."""
    written = 0
    block = os.urandom(MIB)
    with open(path, "wb", buffering=0) as handle:
        while size is None or written < size:
            try:
                written += handle.write(block[: MIB if size is None else min(MIB, size - written)])
            except OSError:
                break
    return written


class MemoryGroup:
    """A memory control group with a limit (cgroup v2 or v1), removed afterwards."""

    def __init__(self, limit: int) -> None:
        need_root()
        name = f"appliance-test-{os.getpid()}-{time.monotonic_ns() % 100000}"
        if os.path.exists("/sys/fs/cgroup/cgroup.controllers"):
            self.path = Path("/sys/fs/cgroup") / name
            limit_file = "memory.max"
            control = Path("/sys/fs/cgroup/cgroup.subtree_control")
            if "memory" not in control.read_text().split():
                with contextlib.suppress(OSError):  # v2: children get the controller only when enabled
                    control.write_text("+memory")
        else:
            self.path = Path("/sys/fs/cgroup/memory") / name
            limit_file = "memory.limit_in_bytes"
        try:
            self.path.mkdir()
            (self.path / limit_file).write_text(str(limit))
        except OSError as exc:
            need(False, f"cannot make a memory cgroup at {self.path}: {exc}")

    def add(self, pid: int) -> None:
        (self.path / "cgroup.procs").write_text(str(pid))

    def remove(self) -> None:
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.05)  # its last process is still exiting


# Python run inside a Sandbox process: wait for the file `go` in its working directory, then do
# the work; `done` tells the test it is finished (cwd is the sandbox root).
WAIT_FOR_GO = "while not os.path.exists('go'):\n    time.sleep(0.01)\n"
SAY_DONE = "open('done', 'w').close()\n"
SLEEP_FOREVER = "while True:\n    time.sleep(60)\n"


def go_and_wait(root: Path, *, timeout: float = 20.0, pid: int | None = None) -> bool:
    """Start a waiting Sandbox process and wait for its `done` (False when `pid` died first)."""
    (root / "go").touch()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (root / "done").exists():
            return True
        if pid is not None and not _alive(pid):
            return False
        time.sleep(0.02)
    raise TimeoutError("the fault process did not finish its set-up")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@contextlib.contextmanager
def swapfile(where: Path, size: int) -> Iterator[Path]:
    """A swap file of `size` bytes, on while the block runs (the test's swap only: a lower priority
    than any swap the machine has, and off again before the file is removed)."""
    need_root()
    need(all(shutil.which(p) for p in ("mkswap", "swapon", "swapoff")), "needs mkswap, swapon and swapoff")
    path = where / "swapfile"
    fill(path, size)
    path.chmod(0o600)
    made = subprocess.run(["mkswap", str(path)], capture_output=True, text=True)
    on = made.returncode == 0 and subprocess.run(["swapon", "--priority", "-2", str(path)],
                                                 capture_output=True, text=True)
    need(bool(on) and on.returncode == 0, f"cannot turn on a swap file: {(on.stderr if on else made.stderr).strip()}")
    try:
        yield path
    finally:
        subprocess.run(["swapoff", str(path)], capture_output=True)
        path.unlink(missing_ok=True)


@contextlib.contextmanager
def ext4_image(where: Path, options: str = "rw", size: int = 16 * MIB) -> Iterator[tuple[Path, str]]:
    """A small ext4 filesystem in a file, loop-mounted at where/mnt; yields (mount point, loop device)."""
    need_root()
    need(all(shutil.which(p) for p in ("mkfs.ext4", "losetup")), "needs mkfs.ext4 and losetup")
    image, mnt = where / "ext4.img", where / "mnt"
    with open(image, "wb") as handle:
        handle.truncate(size)
    made = subprocess.run(["mkfs.ext4", "-q", "-F", str(image)], capture_output=True, text=True)
    need(made.returncode == 0, f"mkfs.ext4 failed: {made.stderr.strip()}")
    mnt.mkdir()
    done = subprocess.run(["mount", "-o", f"loop,{options}", str(image), str(mnt)], capture_output=True, text=True)
    need(done.returncode == 0, f"cannot loop-mount an ext4 image: {done.stderr.strip()}")
    try:
        source = subprocess.run(["findmnt", "-n", "-o", "SOURCE", str(mnt)], capture_output=True, text=True).stdout.strip()
        yield mnt, source
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)
