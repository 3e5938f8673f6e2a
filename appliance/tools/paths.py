"""The one path policy every tool that touches a path goes through.

Two kinds of access, because they leak different things:
- `read` (file contents: read_file, read_log) is confined to the read roots: logs, system
  configuration, /proc and /sys, temporary directories, plus any `--allow-path`.
- `list` (names, sizes, times: list_dir, dir_sizes, largest_files) may look anywhere on the machine,
  since "what is filling my disk?" needs the whole tree; contents are never read this way.
A deny-list of secret places wins over every allow for both kinds, and is checked on the path as
written AND on the path after resolving symlinks and `..`, so neither a symlink named `notes` that
points into `~/.ssh` nor a `~/.ssh` that is itself a symlink elsewhere gets through.

Opening re-checks what was decided: `O_NOFOLLOW`, then `fstat` must show the same regular file
(device and inode) and /proc/self/fd must name the same path, so a swap between check and open is
refused rather than followed. Reads use `O_NOATIME` where permitted, so looking leaves no trace.
"""

from __future__ import annotations

import errno
import glob
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Literal, Sequence

from appliance.tools.base import DENIED, ToolResult, fail
from appliance.tools.components import look_up
from appliance.tools.credential_content import HEAD_BYTES, credential_reason
from appliance.tools.deny_list import secret_child, secret_reason  # noqa: F401 (walkers import secret_child from here)

Purpose = Literal["read", "list"]

DEFAULT_READ_ROOTS = (
    "/var/log", "/run/log", "/etc", "/proc", "/sys", "/tmp", "/var/tmp",
    "/usr/lib/systemd", "/lib/systemd", "/usr/lib/os-release", "/boot",
)
DEFAULT_LIST_ROOTS = ("/",)

class PathDenied(Exception):
    """The policy refused a path. `str(exc)` says why, in a sentence meant for the model."""

    def as_result(self) -> ToolResult:
        return fail(str(self), DENIED)


