"""Opening the database file: connection settings, the one-writer lock, and crash recovery.

Durability comes from SQLite, configured for it: WAL (readers never block the writer, the writer
never blocks readers), `synchronous=FULL` (each commit is on disk before it returns, so a power
loss keeps every committed step) and a busy timeout (a short wait instead of an instant "locked").

One writer: a writing Store holds an exclusive `flock` on `<db>.lock` for its lifetime. The kernel
drops it when the process dies, even by SIGKILL, so a writer that gets the lock knows that any run
still marked `running` belongs to a dead process and may mark it `interrupted`. The lock file holds
the writer's pid while it is open and is emptied on a clean close, so a non-empty lock file found
on opening means the previous writer did not shut down cleanly, and `PRAGMA integrity_check` runs.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

import sqlite_utils

from appliance.errors import StoreError
from appliance.store.failures import READ_ONLY, message_for, translate

BUSY_TIMEOUT_MS = 3000

T = TypeVar("T")


def connect(path: Path, *, readonly: bool, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> sqlite_utils.Database:
    """A sqlite-utils Database on `path` with the store's settings.

    isolation_level=None: transactions are explicit (`transaction()` below), never opened behind
    our back by the sqlite3 module. check_same_thread=False: the TUI records from its worker
    thread; the Store serialises access with its own lock.
    """
    if readonly:
        conn = _connect_readonly(path)
    else:
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    db = sqlite_utils.Database(conn, execute_plugins=False)
    db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    # Sorts and VACUUM-style rebuilds (`runs rm`) in memory: no temporary file outside the data directory.
    db.execute("PRAGMA temp_store = MEMORY")
    if not readonly:
        mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise StoreError(f"the run database {path} cannot use write-ahead logging (journal_mode={mode}); "
                             f"put it on a local disk with --db PATH")
        db.execute("PRAGMA synchronous = FULL")
        db.execute("PRAGMA foreign_keys = ON")
    return db


def _connect_readonly(path: Path) -> sqlite3.Connection:
    """Read-only, and still readable where the -shm file cannot be created.

    A WAL database needs its -shm file; on a read-only file system or a full disk it cannot be
    created. When there is no write-ahead log to read either (the last writer closed cleanly and
    checkpointed), the database file alone is the whole truth, so we open it `immutable=1`.
    """
    uri = f"file:{_quote_uri_path(path)}?mode=ro"
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except sqlite3.OperationalError as exc:
        conn.close()
        wal = path.with_name(path.name + "-wal")
        has_log = wal.exists() and wal.stat().st_size > 0
        if has_log or "locked" in str(exc).lower():
            raise
    return sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None, check_same_thread=False)


def _quote_uri_path(path: Path) -> str:
    from urllib.parse import quote

    return quote(str(path.absolute()))


def guarded(method: Callable[..., T]) -> Callable[..., T]:
    """For a Store method: serialise access (one connection, several threads) and turn SQLite/OS
    failures into the one-line StoreError for this database."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> T:
        with self._lock:
            if self.closed:
                raise StoreError(f"the run database {self.path} is closed")
            try:
                return method(self, *args, **kwargs)
            except (sqlite3.Error, OSError) as exc:
                raise translate(exc, self.path) from exc

    return wrapper


@contextlib.contextmanager
def transaction(db: sqlite_utils.Database) -> Iterator[sqlite_utils.Database]:
    """BEGIN IMMEDIATE ... COMMIT: take the write lock up front (waiting up to the busy timeout)
    rather than failing when a read upgrades to a write."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        if db.conn.in_transaction:
            db.execute("ROLLBACK")
        raise
    else:
        try:
            db.execute("COMMIT")
        except BaseException:
            if db.conn.in_transaction:
                db.execute("ROLLBACK")
            raise


class WriterLock:
    """The exclusive lock that makes a Store the one writer of its database.

    Shared within a process (a second writing Store in the same process reuses it and does not
    run crash recovery, since the first is alive); exclusive between processes.
    """

    _held: dict[str, "WriterLock"] = {}
    _guard = threading.Lock()

    def __init__(self, lock_path: Path, fd: int, unclean: bool) -> None:
        self.lock_path = lock_path
        self.fd = fd
        self.users = 1
        self.unclean = unclean  # the previous writer did not close cleanly
        self.fresh = True  # this acquisition, not a reuse: crash recovery may run

    @classmethod
    def acquire(cls, db_path: Path) -> "WriterLock":
        lock_path = db_path.with_name(db_path.name + ".lock")
        key = str(lock_path.resolve())
        with cls._guard:
            held = cls._held.get(key)
            if held is not None:
                held.users += 1
                held.fresh = False
                return held
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                other = _read_pid(fd)
                os.close(fd)
                who = f" (pid {other})" if other else ""
                raise StoreError(
                    f"the run database {db_path} is being written by another appliance process{who}; "
                    f"wait for it to finish or close it, or use --db PATH for a separate database"
                ) from None
            except OSError:
                os.close(fd)
                raise
            unclean = os.fstat(fd).st_size > 0
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            except OSError:
                pass  # a full disk: the lock still holds; recovery will just run once more next time
            lock = cls(lock_path, fd, unclean)
            cls._held[key] = lock
            return lock

    def release(self) -> None:
        key = str(self.lock_path.resolve())
        with self._guard:
            self.users -= 1
            if self.users > 0:
                return
            self._held.pop(key, None)
            with contextlib.suppress(OSError):
                os.ftruncate(self.fd, 0)  # a clean close
            with contextlib.suppress(OSError):
                fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode(errors="replace").strip()
        return int(text) if text.isdigit() else None
    except OSError:
        return None


def check_writable(path: Path) -> None:
    """Fail early, with the read-only sentence, when the file or its folder cannot be written
    (SQLite would otherwise open read-only silently and fail only at the first write)."""
    if path.is_dir():
        raise StoreError(f"the run database {path} is a folder, not a file; give a file name with --db PATH")
    if path.exists() and not os.access(path, os.W_OK):
        raise StoreError(message_for(READ_ONLY, path, "file not writable"))
    if not os.access(path.parent, os.W_OK):
        raise StoreError(message_for(READ_ONLY, path, "folder not writable"))
