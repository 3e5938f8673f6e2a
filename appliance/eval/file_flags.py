"""File attributes a plant sets (what `chattr` sets: the FS_IOC_SETFLAGS ioctl), and the removal of
a tree that holds such files.

Why here: an immutable file refuses to be deleted even by root, so a plain `rmtree` of a sandbox
that holds one leaves it (and its folders) behind. Tear-down and the sweep after a crash remove a
tree through `remove_tree`, which clears the attributes it finds and tries again.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import struct
from pathlib import Path

FS_IOC_GETFLAGS = 0x80086601  # _IOR('f', 1, long), as lsattr reads them
FS_IOC_SETFLAGS = 0x40086602  # _IOW('f', 2, long), as chattr sets them
IMMUTABLE = 0x00000010  # FS_IMMUTABLE_FL: no change, rename, link or removal, not even by root
APPEND_ONLY = 0x00000020  # FS_APPEND_FL: opened for appending only, never removed
_LOCKING = IMMUTABLE | APPEND_ONLY  # the attributes that stop a removal


def _open(path: Path) -> int:
    return os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)


def flags(path: Path) -> int:
    """The file's attribute flags (the kernel's int, as `lsattr` reads it)."""
    fd = _open(path)
    try:
        return struct.unpack("i", fcntl.ioctl(fd, FS_IOC_GETFLAGS, struct.pack("i", 0)))[0]
    finally:
        os.close(fd)


def set_flags(path: Path, value: int) -> None:
    fd = _open(path)
    try:
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("i", value))
    finally:
        os.close(fd)


def add(path: Path, flag: int) -> None:
    """Set one attribute (`chattr +i` for IMMUTABLE) on a file or folder."""
    set_flags(path, flags(path) | flag)


def clear_tree(root: Path) -> int:
    """Clear the immutable and append-only attributes of everything under `root` (links are not
    followed); how many it cleared. Files whose filesystem has no attributes are skipped."""
    cleared = 0
    for folder, dirs, files in os.walk(root):
        for name in (*dirs, *files):
            path = Path(folder, name)
            if path.is_symlink() or not (path.is_file() or path.is_dir()):
                continue
            try:
                value = flags(path)
                if value & _LOCKING:
                    set_flags(path, value & ~_LOCKING)
                    cleared += 1
            except OSError:
                continue
    return cleared


def remove_tree(root: Path) -> None:
    """Remove `root` and everything under it; if an attribute kept something, clear it and retry."""
    shutil.rmtree(root, ignore_errors=True)
    if root.exists() and clear_tree(root):
        shutil.rmtree(root, ignore_errors=True)
