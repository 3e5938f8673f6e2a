"""Turn what SQLite and the OS say into one line a person can act on.

Why here and not at each call: every store operation can meet the same four conditions (locked,
read-only, disk full, corrupt) and each deserves the same sentence wherever it happens, naming
the file and the way out. The raw SQLite text is kept in brackets for a bug report.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

from appliance.errors import StoreError

LOCKED = "locked"
READ_ONLY = "read-only"
FULL = "full"
CORRUPT = "corrupt"
CANT_OPEN = "cannot-open"
OTHER = "other"

_CODES = {
    "SQLITE_BUSY": LOCKED,
    "SQLITE_LOCKED": LOCKED,
    "SQLITE_READONLY": READ_ONLY,
    "SQLITE_FULL": FULL,
    "SQLITE_CORRUPT": CORRUPT,
    "SQLITE_NOTADB": CORRUPT,
    "SQLITE_CANTOPEN": CANT_OPEN,
    "SQLITE_PERM": READ_ONLY,
}

_TEXTS = (
    ("database is locked", LOCKED),
    ("database table is locked", LOCKED),
    ("readonly database", READ_ONLY),
    ("read-only", READ_ONLY),
    ("disk is full", FULL),
    ("file is not a database", CORRUPT),
    ("malformed", CORRUPT),
    ("unable to open database", CANT_OPEN),
)

_ERRNOS = {
    errno.ENOSPC: FULL,
    errno.EDQUOT: FULL,
    errno.EROFS: READ_ONLY,
    errno.EACCES: READ_ONLY,
    errno.EPERM: READ_ONLY,
}


def kind_of(exc: BaseException) -> str:
    """Which of the known conditions an exception from sqlite3 or the OS stands for."""
    if isinstance(exc, sqlite3.Error):
        name = getattr(exc, "sqlite_errorname", "") or ""
        base = name.split("_", 2)
        base_name = "_".join(base[:2]) if len(base) >= 2 else name
        if base_name in _CODES:
            return _CODES[base_name]
        text = str(exc).lower()
        for needle, kind in _TEXTS:
            if needle in text:
                return kind
        return OTHER
    if isinstance(exc, OSError) and exc.errno in _ERRNOS:
        return _ERRNOS[exc.errno]
    return OTHER


_ADVICE = {
    LOCKED: "the run database {where} is locked by another process; wait for it to finish "
            "(or close the other appliance or sqlite3 session) and try again",
    READ_ONLY: "the run database {where} is read-only; make it and its folder writable, "
               "or choose another file with --db PATH",
    FULL: "the disk holding the run database {where} is full; free some space "
          "(or remove old runs with `appliance runs rm --before DATE`) or use --db on another disk",
    CORRUPT: "the run database {where} is corrupt; move it aside (mv {where} {where}.bad) "
             "and a new one is created on the next run, or restore a backup",
    CANT_OPEN: "cannot open the run database {where}; check that its folder exists and is "
               "writable, or choose another file with --db PATH",
    OTHER: "the run database {where} failed",
}


def message_for(kind: str, path: Path, detail: str) -> str:
    """The one line for `kind` about the database at `path`."""
    text = _ADVICE.get(kind, _ADVICE[OTHER]).format(where=path)
    return f"{text} [{detail}]" if detail else text


def translate(exc: BaseException, path: Path) -> StoreError:
    """A StoreError carrying the one-line message for `exc` (the original is chained by callers)."""
    if isinstance(exc, StoreError):
        return exc
    detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    kind = kind_of(exc)
    if kind in (OTHER, CANT_OPEN) and _disk_is_full(path):
        kind = FULL  # e.g. "disk I/O error" while growing the -shm or -wal file on a full disk
    error = StoreError(message_for(kind, path, detail))
    error.kind = kind  # type: ignore[attr-defined]
    return error


def _disk_is_full(path: Path) -> bool:
    """Whether the file system holding `path` has no room left for another database page."""
    try:
        stats = os.statvfs(path.parent if not path.is_dir() else path)
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize < 64 * 1024
