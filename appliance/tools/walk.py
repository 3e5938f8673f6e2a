"""A bounded walk of one filesystem's tree, for what fills a disk and what changed in a folder.

A walk stays on one filesystem, never follows symlinks, counts allocated blocks (what `du` shows,
not apparent size), counts each hard-linked inode once, opens directories with O_NOATIME so it
leaves no trace, and stops at an entry budget or a deadline. When it stops early the result is
`partial` and says what was skipped, so a partial scan can never pass for a complete one.
Secret places (see paths.py) are summed into their parent's total but never named or opened for
their contents' names in the results.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from appliance.tools import units
from appliance.tools.paths import secret_child

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NOATIME = getattr(os, "O_NOATIME", 0)


@dataclass
class WalkStats:
    """Counts of what a walk saw and what it skipped, and why it stopped (None: it finished)."""

    files: int = 0
    dirs: int = 0
    entries: int = 0
    bytes: int = 0
    other_filesystems: int = 0
    unreadable: int = 0
    symlinks_not_followed: int = 0
    secret_places: int = 0
    hard_links_counted_once: int = 0
    changed_during_walk: int = 0  # queued folders swapped (for a symlink) or moved before they were listed
    stopped: str | None = None
    elapsed: float = 0.0
    dirs_pending: int = 0

    def as_data(self) -> dict:
        skipped = {
            "other_filesystems": self.other_filesystems, "unreadable": self.unreadable,
            "symlinks_not_followed": self.symlinks_not_followed, "secret_places_summed_only": self.secret_places,
            "folders_changed_during_scan": self.changed_during_walk,
        }
        data = {
            "files": self.files, "dirs": self.dirs, "total": units.size(self.bytes),
            "skipped": {k: v for k, v in skipped.items() if v},
            "elapsed_seconds": round(self.elapsed, 2),
            "partial": self.stopped is not None or self.unreadable > 0 or self.changed_during_walk > 0,
        }
        if self.stopped:
            data["stopped_by"] = self.stopped
            data["dirs_not_scanned"] = self.dirs_pending
        return data


@dataclass(frozen=True)
class Found:
    """One entry met by the walk. `parts` is its path relative to the root; `named_depth` is how
    many leading parts may be shown (all, unless it lies inside a secret place)."""

    parts: tuple[str, ...]
    st: os.stat_result
    is_dir: bool
    named_depth: int
    allocated: int


def walk(root: Path, root_fd: int, stats: WalkStats, max_entries: int, deadline: float) -> Iterator[Found]:
    """Breadth first (so a stopped scan still covers the top levels evenly). Closes root_fd."""
    state = _Walk(root, root_fd, stats, max_entries, deadline)
    try:
        while state.queue:
            parts, dirpath, fd, named_depth, identity = state.queue.popleft()
            if fd is None:
                fd = state.reopen(parts, identity)
                if fd is None:
                    continue
            try:
                with os.scandir(fd) as listing:
                    for entry in listing:
                        if state.out_of_budget():
                            return
                        found = state.visit(entry, parts, dirpath, named_depth)
                        if found is not None:
                            yield found
            except OSError:
                stats.unreadable += 1
            finally:
                os.close(fd)
    finally:
        state.close()


class _Walk:
    """What one walk carries from entry to entry: the directories still to list (each as relative
    parts, absolute path, open fd or None, named depth, and the (device, inode) it had when it was
    met), the inodes already counted, the budget.

    A queued directory is reopened from the walk's own descriptor of the root, one component at a
    time, each relative to its parent's descriptor with O_NOFOLLOW|O_DIRECTORY, and must still be
    the directory that was met: never by absolute path, so a folder swapped for a symlink (or moved)
    between being met and being listed is skipped and counted, never followed."""

    def __init__(self, root: Path, root_fd: int, stats: WalkStats, max_entries: int, deadline: float) -> None:
        root_st = os.fstat(root_fd)
        self.root_dev = root_st.st_dev
        self.anchor = os.dup(root_fd)  # kept until the walk ends: every reopening starts here
        self.seen_inodes: set[tuple[int, int]] = set()
        self.queue: deque[tuple[tuple[str, ...], str, int | None, int, tuple[int, int]]] = deque(
            [((), str(root), root_fd, 1 << 30, (root_st.st_dev, root_st.st_ino))])
        self.stats = stats
        self.max_entries = max_entries
        self.deadline = deadline
        self.started = time.monotonic()

    def out_of_budget(self) -> bool:
        """Count one more entry; True (and the reason in stats) when the budget or deadline is spent."""
        stats = self.stats
        stats.entries += 1
        if stats.entries >= self.max_entries:
            stats.stopped = f"entry budget ({self.max_entries:,} entries)"
        elif not stats.entries & 255 and time.monotonic() > self.deadline:
            stats.stopped = f"deadline ({self.deadline - self.started:.0f} s)"
        if stats.stopped:
            stats.dirs_pending = len(self.queue) + 1
            return True
        return False

    def reopen(self, parts: tuple[str, ...], identity: tuple[int, int]) -> int | None:
        """A descriptor of the queued directory `parts`, opened component by component from the
        root's descriptor without following any symlink; None (counted) when it cannot be opened or
        is no longer the directory that was met."""
        fd = self.anchor
        try:
            for name in parts:
                try:
                    child = os.open(name, _DIR_FLAGS | _NOATIME, dir_fd=fd)
                except PermissionError:
                    child = os.open(name, _DIR_FLAGS, dir_fd=fd)  # O_NOATIME needs ownership
                if fd != self.anchor:
                    os.close(fd)
                fd = child
        except OSError as exc:
            if fd != self.anchor:
                os.close(fd)
            if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
                self.stats.changed_during_walk += 1  # swapped for a symlink or a file, or moved away
            else:
                self.stats.unreadable += 1
            return None
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != identity:
            os.close(fd)
            self.stats.changed_during_walk += 1
            return None
        return fd

    def visit(self, entry: os.DirEntry, parts: tuple[str, ...], dirpath: str, named_depth: int) -> Found | None:
        """The entry as a Found to count (queueing it when a directory), or None when it is skipped:
        unreadable, a symlink, on another filesystem, or a hard link already counted."""
        stats = self.stats
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            stats.unreadable += 1
            return None
        mode = st.st_mode
        if stat.S_ISLNK(mode):
            stats.symlinks_not_followed += 1
            return None
        if st.st_dev != self.root_dev:
            stats.other_filesystems += 1
            return None
        name = entry.name
        child = parts + (name,)
        depth_named = named_depth
        if len(child) <= named_depth and secret_child(dirpath, name):
            stats.secret_places += 1
            depth_named = len(child)
        if st.st_nlink > 1 and not stat.S_ISDIR(mode):
            key = (st.st_dev, st.st_ino)
            if key in self.seen_inodes:
                stats.hard_links_counted_once += 1
                return None
            self.seen_inodes.add(key)
        allocated = st.st_blocks * 512
        stats.bytes += allocated
        if stat.S_ISDIR(mode):
            stats.dirs += 1
            self.queue.append((child, f"{dirpath.rstrip('/')}/{name}", None, depth_named, (st.st_dev, st.st_ino)))
            return Found(child, st, True, depth_named, allocated)
        stats.files += 1
        return Found(child, st, False, depth_named, allocated)

    def close(self) -> None:
        """Record the time taken and close the fds of directories never listed."""
        self.stats.elapsed = time.monotonic() - self.started
        os.close(self.anchor)
        while self.queue:
            pending_fd = self.queue.popleft()[2]
            if pending_fd is not None:
                os.close(pending_fd)
