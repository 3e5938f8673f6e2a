"""The trajectory store: runs and their steps in one SQLite file, written from the engine's events.

`Store.record` is the only way runs get in. It consumes the event stream as it comes: RunStarted
inserts the run as `running`, each StepRecorded is one committed transaction before `record`
returns (so a crash loses at most the step in flight), RunEnded fills in the totals and status.
Everything else the engine emits is for live displays and is ignored here.

The query methods serve `appliance runs ...` and the TUI's history panel; they return the typed,
frozen records of appliance.store.records (RunRecord, StepRecord, ModelStats). The evaluation
tables' methods come from appliance.store.evals.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import sqlite3
import threading
from pathlib import Path
from typing import Any

import sqlite_utils

from appliance.agent.events import INTERRUPTED, RUNNING, FinalAnswer, RunEnded, RunStarted, StepRecorded
from appliance.errors import StoreError, UsageError
from appliance.store import migrations
from appliance.store.connection import BUSY_TIMEOUT_MS, WriterLock, check_writable, connect, guarded, transaction
from appliance.store.evals import EvalTables
from appliance.store.failures import CORRUPT, message_for, translate
from appliance.store.records import ModelStats, RunRecord, StepRecord
from appliance.store.records import dumps as _dumps
from appliance.store.timefmt import iso
from appliance.tools.redact import redact, redact_value

DEFAULT_MAX_BYTES = 512 * 1024 * 1024
OBSERVATION_CAP = 16_000  # characters of one observation kept; the engine shows the model less


def cap_text(text: str, limit: int = OBSERVATION_CAP) -> str:
    """At most `limit` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… [{len(text) - limit} more characters not stored]"


def _redact(text: str | None) -> str | None:
    """The tools layer's one redactor: the engine redacts before the model sees anything, and this
    is the second net for everything written to disk (question, thoughts, inputs, observations,
    answers, errors)."""
    return redact(text) if text else text


def fts_query(text: str) -> str:
    """Free text as an FTS5 query: every word must appear, punctuation taken literally (so
    `disk-full` or `"` cannot raise an FTS syntax error)."""
    words = [w for w in text.split() if w]
    return " ".join('"' + w.replace('"', '""') + '"' for w in words)


