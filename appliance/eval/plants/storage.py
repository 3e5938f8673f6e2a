"""Storage faults on real tmpfs mounts inside the sandbox: a full filesystem, exhausted inodes,
space held by a deleted file that a process keeps open, a read-only mount; and what fills a folder
(on the sandbox's own disk). Each control is the same place in good health."""

from __future__ import annotations

import errno
import os
import random
from pathlib import Path

from appliance.eval.fault import MB, SLEEP_FOREVER, Fault, process_name
from appliance.eval.sandbox import Sandbox
from appliance.eval.scoring import mentions, no_culprit

_FULL_WORDS = ("full", "100%", "100 %", "no space", "out of space", "no free space", "0 bytes free", "0 b free")
_INODE_WORDS = ("inode",)
_READONLY_WORDS = ("read-only", "read only", "readonly", "mounted ro", " ro ", "(ro,", "(ro)")


def _fill_until_full(path: Path, chunk: int = MB) -> int:
    """Write `path` until the filesystem refuses (ENOSPC); the bytes written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    block = os.urandom(chunk)
    written = 0
    with open(path, "wb", buffering=0) as handle:
        size = chunk
        while size >= 4096:
            try:
                written += handle.write(block[:size])
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                size //= 2
    return written


def _mount_slots(mount: Path) -> dict[str, str]:
    return {"mount": str(mount)}


# -- filesystem full ----------------------------------------------------------------------------

def plant_filesystem_full(sandbox: Sandbox) -> Fault:
    mount = sandbox.mount_tmpfs("srv/uploads", size="16m")
    sandbox.fill("srv/uploads/incoming/photo-0001.jpg", 300 * 1024)
    big = mount / "cache" / "video-transcode.tmp"
    size = _fill_until_full(big)
    return Fault(sandbox, {"mount": str(mount), "path": str(big), "size": size, "used_percent": 100},
                 [mentions("full filesystem", [str(mount), "video-transcode"]), mentions("cause", _FULL_WORDS)],
                 slots=_mount_slots(mount))


def control_filesystem_full(sandbox: Sandbox) -> Fault:
    mount = sandbox.mount_tmpfs("srv/uploads", size="16m")
    for i in range(4):
        sandbox.fill(f"srv/uploads/incoming/photo-{i:04d}.jpg", 500 * 1024)
    return Fault(sandbox, {"mount": str(mount), "fault": None}, [no_culprit()], slots=_mount_slots(mount))


# -- inodes ---------------------------------------------------------------------------------------

def _sessions(mount: Path, count: int | None) -> int:
    """Empty session files until `count`, or until no inode is left (count None)."""
    folder = mount / "sessions"
    folder.mkdir()
    made = 0
    while count is None or made < count:
        try:
            (folder / f"sess-{made:05d}").touch()
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                raise
            break
        made += 1
    return made


def plant_inodes(sandbox: Sandbox) -> Fault:
    mount = sandbox.mount_tmpfs("var/lib/php", size="64m", inodes=512)
    made = _sessions(mount, None)
    return Fault(sandbox, {"mount": str(mount), "inodes": 512, "files": made, "path": str(mount / "sessions")},
                 [mentions("cause", _INODE_WORDS)], slots=_mount_slots(mount))


def control_inodes(sandbox: Sandbox) -> Fault:
    mount = sandbox.mount_tmpfs("var/lib/php", size="64m", inodes=512)
    made = _sessions(mount, 20)
    return Fault(sandbox, {"mount": str(mount), "inodes": 512, "files": made, "fault": None}, [no_culprit()],
                 slots=_mount_slots(mount))


# -- space held by a deleted, open file --------------------------------------------------------

def _holder(sandbox: Sandbox, mount: Path, size_mb: int, *, delete: bool) -> tuple[int, str, Path]:
    name = process_name("logshipper")
    path = mount / "outbox-2024-05.log"
    code = (
        f"handle = open({str(path)!r}, 'wb')\nblock = os.urandom(1 << 20)\n"
        f"for _ in range({size_mb}):\n    handle.write(block)\nhandle.flush()\n"
        + (f"os.unlink({str(path)!r})\n" if delete else "")
        + "ready()" + SLEEP_FOREVER
    )
    pid, _ = sandbox.spawn(name, code, args=["--spool", str(mount)])
    return pid, name, path


def plant_deleted_open(sandbox: Sandbox) -> Fault:
    mount = sandbox.mount_tmpfs("var/spool/shipper", size="64m")
    pid, name, path = _holder(sandbox, mount, 48, delete=True)
    truth = {"pid": pid, "name": name, "path": str(path), "size": 48 * MB, "mount": str(mount)}
    return Fault(sandbox, truth, [mentions("process holding the deleted file", [name, "logshipper", path.name], pid=pid)],
                 slots=_mount_slots(mount), names=(name,))


def control_deleted_open(sandbox: Sandbox) -> Fault:
    mount = sandbox.mount_tmpfs("var/spool/shipper", size="64m")
    pid, name, path = _holder(sandbox, mount, 2, delete=False)
    return Fault(sandbox, {"mount": str(mount), "fault": None, "decoy": name, "decoy_pid": pid},
                 [no_culprit(decoys=[name, "logshipper"])], slots=_mount_slots(mount), names=(name,))


# -- read-only filesystem -----------------------------------------------------------------------

def _documents(sandbox: Sandbox) -> Path:
    mount = sandbox.mount_tmpfs("home/app/documents", size="8m")
    for name in ("notes.txt", "todo.txt", "budget-2024.csv"):
        sandbox.write(f"home/app/documents/{name}", f"{name}\n" * 20)
    return mount


def plant_readonly_fs(sandbox: Sandbox) -> Fault:
    mount = _documents(sandbox)
    sandbox.remount_readonly(mount)
    return Fault(sandbox, {"mount": str(mount), "options": "ro"},
                 [mentions("read-only filesystem", [str(mount), "documents"]), mentions("cause", _READONLY_WORDS)],
                 slots=_mount_slots(mount))


def control_readonly_fs(sandbox: Sandbox) -> Fault:
    mount = _documents(sandbox)
    return Fault(sandbox, {"mount": str(mount), "options": "rw", "fault": None},
                 [no_culprit(fine=("read-write", "mounted rw", "writable"))], slots=_mount_slots(mount))


# -- what fills a folder ------------------------------------------------------------------------

_PROJECTS = ("website", "mobile-app", "docs-site")


def plant_disk_usage(sandbox: Sandbox) -> Fault:
    rng = random.Random(12)
    for project in _PROJECTS:
        for i in range(5):
            sandbox.fill(f"projects/{project}/src/module-{i}.bin", rng.randint(40, 200) * 1024)
    for i in range(24):
        sandbox.fill(f"projects/render-farm/cache/frames/frame-{i:04d}.exr", 2 * MB)
    root = sandbox.path("projects")
    return Fault(sandbox, {"path": str(root / "render-farm"), "size": 24 * 2 * MB},
                 [mentions("largest directory", ["render-farm"])], slots={"root": str(root)})


def control_disk_usage(sandbox: Sandbox) -> Fault:
    rng = random.Random(71)
    for project in (*_PROJECTS, "render-farm"):
        for i in range(5):
            sandbox.fill(f"projects/{project}/src/module-{i}.bin", rng.randint(90, 110) * 1024)
    root = sandbox.path("projects")
    return Fault(sandbox, {"path": str(root), "fault": None},
                 [no_culprit(decoys=[*_PROJECTS, "render-farm"])], slots={"root": str(root)})
