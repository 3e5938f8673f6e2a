"""What the kernel keeps beside a file's mode: the inode flags `lsattr` reads (immutable,
append-only, ...), POSIX ACLs (`getfacl`) and file capabilities (`getcap`).

Why: "Operation not permitted" as root on a file whose mode allows writing is an immutable or
append-only flag; "Permission denied" with a mode that allows access can be an ACL; a program
that binds a low port without being root has a capability. None of them shows in `ls -l`.
Only metadata is read: the FS_IOC_GETFLAGS ioctl on a descriptor opened without reading, and
two extended attributes.
"""

from __future__ import annotations

import array
import errno
import fcntl
import grp
import os
import pwd
import stat
import struct

from appliance.tools.paths import open_noatime

FS_IOC_GETFLAGS = 0x80086601  # _IOR('f', 1, long), as e2fsprogs' lsattr calls it
# (bit, lsattr letter, plain name), in lsattr's order (e2fsprogs lib/e2p/pf.c)
INODE_FLAGS: tuple[tuple[int, str, str], ...] = (
    (0x00000001, "s", "secure deletion"), (0x00000002, "u", "undeletable"), (0x00000008, "S", "synchronous updates"),
    (0x00010000, "D", "synchronous directory updates"), (0x00000010, "i", "immutable"),
    (0x00000020, "a", "append-only"), (0x00000040, "d", "no dump"), (0x00000080, "A", "no access time updates"),
    (0x00000004, "c", "compressed"), (0x00000800, "E", "encrypted"), (0x00004000, "j", "data journalling"),
    (0x00001000, "I", "indexed directory"), (0x00008000, "t", "no tail merging"), (0x00020000, "T", "top of directory hierarchy"),
    (0x00080000, "e", "extents"), (0x00800000, "C", "no copy on write"), (0x02000000, "x", "direct access (DAX)"),
    (0x40000000, "F", "case-insensitive names"), (0x10000000, "N", "inline data"), (0x20000000, "P", "project hierarchy"),
    (0x00100000, "V", "verity protected"), (0x00000400, "m", "no compression"),
)
# Flags a person needs told about; the rest (extents, inline data) are how the filesystem stores it.
NOTABLE = frozenset({"immutable", "append-only", "no dump", "undeletable", "secure deletion", "synchronous updates",
                     "no access time updates", "compressed", "encrypted", "no copy on write", "verity protected",
                     "case-insensitive names"})

ACL_XATTR = "system.posix_acl_access"
DEFAULT_ACL_XATTR = "system.posix_acl_default"
CAP_XATTR = "security.capability"
_ACL_TAGS = {0x01: "owner", 0x02: "user", 0x04: "group", 0x08: "group", 0x10: "mask", 0x20: "others"}
CAPABILITIES = (
    "chown", "dac_override", "dac_read_search", "fowner", "fsetid", "kill", "setgid", "setuid", "setpcap",
    "linux_immutable", "net_bind_service", "net_broadcast", "net_admin", "net_raw", "ipc_lock", "ipc_owner",
    "sys_module", "sys_rawio", "sys_chroot", "sys_ptrace", "sys_pacct", "sys_admin", "sys_boot", "sys_nice",
    "sys_resource", "sys_time", "sys_tty_config", "mknod", "lease", "audit_write", "audit_control", "setfcap",
    "mac_override", "mac_admin", "syslog", "wake_alarm", "block_suspend", "audit_read", "perfmon", "bpf",
    "checkpoint_restore",
)


def inode_flags(path: str, st: os.stat_result) -> tuple[list[str], str] | str:
    """(plain names of the flags set, lsattr's letters) of a regular file or folder; or why they
    cannot be read. lsattr's way: open without following links, without reading, then the ioctl."""
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        return "only files and folders carry attributes"
    try:
        fd = open_noatime(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        return f"cannot be opened to read them ({exc.strerror})"
    try:
        buf = array.array("l", [0])
        fcntl.ioctl(fd, FS_IOC_GETFLAGS, buf, True)
    except OSError as exc:
        if exc.errno in (errno.ENOTTY, errno.EOPNOTSUPP, errno.EINVAL):
            return "this filesystem keeps no such attributes"
        return f"cannot be read ({exc.strerror})"
    finally:
        os.close(fd)
    value = buf[0] & 0xFFFFFFFF
    names = [name for bit, _, name in INODE_FLAGS if value & bit]
    letters = "".join(letter if value & bit else "-" for bit, letter, _ in INODE_FLAGS)
    return names, letters


def _xattr(path: str, name: str) -> bytes | None:
    try:
        return os.getxattr(path, name, follow_symlinks=False)
    except OSError:
        return None  # not set, or the filesystem has no xattrs: both mean "none"


def _perm(bits: int) -> str:
    return "".join(c if bits & m else "-" for c, m in (("r", 4), ("w", 2), ("x", 1)))


def _who(tag: int, ident: int) -> str:
    if tag == 0x02:
        try:
            return f"user {pwd.getpwuid(ident).pw_name}"
        except KeyError:
            return f"user {ident}"
    if tag == 0x08:
        try:
            return f"group {grp.getgrgid(ident).gr_name}"
        except KeyError:
            return f"group {ident}"
    return _ACL_TAGS.get(tag, f"tag {tag}")


def decode_acl(raw: bytes) -> list[str]:
    """The entries of a posix_acl xattr (version 2: a u32 header, then u16 tag, u16 perm, u32 id),
    as getfacl prints them in words: "user alice: rw-"."""
    if len(raw) < 4 or struct.unpack_from("<I", raw)[0] != 2:
        return []
    entries = []
    for offset in range(4, len(raw) - 7, 8):
        tag, perm, ident = struct.unpack_from("<HHI", raw, offset)
        entries.append(f"{_who(tag, ident)}: {_perm(perm)}")
    return entries


def acl(path: str) -> dict[str, list[str]]:
    """The access ACL and a folder's default ACL, only where one adds a named user, group or mask."""
    found: dict[str, list[str]] = {}
    for key, name in (("access", ACL_XATTR), ("default_for_new_entries", DEFAULT_ACL_XATTR)):
        raw = _xattr(path, name)
        if raw:
            entries = decode_acl(raw)
            if any(e.startswith(("user ", "group ", "mask")) for e in entries):
                found[key] = entries
    return found


def decode_capabilities(raw: bytes) -> dict:
    """A security.capability xattr (vfs_cap_data: magic with the effective bit, then permitted and
    inheritable words, v3 adds the root uid of its user namespace), as getcap shows it."""
    if len(raw) < 12:
        return {}
    magic = struct.unpack_from("<I", raw)[0]
    words = 1 if magic >> 24 == 1 else 2
    permitted = inheritable = 0
    for i in range(words):
        if 4 + 8 * i + 8 > len(raw):
            break
        p, h = struct.unpack_from("<II", raw, 4 + 8 * i)
        permitted |= p << (32 * i)
        inheritable |= h << (32 * i)

    def names(mask: int) -> list[str]:
        return [f"cap_{n}" for bit, n in enumerate(CAPABILITIES) if mask >> bit & 1]

    out: dict = {"permitted": names(permitted), "effective": bool(magic & 1)}
    if inheritable:
        out["inheritable"] = names(inheritable)
    return out


def capabilities(path: str) -> dict:
    raw = _xattr(path, CAP_XATTR)
    return decode_capabilities(raw) if raw else {}
