"""The machine's filesystems as the storage analyzers see them, from /proc/self/mountinfo.

Why mountinfo and not /proc/mounts: it gives each mount's device number (so bind mounts of one
filesystem count once), the part of the filesystem mounted (a bind mount of a subdirectory has a
root other than /), and both option sets: the mount's own (a read-only bind mount) and the
superblock's (the filesystem itself read-only, as after an error).

What is measured: filesystems that hold files a person can fill, disk-backed or in memory (tmpfs).
Skipped: kernel and virtual filesystems, read-only images (squashfs, iso9660, erofs: full by
design), and network filesystems (a statvfs on a dead server hangs the check; the tools can still
look at them).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from appliance.analyzers.procfs import read_text
from appliance.analyzers.readings import Readings

PSEUDO = frozenset({
    "proc", "sysfs", "devpts", "mqueue", "securityfs", "pstore", "bpf", "configfs", "fusectl", "hugetlbfs",
    "binfmt_misc", "rpc_pipefs", "nfsd", "selinuxfs", "cgroup", "cgroup2", "debugfs", "tracefs", "autofs",
    "nsfs", "efivarfs", "devtmpfs", "fuse.gvfsd-fuse", "fuse.portal", "fuse.lxcfs", "fuse.snapfuse",
    "ramfs", "rootfs", "overlayfs-lower",
})
IMAGES = frozenset({"squashfs", "iso9660", "udf", "erofs", "cramfs", "romfs"})
NETWORK = frozenset({"nfs", "nfs4", "cifs", "smb3", "smbfs", "ceph", "glusterfs", "9p", "afs", "fuse.sshfs",
                     "sshfs", "davfs", "fuse.rclone", "lustre", "gpfs", "beegfs", "virtiofs"})
IN_MEMORY = frozenset({"tmpfs"})
DISK_WRITABLE = frozenset({"ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "jfs", "reiserfs", "vfat", "exfat",
                           "ntfs", "ntfs3", "fuseblk", "zfs", "bcachefs", "nilfs2", "overlay"})


@dataclass(frozen=True)
class Mount:
    device: str  # major:minor
    root: str  # the part of the filesystem mounted here ("/" unless a bind mount of a subdirectory)
    mountpoint: str
    mount_options: frozenset[str]
    fstype: str
    source: str
    super_options: frozenset[str]

    @property
    def mount_ro(self) -> bool:
        return "ro" in self.mount_options

    @property
    def super_ro(self) -> bool:
        """The filesystem itself is read-only: `ro`, or ext4's `emergency_ro` (Linux ≥ 6.x marks a
        filesystem it stopped writing after an error this way, keeping `rw` in the options)."""
        return "ro" in self.super_options or "emergency_ro" in self.super_options


def _unescape(text: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes (\\040)."""
    return text.encode("latin-1", "backslashreplace").decode("unicode_escape") if "\\" in text else text


def parse(text: str) -> list[Mount]:
    mounts = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if not sep or len(fields) < 6 or len(tail) < 3:
            continue
        mounts.append(Mount(fields[2], _unescape(fields[3]), _unescape(fields[4]), frozenset(fields[5].split(",")),
                            tail[0], _unescape(tail[1]), frozenset(tail[2].split(","))))
    return mounts


def all_mounts(readings: Readings) -> list[Mount]:
    return readings.get("mountinfo", lambda: parse(read_text("/proc/self/mountinfo")))


def is_storage(mount: Mount) -> bool:
    """A filesystem a person can fill: not virtual, not an image, not on the network."""
    return not (mount.fstype in PSEUDO or mount.fstype in IMAGES or mount.fstype in NETWORK
                or mount.fstype.startswith("fuse.") and mount.fstype not in ("fuse.ntfs-3g", "fuseblk")
                or mount.mountpoint.startswith(("/proc/", "/sys/")))


@dataclass(frozen=True)
class Filesystem:
    """One storage filesystem, once (its shortest mount point), with its statvfs."""

    mount: Mount
    stat: os.statvfs_result

    @property
    def size(self) -> int:
        return self.stat.f_blocks * self.stat.f_frsize

    @property
    def available(self) -> int:
        """What an ordinary user can still write (root's reserve excluded, as df shows it)."""
        return self.stat.f_bavail * self.stat.f_frsize

    @property
    def used(self) -> int:
        return (self.stat.f_blocks - self.stat.f_bfree) * self.stat.f_frsize

    @property
    def used_percent(self) -> float:
        """df's Use%: used / (used + available), so a disk whose reserve is all that is left is 100 %."""
        whole = self.used + self.available
        return round(100.0 * self.used / whole, 1) if whole else 0.0


def _preference(mount: Mount) -> tuple[bool, int]:
    """The filesystem's own root before a bind mount of a subdirectory, then the shortest path."""
    return mount.root != "/", len(mount.mountpoint)


def filesystems(readings: Readings) -> list[Filesystem]:
    """Every storage filesystem once, measured (the shared reading of the storage analyzers)."""

    def measure() -> list[Filesystem]:
        chosen: dict[str, Mount] = {}
        for mount in all_mounts(readings):
            if not is_storage(mount):
                continue
            best = chosen.get(mount.device)  # tmpfs instances have device numbers of their own too
            if best is None or _preference(mount) < _preference(best):
                chosen[mount.device] = mount
        found = []
        for mount in sorted(chosen.values(), key=lambda m: m.mountpoint):
            try:
                stat = os.statvfs(mount.mountpoint)
            except OSError:
                continue  # unmounted meanwhile, or hidden under another mount
            if stat.f_blocks:
                found.append(Filesystem(mount, stat))
        return found

    return readings.get("filesystems", measure)
