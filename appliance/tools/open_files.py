"""A process's open files by name (what `lsof -p PID` shows): the targets of /proc/PID/fd, each with the
mode it was opened in (/proc/PID/fdinfo flags), sockets as their addresses, pipes and anonymous
inodes as such, deleted files marked.

Only links are read (readlink of /proc/PID/fd/N) and the fdinfo flags: no file is ever opened. Each
name goes through the path policy's name rules (`paths.secret_reason`): a name the policy would
refuse to read is shown as its nearest folder that it would not, with why the name is withheld.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from appliance.tools import units
from appliance.tools.paths import secret_reason

MAX_FDS = 5000  # descriptors read per process
DELETED = " (deleted)"
_ACCESS = {0: "read", 1: "write", 2: "read/write"}
O_APPEND = 0o2000


@dataclass(frozen=True)
class OpenFile:
    """One descriptor: fd, kind (file, socket, pipe, anonymous, other), the shown name, mode,
    deleted, and a deleted file's size in bytes (it still holds that space)."""

    fd: int
    kind: str
    name: str
    mode: str
    deleted: bool = False
    size: int | None = None

    def as_dict(self) -> dict:
        out: dict = {"fd": self.fd, "type": self.kind, "name": self.name, "mode": self.mode}
        if self.deleted:
            out["deleted"] = True
            if self.size is not None:
                out["deleted_size"] = units.size(self.size)
        return out


@dataclass(frozen=True)
class Descriptors:
    """Every descriptor read (up to MAX_FDS) and the total the process has."""

    files: tuple[OpenFile, ...]
    total: int

    def writing(self) -> list[str]:
        """The names of the files (not sockets or pipes) open for writing."""
        return [f.name for f in self.files if f.kind == "file" and "write" in f.mode]

    def reading(self) -> list[str]:
        return [f.name for f in self.files if f.kind == "file" and f.mode.startswith("read") and "write" not in f.mode]

    def deleted(self) -> list[OpenFile]:
        return [f for f in self.files if f.deleted and f.kind == "file"]


def shown_name(path: str) -> str:
    """`path` as the policy lets it be named: itself, or its nearest folder that is not secret (the
    policy's reason quotes the name, so it is not given: a key's name says where a key is)."""
    if secret_reason(path) is None:
        return path
    folder = Path(path).parent
    while secret_reason(folder) is not None and folder != folder.parent:
        folder = folder.parent
    return f"{folder}/… (name withheld: the path policy treats it as a key, credentials or a secret place)"


def mode_of(pid: int, fd: int) -> str:
    """read, write or read/write (and append), from the flags of /proc/PID/fdinfo/FD."""
    try:
        with open(f"/proc/{pid}/fdinfo/{fd}", encoding="ascii", errors="replace") as info:
            for line in info:
                if line.startswith("flags:"):
                    flags = int(line.split()[1], 8)
                    mode = _ACCESS.get(flags & 3, "?")
                    return mode + (", append" if flags & O_APPEND else "")
    except (OSError, ValueError, IndexError):
        pass
    return "unknown"


def _address(addr: Any) -> str:
    if not addr:
        return ""
    if isinstance(addr, str):
        return addr
    ip, port = str(addr[0]), addr[1]
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


def socket_text(conn: Any) -> str:
    """A socket as a person reads it: protocol, addresses and state."""
    family, kind = conn.family, conn.type
    local, remote = _address(conn.laddr), _address(conn.raddr)
    if family == socket.AF_UNIX:
        return f"unix socket {local or remote or '(unnamed)'}"
    proto = ("TCP" if kind == socket.SOCK_STREAM else "UDP") + ("v6" if family == socket.AF_INET6 else "")
    state = conn.status or ""
    if state == psutil.CONN_LISTEN:
        return f"{proto} listening on {local}"
    if remote:
        return f"{proto} {local} to {remote}" + (f" ({state.lower()})" if state and state != psutil.CONN_NONE else "")
    return f"{proto} bound to {local}" if local else f"{proto} socket (not bound)"


def connections(proc: psutil.Process) -> list:
    """The process's sockets (psutil matches socket:[inode] against /proc/net/*); [] when denied."""
    try:
        return list(proc.net_connections(kind="all"))
    except (psutil.AccessDenied, psutil.NoSuchProcess):
        return []


def _entry(pid: int, fd: int, target: str, sockets: dict[int, Any]) -> OpenFile:
    mode = mode_of(pid, fd)
    if target.startswith("socket:"):
        conn = sockets.get(fd)
        return OpenFile(fd, "socket", socket_text(conn) if conn is not None else "socket (address not in the kernel's "
                        "tables: netlink or another family)", mode)
    if target.startswith("pipe:"):
        return OpenFile(fd, "pipe", f"pipe {target[5:]}", mode)
    if target.startswith("anon_inode:"):
        return OpenFile(fd, "anonymous", target[len("anon_inode:"):].strip("[]") + " (anonymous inode)", mode)
    if not target.startswith("/"):
        return OpenFile(fd, "other", target, mode)
    deleted = target.endswith(DELETED)
    name = target[: -len(DELETED)] if deleted else target
    if name.startswith("/memfd:"):
        return OpenFile(fd, "anonymous", f"memory file {name[7:]}", mode, deleted)
    size = None
    if deleted:
        try:
            size = os.stat(f"/proc/{pid}/fd/{fd}").st_size  # the inode it still holds (stat, not open)
        except OSError:
            size = None
    return OpenFile(fd, "file", shown_name(name), mode, deleted, size)


def descriptors(proc: psutil.Process) -> Descriptors:
    """Every open descriptor of `proc`, by fd number (PermissionError when the kernel refuses)."""
    pid = proc.pid
    names = sorted((int(n) for n in os.listdir(f"/proc/{pid}/fd") if n.isdigit()))
    sockets = {c.fd: c for c in connections(proc) if getattr(c, "fd", -1) >= 0}
    found = []
    for fd in names[:MAX_FDS]:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue  # closed between the listing and the read
        found.append(_entry(pid, fd, target, sockets))
    return Descriptors(tuple(found), len(names))


def listening_and_connected(conns: list) -> tuple[list[str], list[str]]:
    """The inet sockets that listen, and those connected to a remote address."""
    listening = [socket_text(c) for c in conns if getattr(c, "status", "") == psutil.CONN_LISTEN
                 or (c.type == socket.SOCK_DGRAM and c.family != socket.AF_UNIX and not c.raddr)]
    connected = [socket_text(c) for c in conns if c.family != socket.AF_UNIX and c.raddr]
    return listening, connected
