"""Filesystems that are read-only although their kind is meant for writing: "I can't save files".

The rule (docs/analyzers.md, table `readonly_fs`), decided on mountinfo's two option sets:
- only the *superblock* option counts: a read-only bind mount of a writable filesystem (a
  container's `-v /data:/data:ro`, a Kubernetes secret, a systemd ProtectSystem= view) is a
  deliberate view, and the same filesystem stays writable elsewhere; it is not a fault;
- a disk filesystem (ext4, xfs, btrfs, vfat, ...) whose superblock is read-only is a warning; it is
  critical when the kernel says why: an ext4 error count above 0, or a kernel log line that it was
  remounted/forced read-only (errors=remount-ro after an I/O or metadata error);
- a tmpfs whose superblock is read-only is a warning when it holds files (it was written, then
  made read-only); an empty read-only tmpfs holds nothing anyone could have saved: it is how
  sandboxes and containers mask a directory, so it is not a fault;
- virtual filesystems, images (squashfs, iso9660: read-only by nature) and network filesystems are
  never judged here.
"""

from __future__ import annotations

import os

from appliance.analyzers import kernel_log, procfs
from appliance.analyzers.base import CRITICAL, OK, WARNING, Analyzer, Finding
from appliance.analyzers.mounts import DISK_WRITABLE, IN_MEMORY, Mount, all_mounts, is_storage
from appliance.analyzers.naming import shown_path
from appliance.analyzers.readings import ReadingUnavailable, Readings

_REMOUNT_WORDS = ("read-only", "readonly", "remount-ro")


def _error_evidence(mount: Mount, log: list[tuple[float | None, str]]) -> str | None:
    """Why the kernel made this filesystem read-only, when it says so."""
    name = os.path.basename(mount.source)
    if mount.fstype.startswith("ext"):
        try:
            errors = int(procfs.read_text(f"/sys/fs/ext4/{name}/errors_count").strip() or 0)
        except (ReadingUnavailable, ValueError):
            errors = 0
        if errors:
            return f"ext4 reports {errors} error{'s' if errors > 1 else ''} on {name}"
    # Only what the kernel said since this device was last mounted: a loop device or a disk that is
    # mounted again must not inherit an earlier mount's errors.
    evidence = None
    for _stamp, text in log:
        lower = text.lower()
        if not name or name not in text:
            continue
        if "mounted filesystem" in lower:
            evidence = None
        elif any(word in lower for word in _REMOUNT_WORDS):
            evidence = f"kernel log: {text[:200]}"
    return evidence


def _holds_files(mountpoint: str) -> bool:
    try:
        st = os.statvfs(mountpoint)
    except OSError:
        return False
    return st.f_files - st.f_ffree > 1 or st.f_blocks > st.f_bfree


def _judge(mount: Mount, log: list) -> tuple[str, str] | None:
    """(severity, why) for a filesystem whose superblock is read-only, or None when that is normal."""
    if mount.fstype in DISK_WRITABLE:
        evidence = _error_evidence(mount, log)
        if evidence:
            return CRITICAL, f"the kernel made it read-only after errors ({evidence})"
        return WARNING, "mounted read-only although it is a writable disk filesystem"
    if mount.fstype in IN_MEMORY and _holds_files(mount.mountpoint):
        return WARNING, "a tmpfs that holds files and was made read-only"
    return None


def analyze(readings: Readings) -> list[Finding]:
    mounts = [m for m in all_mounts(readings) if is_storage(m)]
    try:
        log = kernel_log.lines(readings)
    except ReadingUnavailable:
        log = []
    findings, seen, ro_views = [], set(), 0
    for mount in mounts:
        if not mount.super_ro:
            ro_views += mount.mount_ro
            continue
        if mount.device in seen:
            continue
        seen.add(mount.device)
        judged = _judge(mount, log)
        if judged is None:
            continue
        severity, why = judged
        path = shown_path(readings, mount.mountpoint)
        findings.append(Finding("readonly_fs", severity,
                                f"{path} ({mount.fstype}, {shown_path(readings, mount.source)}) is read-only: {why}; "
                                f"writes there fail with 'Read-only file system'",
                                {"mount": path, "type": mount.fstype, "source": shown_path(readings, mount.source),
                                 "mount_options": sorted(mount.mount_options), "superblock_options": sorted(mount.super_options)},
                                culprit=path, path=path))
    if findings:
        return findings
    writable = sum(1 for m in mounts if not m.super_ro and not m.mount_ro)
    return [Finding("readonly_fs", OK,
                    f"no filesystem is unexpectedly read-only: {writable} writable mount{'s' if writable != 1 else ''}; "
                    f"{ro_views} read-only view{'s' if ro_views != 1 else ''} of writable filesystems (bind mounts, "
                    f"by design); empty read-only tmpfs masks: {len(seen)}", {"writable_mounts": writable, "readonly_bind_views": ro_views,
                                     "readonly_filesystems_by_design": len(seen)})]


ANALYZER = Analyzer("readonly_fs", ("read only", "readonly", "read-only", "save", "write", "cannot write",
                                    "filesystem", "erofs"), analyze)