@dataclass(frozen=True)
class PathPolicy:
    """Which paths the tools may read or list. Build with `PathPolicy.default()` or directly."""

    read_roots: tuple[Path, ...]
    list_roots: tuple[Path, ...] = (Path("/"),)
    home: Path = field(default_factory=Path.home)
    # Places the person added (--allow-path, or a confined policy's roots): a hard link there is never trusted.
    added_roots: tuple[Path, ...] = ()

    @classmethod
    def default(cls, extra_roots: Sequence[str | os.PathLike] = ()) -> "PathPolicy":
        """Logs, configuration, /proc, /sys and temp dirs readable; names and sizes anywhere;
        `extra_roots` (from --allow-path) readable too."""
        home = Path.home()
        extras = tuple(_root(r, home) for r in extra_roots)
        reads = tuple(_root(r, home) for r in DEFAULT_READ_ROOTS if os.path.lexists(r)) + extras
        lists = tuple(_root(r, home) for r in DEFAULT_LIST_ROOTS) + extras
        return cls(read_roots=_unique(reads), list_roots=_unique(lists), home=home, added_roots=_unique(extras))

    @classmethod
    def confined(cls, roots: Iterable[str | os.PathLike]) -> "PathPolicy":
        """Only `roots`, for reading and listing (tests, or a locked-down deployment)."""
        home = Path.home()
        resolved = _unique(tuple(_root(r, home) for r in roots))
        return cls(read_roots=resolved, list_roots=resolved, home=home, added_roots=resolved)

    # -- deciding ---------------------------------------------------------------------------------

    def resolve(self, path: str, purpose: Purpose = "read") -> Path:
        """The real absolute path, if the policy allows `purpose` on it; else raise PathDenied."""
        if not isinstance(path, str) or not path.strip():
            raise PathDenied("no path given")
        if "\x00" in path:
            raise PathDenied("the path contains a NUL byte")
        if len(path) > 4096:
            raise PathDenied("the path is longer than 4096 characters")
        expanded = os.path.expanduser(path.strip()) if path.strip().startswith("~") else path.strip()
        if not os.path.isabs(expanded):
            raise PathDenied(f"{path!r} is not absolute; give a full path starting with / or ~")
        lexical = Path(os.path.normpath(expanded))  # for the deny-list check of the name as written
        reason = secret_reason(lexical)
        if reason is not None:  # before resolving: /proc/N/root cannot even be resolved without ptrace access
            raise PathDenied(f"{path} is off limits: {reason}")
        real = Path(os.path.realpath(expanded))  # the kernel's reading: symlinks first, then ".."
        reason = secret_reason(real)
        if reason is not None:
            raise PathDenied(f"{path} is off limits: {reason}")
        roots = self.read_roots if purpose == "read" else self.list_roots
        if not _within(real, roots):
            where = ", ".join(str(r) for r in roots) or "nothing"
            shown = f"{path} (really {real})" if str(real) != str(lexical) else path
            raise PathDenied(f"{shown} is outside the allowed places ({where}); the user can add it with --allow-path")
        return real

    def explain(self, path: str, purpose: Purpose = "read") -> str | None:
        """None when allowed, else the reason it is denied."""
        try:
            self.resolve(path, purpose)
        except PathDenied as exc:
            return str(exc)
        return None

    def is_secret(self, path: Path) -> bool:
        """For walkers: True when an entry found while listing must be skipped."""
        return secret_reason(path) is not None

    # -- opening ----------------------------------------------------------------------------------

    def _missing(self, path: str, real: Path) -> str:
        """Why `path` does not exist, from a lookup of the path as written (a link to a target that
        is gone is named, not the folder the resolved target would be in), plus the last folder the
        lookup reached when listing it is allowed: a small model that guessed a sub-path
        ("/opt/billing/db") gets told where to look instead of concluding that a folder is missing."""
        written = os.path.normpath(os.path.expanduser(path.strip()))
        found = look_up(written)
        reason = f"{path} does not exist" + (f": {found.problem}" if found.problem else "")
        reached = Path(found.stopped_at or real.parent)
        if reached.is_dir() and _within(reached, self.list_roots) and secret_reason(reached) is None:
            return f"{reason}; the last folder reached is {reached} (list_dir shows what is there)"
        return reason

    def open_file(self, path: str) -> tuple[int, Path, os.stat_result]:
        """Open an allowed regular file for reading; returns (fd, real path, fstat). The caller closes fd."""
        real = self.resolve(path, "read")
        try:
            before = os.stat(real)
        except FileNotFoundError:
            raise FileNotFoundError(self._missing(path, real)) from None
        _refuse_special(path, before.st_mode)
        if stat.S_ISDIR(before.st_mode):
            raise IsADirectoryError(f"{path} is a directory; use list_dir")
        fd = open_noatime(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            after = os.fstat(fd)
            if not stat.S_ISREG(after.st_mode) or (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino):
                raise PathDenied(f"{path} changed while it was being checked; refusing to read it")
            _check_fd_path(fd, real, path)
            self._check_links(path, real, after)
            why = _judged(fd, str(real), after)
            if why:
                raise PathDenied(f"{path} is off limits: {why}; refused whole")
        except BaseException:
            os.close(fd)
            raise
        return fd, real, after

    def _check_links(self, path: str, real: Path, st: os.stat_result) -> None:
        """A file with more than one name is read only when the policy can trust it (see
        LINK_TRUSTED_ROOTS): the deny-list looks at names, and another name of the same file could
        be `secret/.env` (`ln secret/.env allowed/notes.txt`)."""
        if st.st_nlink <= 1:
            return
        trusted = (
            st.st_uid == 0
            and _within(real, LINK_TRUSTED_ROOTS)
            and not _within(real, self.added_roots)
            and (st.st_dev, st.st_ino) not in _secret_inodes()
        )
        if not trusted:
            raise PathDenied(
                f"{path} has {st.st_nlink} hard links, and another of its names may be a denied file; a file with "
                f"several names is read only when root owns it under {', '.join(map(str, LINK_TRUSTED_ROOTS))} "
                f"(never in places added with --allow-path)"
            )

    def open_dir(self, path: str, purpose: Purpose = "list") -> tuple[int, Path]:
        """Open an allowed directory (O_DIRECTORY|O_NOFOLLOW); returns (fd, real path)."""
        real = self.resolve(path, purpose)
        try:
            fd = open_noatime(real, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            raise FileNotFoundError(self._missing(path, real)) from None
        except NotADirectoryError:
            raise NotADirectoryError(f"{path} is not a directory") from None
        try:
            _check_fd_path(fd, real, path)
        except BaseException:
            os.close(fd)
            raise
        return fd, real


# Where a file with several hard links may still be read: system directories only root can write
# (so only root could have linked a file there), never /tmp, /var/tmp or places the person added.
LINK_TRUSTED_ROOTS = tuple(Path(p) for p in (
    "/etc", "/var/log", "/run/log", "/usr/lib/systemd", "/lib/systemd", "/usr/lib/os-release", "/boot",
))
_SECRET_FILES = ("/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/shadow-", "/etc/gshadow-", "/etc/security/opasswd",
                 "/etc/krb5.keytab")
_SECRET_GLOBS = ("/etc/ssh/ssh_host_*_key", "/etc/ssl/private/*", "/root/.ssh/*")


def _secret_inodes() -> set[tuple[int, int]]:
    """(device, inode) of the well-known secret files, so even root's own link to one is refused."""
    found = set()
    for name in (*_SECRET_FILES, *(hit for pattern in _SECRET_GLOBS for hit in glob.glob(pattern))):
        try:
            st = os.stat(name)
        except OSError:
            continue
        found.add((st.st_dev, st.st_ino))
    return found


_JUDGED: dict[tuple[int, int, int, int], str | None] = {}  # (device, inode, size, mtime) -> why refused
_JUDGED_LIMIT = 2048


def _judged(fd: int, real: str, st: os.stat_result) -> str | None:
    """Why the open file is a credential store by its content (credential_content), judged once per
    version of the file: its start is read with pread, so the caller's offset is untouched."""
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    if key not in _JUDGED:
        if len(_JUDGED) >= _JUDGED_LIMIT:
            _JUDGED.clear()
        try:
            head = os.pread(fd, HEAD_BYTES, 0)
        except OSError:
            return None  # the reader's own read will say what is wrong
        _JUDGED[key] = credential_reason(real, head)
    return _JUDGED[key]


def _within(path: Path, roots) -> bool:
    """`path` is one of `roots` or inside one (by path components, not string prefixes)."""
    return any(path == root or path.is_relative_to(root) for root in roots)


def read_capped(fd: int, limit: int) -> bytes:
    """Up to `limit` bytes from the start of an open file (works for /proc files of size 0)."""
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 16))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _refuse_special(path: str, mode: int) -> None:
    if stat.S_ISFIFO(mode):
        raise PathDenied(f"{path} is a FIFO (named pipe); reading it could block or consume data")
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        raise PathDenied(f"{path} is a device; devices are never read")
    if stat.S_ISSOCK(mode):
        raise PathDenied(f"{path} is a socket, not a file")


def open_noatime(path: Path | str, flags: int) -> int:
    """Open without updating the access time when the kernel lets us (owner or root)."""
    noatime = getattr(os, "O_NOATIME", 0)
    if noatime:
        try:
            return os.open(path, flags | noatime)
        except PermissionError:
            pass
        except OSError as exc:
            if exc.errno not in (errno.EPERM, errno.EINVAL):
                raise
    return os.open(path, flags)


def _check_fd_path(fd: int, real: Path, shown: str) -> None:
    try:
        opened = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return  # no /proc: the dev/inode check above is what we have
    if opened != str(real):
        raise PathDenied(f"{shown} changed while it was being checked; refusing it")


def _root(value: str | os.PathLike, home: Path) -> Path:
    text = os.fspath(value)
    if "\x00" in text:
        raise ValueError("a root path contains a NUL byte")
    if text.startswith("~"):
        text = str(home) + text[1:]
    return Path(os.path.realpath(os.path.abspath(text)))


def _unique(paths: tuple[Path, ...]) -> tuple[Path, ...]:
    return tuple(dict.fromkeys(paths))