class Store(EvalTables):
    """One open run database. Writers hold the one-writer lock; readers never block anyone."""

    def __init__(self, path: Path, db: sqlite_utils.Database, *, readonly: bool, max_bytes: int,
                 writer_lock: WriterLock | None, host: str | None = None) -> None:
        self.path = path
        self.host = host or socket.gethostname()  # recorded per run: a site's runs merge into one file
        self._db: sqlite_utils.Database | None = db
        self.readonly = readonly
        self.max_bytes = max_bytes
        self._writer_lock = writer_lock
        self._lock = threading.RLock()
        self.recovered: list[str] = []  # runs marked interrupted when this store opened
        self.integrity_checked = False
        self._final: dict[str, FinalAnswer] = {}  # kept until RunEnded writes it with the totals

    # -- life cycle -----------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._db is None

    @property
    def db(self) -> sqlite_utils.Database:
        """The open connection; StoreError once the store is closed."""
        if self._db is None:
            raise StoreError(f"the run database {self.path} is closed")
        return self._db

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                try:
                    self._db.close()
                finally:
                    self._db = None
                    if self._writer_lock is not None:
                        self._writer_lock.release()
                        self._writer_lock = None

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing --------------------------------------------------------------------------------

    @guarded
    def record(self, event: object) -> None:
        """Write what `event` means for the database; other event types are ignored.

        Raises StoreError (one line: locked, read-only, full, corrupt, size cap) when it cannot.
        """
        if isinstance(event, (RunStarted, StepRecorded, RunEnded)) and self.readonly:
            raise StoreError(f"the run database {self.path} was opened read-only")
        if isinstance(event, RunStarted):
            self._check_size()
            with transaction(self.db):
                self._insert_run(event)
        elif isinstance(event, StepRecorded):
            with transaction(self.db):
                self._insert_step(event)
        elif isinstance(event, FinalAnswer):
            self._final[event.run_id] = event
        elif isinstance(event, RunEnded):
            with transaction(self.db):
                self._end_run(event, self._final.pop(event.run_id, None))

    def _insert_run(self, event: RunStarted) -> None:
        model = event.model
        settings = dict(event.settings or {})
        self.db.table("runs").insert(
            {
                "id": event.run_id,
                "started_at": iso(event.started_at),
                "question": _redact(event.question),
                "model_name": model.name,
                "model_path": model.path,
                "model_size": model.size,
                "model_sha256": model.sha256,
                "context_length": model.context_length or settings.get("context_length"),
                "settings": _dumps(settings),
                "status": RUNNING,
                "version": event.version,
                "host": self.host,
            },
            alter=False,
        )

    def _insert_step(self, event: StepRecorded) -> None:
        step = StepRecord.from_event(event)
        stored = dataclasses.replace(
            step, thought=redact(step.thought), action_input=redact_value(step.action_input),
            observation=cap_text(redact(step.observation)),
            observation_summary=cap_text(redact(step.observation_summary), 2000),
        )
        self.db.table("steps").insert(stored.to_row(), alter=False)

    def _end_run(self, event: RunEnded, final: FinalAnswer | None) -> None:
        self.db.execute(
            """UPDATE runs SET ended_at = ?, status = ?, answer = ?, result = ?, evidence = ?, forced = ?,
                   error = ?, step_count = ?, prompt_tokens = ?, prompt_tokens_reused = ?,
                   completion_tokens = ?, seconds = ?, timing = ?, runtime = ?
               WHERE id = ?""",
            [iso(event.ended_at), event.status, _redact(event.answer), _dumps(redact_value(dict(event.result or {}))),
             _dumps(list(final.evidence)) if final else None, int(final.forced) if final else None,
             _redact(event.error) or None, event.steps, event.prompt_tokens, event.prompt_tokens_reused,
             event.completion_tokens, round(event.seconds, 3), _dumps(dict(event.timing or {})),
             _dumps(dict(event.runtime or {})), event.run_id],
        )

    def _check_size(self) -> None:
        used = self._used_bytes()
        if self.max_bytes and used >= self.max_bytes:
            raise StoreError(
                f"the run database {self.path} has reached its size cap "
                f"({used / 1e6:.1f} MB of {self.max_bytes / 1e6:.1f} MB), so new runs are not recorded; "
                f"remove old runs with `appliance runs rm --before DATE`"
            )

    def _used_bytes(self) -> int:
        """Bytes in use (pages minus free pages): what `runs rm` gives back without a VACUUM."""
        page_size = self.db.execute("PRAGMA page_size").fetchone()[0]
        pages = self.db.execute("PRAGMA page_count").fetchone()[0]
        free = self.db.execute("PRAGMA freelist_count").fetchone()[0]
        return (pages - free) * page_size

    @guarded
    def used_bytes(self) -> int:
        return self._used_bytes()

    # -- recovery ---------------------------------------------------------------------------------

    def _integrity_check(self) -> None:
        rows = [r[0] for r in self.db.execute("PRAGMA integrity_check").fetchall()]
        self.integrity_checked = True
        if rows != ["ok"]:
            raise StoreError(message_for(CORRUPT, self.path, "integrity_check: " + "; ".join(rows[:3])))

    def _recover(self, unclean: bool) -> None:
        """After an unclean shutdown: check the file, and close runs left `running` by a dead
        writer as `interrupted`, with the totals of the steps that did get committed."""
        running = [r[0] for r in self.db.execute("SELECT id FROM runs WHERE status = ?", [RUNNING])]
        if not (unclean or running):
            return
        if not self.integrity_checked:
            self._integrity_check()
        if not running:
            return
        with transaction(self.db):
            for run_id in running:
                self.db.execute(
                    """UPDATE runs SET status = ?,
                           ended_at = COALESCE((SELECT max(at) FROM steps WHERE run_id = runs.id), started_at),
                           step_count = (SELECT count(*) FROM steps WHERE run_id = runs.id),
                           prompt_tokens = (SELECT COALESCE(sum(prompt_tokens), 0) FROM steps WHERE run_id = runs.id),
                           prompt_tokens_reused = (SELECT COALESCE(sum(prompt_tokens_reused), 0) FROM steps WHERE run_id = runs.id),
                           completion_tokens = (SELECT COALESCE(sum(completion_tokens), 0) FROM steps WHERE run_id = runs.id),
                           error = 'the appliance stopped before the run ended (crash, kill or power loss)'
                       WHERE id = ?""",
                    [INTERRUPTED, run_id],
                )
        self.recovered = running

    # -- reading --------------------------------------------------------------------------------

    @guarded
    def list_runs(self, limit: int | None = 20, status: str | None = None, search: str | None = None,
                  before: str | None = None) -> list[RunRecord]:
        """Newest first, without their steps. `search` matches questions, answers, thoughts and
        observations."""
        where, params = self._filters(status=status, search=search, before=before)
        sql = f"SELECT * FROM runs {where} ORDER BY started_at DESC, seq DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return [RunRecord.from_row(row) for row in self.db.query(sql, params)]

    def _filters(self, *, status: str | None, search: str | None, before: str | None) -> tuple[str, list]:
        clauses: list[str] = []
        params: list[Any] = []
        if status:
            clauses.append("status = ?")
            params.append(status)
        if before:
            clauses.append("started_at < ?")
            params.append(before)
        if search and search.strip():
            query = fts_query(search)
            clauses.append(
                "(seq IN (SELECT rowid FROM runs_fts WHERE runs_fts MATCH ?)"
                " OR id IN (SELECT steps.run_id FROM steps_fts JOIN steps ON steps.id = steps_fts.rowid"
                " WHERE steps_fts MATCH ?))"
            )
            params += [query, query]
        return ("WHERE " + " AND ".join(clauses) if clauses else ""), params

    @guarded
    def resolve_run_id(self, id_or_prefix: str) -> str:
        """The full id of the one run whose id is `id_or_prefix` or starts with it."""
        return self._resolve(id_or_prefix)

    def _resolve(self, id_or_prefix: str) -> str:
        text = (id_or_prefix or "").strip()
        if not text:
            raise UsageError("give a run id (or the first characters of one); `appliance runs list` shows them")
        if self.db.execute("SELECT 1 FROM runs WHERE id = ?", [text]).fetchone():
            return text
        rows = [r[0] for r in self.db.execute(
            "SELECT id FROM runs WHERE substr(id, 1, ?) = ? ORDER BY started_at DESC LIMIT 6", [len(text), text])]
        if not rows:
            raise UsageError(f"no run with an id starting {text!r}; `appliance runs list` shows the ids")
        if len(rows) > 1:
            shown = ", ".join(rows[:5])
            raise UsageError(f"{text!r} matches several runs ({shown}{', ...' if len(rows) > 5 else ''}); "
                             f"give more characters of the id")
        return rows[0]

    @guarded
    def get_run(self, id_or_prefix: str) -> RunRecord:
        """The run with all its steps in order (`run.steps`)."""
        run_id = self._resolve(id_or_prefix)
        row = next(self.db.query("SELECT * FROM runs WHERE id = ?", [run_id]))
        steps = list(self.db.query("SELECT * FROM steps WHERE run_id = ? ORDER BY step", [run_id]))
        return RunRecord.from_row(row, steps=steps)

    @guarded
    def stats(self) -> list[ModelStats]:
        """Per model: runs, finished share, mean steps, token totals and means, generation speed."""
        sql = """
            SELECT runs.model_name AS model,
                   count(*) AS runs,
                   sum(runs.status = 'finished') AS finished,
                   round(1.0 * sum(runs.status = 'finished') / count(*), 3) AS finished_share,
                   round(avg(runs.step_count), 2) AS mean_steps,
                   sum(runs.prompt_tokens) AS prompt_tokens,
                   sum(runs.prompt_tokens_reused) AS prompt_tokens_reused,
                   sum(runs.completion_tokens) AS completion_tokens,
                   round(avg(runs.prompt_tokens + runs.completion_tokens), 1) AS mean_tokens,
                   round(avg(runs.seconds), 2) AS mean_seconds,
                   (SELECT round(1000.0 * sum(s.completion_tokens) / nullif(sum(s.generation_ms), 0), 2)
                      FROM steps s JOIN runs r ON r.id = s.run_id
                     WHERE r.model_name = runs.model_name) AS tokens_per_second
              FROM runs GROUP BY runs.model_name ORDER BY runs DESC, model
        """
        return [ModelStats.from_row(row) for row in self.db.query(sql)]

    # -- deleting -------------------------------------------------------------------------------

    @guarded
    def delete_run(self, id_or_prefix: str) -> str:
        """Delete one run and its steps (evaluation cases keep their row, without the link)."""
        self._writable()
        run_id = self._resolve(id_or_prefix)
        with transaction(self.db):
            self.db.execute("DELETE FROM runs WHERE id = ?", [run_id])
        return run_id

    @guarded
    def delete_before(self, cutoff: str) -> int:
        """Delete runs started before `cutoff` (stored format, see timefmt.parse_date), except
        runs still being written. Returns how many."""
        self._writable()
        with transaction(self.db):
            cursor = self.db.execute("DELETE FROM runs WHERE started_at < ? AND status != ?", [cutoff, RUNNING])
            count = cursor.rowcount
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return count

