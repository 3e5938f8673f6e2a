"""Plants that live in /etc: lines added to a system file and whole files dropped into a folder,
each marked with a tag, and taken out again exactly.

Why so careful: /etc is the machine's own configuration. A plant there must leave the file as it
found it, byte for byte, even after a crash. So:

- every line or file carries a tag, `# appliance-eval-<evaluator pid>-<random>`, as a trailing
  comment of a line or as a file's first line; removal takes out only what carries the exact tag
  (a line's newline with it, and the newline the plant had to add before it when the file did not
  end with one), never anything else;
- each change is atomic: the new text goes into a temporary file in the same folder (a dotfile,
  which cron and run-parts ignore) with the old file's mode and owner, then is renamed over it;
  no reader ever sees half a file;
- two evaluators never interleave their edits: each read-modify-write holds an exclusive lock on
  the folder itself (flock on the directory: no lock file to leave behind);
- `sweep(owner)` removes everything tagged with an evaluator's pid (the reaper calls it when its
  evaluator is gone, appliance/eval/reaper.py), and `sweep_dead()` everything of evaluators no
  longer running (at the start of an evaluation, like `sandbox.sweep_stale`).

A file that is itself a mount point (a container's bind-mounted /etc/hosts) cannot be renamed
over; planting there fails with SandboxError and the case is reported as not plantable.

Only the standard library (and reaper.py, which is the same): the reaper imports this module after
its evaluator is gone.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import secrets
import tempfile
from pathlib import Path
from typing import Iterator

from appliance.eval.reaper import SandboxError, pid_alive

TAG_PREFIX = "appliance-eval-"
_TAGGED = re.compile(rf"#\s*({re.escape(TAG_PREFIX)}(\d+)-[0-9a-f]+)( joined)?\s*$")
# Where plants may go: the sweep never looks anywhere else.
HOSTS = Path("/etc/hosts")
CRON_D = Path("/etc/cron.d")
SWEPT_FILES = (HOSTS,)
SWEPT_FOLDERS = (CRON_D,)


class EtcError(SandboxError):
    """A change to /etc could not be made (the caller reports the case as not plantable)."""


def new_tag() -> str:
    return f"{TAG_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _replace(path: Path, data: bytes, like: os.stat_result | None) -> None:
    """Write `data` to `path` atomically, with `like`'s mode and owner (0644 root when new)."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{TAG_PREFIX}")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fchmod(handle.fileno(), (like.st_mode & 0o7777) if like else 0o644)
            if like is not None:
                os.fchown(handle.fileno(), like.st_uid, like.st_gid)
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if exc.errno == errno.EBUSY:
            raise EtcError(f"{path} is a mount point here and cannot be replaced") from exc
        raise EtcError(f"{path} cannot be changed: {exc.strerror or exc}") from exc


def add_lines(path: Path, lines: list[str], tag: str) -> None:
    """Append `lines` to `path`, each ending in the tag comment."""
    with _locked(path.parent):
        like = path.stat()
        old = path.read_bytes()
        joined = bool(old) and not old.endswith(b"\n")
        added = []
        for index, line in enumerate(lines):
            mark = " joined" if joined and index == 0 else ""
            added.append(f"{line}\t# {tag}{mark}\n".encode())
        _replace(path, old + (b"\n" if joined else b"") + b"".join(added), like)


def _without(data: bytes, wanted: "set[str] | None", owners: "set[int] | None") -> tuple[bytes, int]:
    """`data` less its lines tagged with one of `wanted` tags (or with one of `owners`' pids)."""
    kept: list[bytes] = []
    removed = 0
    joined_at = None  # where the plant had added a newline to the file's last line
    for raw in data.splitlines(keepends=True):
        match = _TAGGED.search(raw.decode("utf-8", "replace").rstrip("\n"))
        if match and ((wanted is not None and match.group(1) in wanted)
                      or (owners is not None and int(match.group(2)) in owners)):
            removed += 1
            if match.group(3):
                joined_at = len(kept)
            continue
        kept.append(raw)
    if joined_at is not None and joined_at == len(kept) and kept and kept[-1].endswith(b"\n"):
        kept[-1] = kept[-1][:-1]  # nothing was added after: the file ends as it did, without a newline
    return b"".join(kept), removed


def remove_lines(path: Path, tag: str) -> int:
    """Take out the lines carrying `tag`; how many went."""
    return _strip(path, {tag}, None)


def _strip(path: Path, wanted: "set[str] | None", owners: "set[int] | None") -> int:
    with _locked(path.parent):
        try:
            like = path.stat()
            old = path.read_bytes()
        except FileNotFoundError:
            return 0
        new, removed = _without(old, wanted, owners)
        if removed:
            _replace(path, new, like)
        return removed


def add_file(folder: Path, name: str, text: str, tag: str) -> Path:
    """A new file `folder/name` whose first line is the tag comment (0644, root's)."""
    target = folder / name
    with _locked(folder):
        if target.exists():
            raise EtcError(f"{target} already exists")
        _replace(target, f"# {tag}\n{text}".encode(), None)
    return target


def _file_tag(path: Path) -> re.Match | None:
    try:
        with open(path, "rb") as handle:
            first = handle.readline(256).decode("utf-8", "replace").rstrip("\n")
    except OSError:
        return None
    return _TAGGED.fullmatch(first) if first.startswith("#") else None


def remove_file(path: Path, tag: str) -> bool:
    """Remove `path` when its first line is exactly `tag`'s comment; whether it was removed."""
    with _locked(path.parent):
        match = _file_tag(path)
        if match is None or match.group(1) != tag:
            return False
        path.unlink()
        return True


def sweep(owners: "set[int]") -> int:
    """Remove every line and file tagged with one of `owners`' pids; how many things went."""
    removed = 0
    for path in SWEPT_FILES:
        with contextlib.suppress(OSError, EtcError):
            removed += _strip(path, None, owners)
    for folder in SWEPT_FOLDERS:
        with contextlib.suppress(OSError):
            with _locked(folder):
                for entry in sorted(folder.iterdir()):
                    match = _file_tag(entry) if entry.is_file() and not entry.is_symlink() else None
                    if match is not None and int(match.group(2)) in owners:
                        entry.unlink()
                        removed += 1
    return removed


def owners_tagged() -> set[int]:
    """The evaluator pids whose tags are in the swept files and folders."""
    found: set[int] = set()
    for path in SWEPT_FILES:
        with contextlib.suppress(OSError):
            found |= {int(m.group(2)) for line in path.read_text("utf-8", "replace").splitlines()
                      if (m := _TAGGED.search(line))}
    for folder in SWEPT_FOLDERS:
        with contextlib.suppress(OSError):
            found |= {int(m.group(2)) for entry in folder.iterdir()
                      if entry.is_file() and (m := _file_tag(entry))}
    return found


def sweep_dead() -> int:
    """Remove what evaluators that no longer run left in /etc (a crash that took their reaper too)."""
    dead = {pid for pid in owners_tagged() if pid != os.getpid() and not pid_alive(pid)}
    return sweep(dead) if dead else 0
