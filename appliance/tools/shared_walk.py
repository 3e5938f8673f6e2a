"""One walk of a tree for the tools that measure it together, before a run's first step.

Why: what fills a disk is measured as folder totals and as the largest files, and both walk the
same tree; on a large disk each walk runs into its deadline, so measuring both cost twice the
deadline before the model's first step. Inside `walks_shared()`, the second tool reads what the
first one's walk met (the same entries, the same counts and the same reason it stopped) when it is
the same directory (device and inode) with the same entry budget and no longer a deadline.
Outside it every call walks afresh, so a tool the model calls later never sees a stale tree.
"""

from __future__ import annotations

import contextlib
import os
import threading
from copy import copy
from dataclasses import dataclass
from pathlib import Path
from time import monotonic
from typing import Iterator

from appliance.tools.walk import Found, WalkStats, walk


@dataclass(frozen=True)
class _Walked:
    root: str
    identity: tuple[int, int]
    max_entries: int
    seconds: float  # the time it was given
    found: tuple[Found, ...]
    stats: WalkStats

    def fits(self, root: str, identity: tuple[int, int], max_entries: int, seconds: float) -> bool:
        """The same tree and entry budget, and at least as long a look as asked now (a walk the
        deadline stopped is not reused by one that may look longer)."""
        return (self.root, self.identity, self.max_entries) == (root, identity, max_entries) \
            and (self.stats.stopped is None or self.seconds >= seconds - 0.5)


_lock = threading.Lock()  # one shared walk at a time: a second tool on the same tree waits for the first's
_sharing = 0
_last: _Walked | None = None


@contextlib.contextmanager
def walks_shared() -> Iterator[None]:
    """Inside: tools that walk the same tree share one walk; when the last such scope ends the
    walk is let go."""
    global _sharing, _last
    with _lock:
        _sharing += 1
    try:
        yield
    finally:
        with _lock:
            _sharing -= 1
            if not _sharing:
                _last = None


def shared_walk(root: Path, root_fd: int, stats: WalkStats, max_entries: int, deadline: float) -> Iterator[Found]:
    """The entries of `walk`, from the walk of the same tree made in this scope when there is one
    (its counts copied into `stats`). Closes root_fd, as `walk` does."""
    global _last
    if not _sharing:
        return walk(root, root_fd, stats, max_entries, deadline)
    st = os.fstat(root_fd)
    identity = (st.st_dev, st.st_ino)
    with _lock:
        seconds = deadline - monotonic()
        if _last is not None and _last.fits(str(root), identity, max_entries, seconds):
            os.close(root_fd)
            vars(stats).update(vars(copy(_last.stats)))
            return iter(_last.found)
        _last = None  # an older walk is let go before a new one is held
        found = tuple(walk(root, root_fd, stats, max_entries, deadline))
        _last = _Walked(str(root), identity, max_entries, seconds, found, copy(stats))
        return iter(found)