def open_store(path: str | os.PathLike, *, readonly: bool = False, max_bytes: int = DEFAULT_MAX_BYTES,
               busy_timeout_ms: int = BUSY_TIMEOUT_MS, host: str | None = None) -> Store:
    """Open (and for writers create and migrate) the run database at `path`.

    A writer takes the one-writer lock, migrates, and after an unclean shutdown runs
    `PRAGMA integrity_check` and marks unfinished runs `interrupted` (their ids in
    `store.recovered`). A reader (`readonly=True`: the history views) never writes and never waits
    for the writer. Raises StoreError with one line when the file is locked, read-only, on a full
    disk, corrupt or missing (readers only). `host` is the machine name new runs are recorded
    with (default: this machine's).
    """
    path = Path(path).expanduser()
    if readonly:
        return _open_reader(path, max_bytes, busy_timeout_ms)
    return _open_writer(path, max_bytes, busy_timeout_ms, host)


def _open_writer(path: Path, max_bytes: int, busy_timeout_ms: int, host: str | None = None) -> Store:
    lock = None
    db = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        check_writable(path)
        lock = WriterLock.acquire(path)
        db = connect(path, readonly=False, busy_timeout_ms=busy_timeout_ms)
        store = Store(path, db, readonly=False, max_bytes=max_bytes, writer_lock=lock, host=host)
        if lock.fresh and lock.unclean:
            store._integrity_check()  # before migrating: do not build on a damaged file
        migrations.migrate(db)
        if lock.fresh:
            store._recover(lock.unclean)
        return store
    except BaseException as exc:
        if db is not None:
            db.close()
        if lock is not None:
            lock.release()
        if isinstance(exc, (sqlite3.Error, OSError)):
            raise translate(exc, path) from exc
        raise


def _open_reader(path: Path, max_bytes: int, busy_timeout_ms: int) -> Store:
    if path.is_dir():
        raise StoreError(f"the run database {path} is a folder, not a file; give a file name with --db PATH")
    if not path.exists():
        raise StoreError(f"no run database at {path} yet; the first `appliance ask` creates it (or give --db PATH)")
    db = None
    try:
        db = connect(path, readonly=True, busy_timeout_ms=busy_timeout_ms)
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()  # NOTADB shows here
        if migrations.pending(db):
            # Written by an older version: bring it up to date once, through a writer.
            db.close()
            db = None
            _open_writer(path, max_bytes, busy_timeout_ms).close()
            db = connect(path, readonly=True, busy_timeout_ms=busy_timeout_ms)
        return Store(path, db, readonly=True, max_bytes=max_bytes, writer_lock=None)
    except BaseException as exc:
        if db is not None:
            db.close()
        if isinstance(exc, (sqlite3.Error, OSError)):
            raise translate(exc, path) from exc
        raise
