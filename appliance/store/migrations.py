"""The schema, built only by named migrations applied in order, once each, each in a transaction.

Why small named functions: a database written by any earlier version of the appliance is brought
up to date by running exactly the migrations it lacks, and `_migrations` says which ran when, so
anyone browsing the file with sqlite-utils or Datasette can see its history. A migration is never
edited once released; a change is a new migration appended to `MIGRATIONS`.

The full-text indexes are FTS5 tables with external content kept current by triggers, in the same
shape `sqlite-utils enable-fts --create-triggers` makes (`<table>_fts`, triggers `<table>_ai/_ad/_au`),
so `sqlite-utils search` and Datasette's search box find them. They are written as SQL here because
`Table.enable_fts` runs `executescript`, which would commit in the middle of the migration's
transaction. Both indexed tables have an INTEGER PRIMARY KEY, so a VACUUM cannot renumber the
rowids the indexes point at.
"""

from __future__ import annotations

import time
from typing import Callable

import sqlite_utils

from appliance.store.connection import transaction

Migration = Callable[[sqlite_utils.Database], None]


def m001_create_runs(db: sqlite_utils.Database) -> None:
    db.execute(
        """
        CREATE TABLE runs (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            started_at TEXT NOT NULL,
            ended_at TEXT,
            question TEXT NOT NULL,
            model_name TEXT NOT NULL,
            model_path TEXT,
            model_size INTEGER,
            model_sha256 TEXT,
            context_length INTEGER,
            settings TEXT,
            status TEXT NOT NULL,
            answer TEXT,
            result TEXT,
            evidence TEXT,
            forced INTEGER,
            error TEXT,
            step_count INTEGER NOT NULL DEFAULT 0,
            prompt_tokens INTEGER NOT NULL DEFAULT 0,
            prompt_tokens_reused INTEGER NOT NULL DEFAULT 0,
            completion_tokens INTEGER NOT NULL DEFAULT 0,
            seconds REAL,
            version TEXT
        )
        """
    )
    db.execute("CREATE INDEX idx_runs_started_at ON runs (started_at)")
    db.execute("CREATE INDEX idx_runs_status ON runs (status)")


def m002_create_steps(db: sqlite_utils.Database) -> None:
    db.execute(
        """
        CREATE TABLE steps (
            id INTEGER PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            step INTEGER NOT NULL,
            at TEXT NOT NULL,
            thought TEXT,
            action TEXT,
            action_input TEXT,
            observation_status TEXT,
            observation TEXT,
            observation_summary TEXT,
            reflection TEXT,
            evaluation TEXT,
            prompt_tokens INTEGER NOT NULL DEFAULT 0,
            prompt_tokens_reused INTEGER NOT NULL DEFAULT 0,
            completion_tokens INTEGER NOT NULL DEFAULT 0,
            generation_ms REAL,
            prompt_ms REAL,
            tool_ms REAL,
            tokens_per_second REAL,
            UNIQUE (run_id, step)
        )
        """
    )


def _fts_sql(table: str, columns: tuple[str, ...]) -> list[str]:
    """FTS5 external-content index plus the three triggers that keep it in step with `table`."""
    cols = ", ".join(columns)
    new = ", ".join(f"new.{c}" for c in columns)
    old = ", ".join(f"old.{c}" for c in columns)
    fts = f"{table}_fts"
    return [
        f"CREATE VIRTUAL TABLE {fts} USING FTS5 ({cols}, content=\"{table}\")",
        f"INSERT INTO {fts} (rowid, {cols}) SELECT rowid, {cols} FROM {table}",
        f"CREATE TRIGGER {table}_ai AFTER INSERT ON {table} BEGIN "
        f"INSERT INTO {fts} (rowid, {cols}) VALUES (new.rowid, {new}); END",
        f"CREATE TRIGGER {table}_ad AFTER DELETE ON {table} BEGIN "
        f"INSERT INTO {fts} ({fts}, rowid, {cols}) VALUES ('delete', old.rowid, {old}); END",
        f"CREATE TRIGGER {table}_au AFTER UPDATE ON {table} BEGIN "
        f"INSERT INTO {fts} ({fts}, rowid, {cols}) VALUES ('delete', old.rowid, {old}); "
        f"INSERT INTO {fts} (rowid, {cols}) VALUES (new.rowid, {new}); END",
    ]


def m003_create_search(db: sqlite_utils.Database) -> None:
    for sql in _fts_sql("runs", ("question", "answer")) + _fts_sql("steps", ("thought", "observation")):
        db.execute(sql)


def m004_add_step_threads(db: sqlite_utils.Database) -> None:
    """Issue 9: the thread counts chosen for each model call (generation, prompt evaluation)."""
    db.execute("ALTER TABLE steps ADD COLUMN threads INTEGER")
    db.execute("ALTER TABLE steps ADD COLUMN threads_batch INTEGER")


def m005_create_evals(db: sqlite_utils.Database) -> None:
    db.execute(
        """
        CREATE TABLE evals (
            id INTEGER PRIMARY KEY,
            started_at TEXT NOT NULL,
            ended_at TEXT,
            model TEXT NOT NULL,
            suite TEXT NOT NULL,
            "repeat" INTEGER NOT NULL DEFAULT 1,
            settings TEXT,
            summary TEXT,
            version TEXT
        )
        """
    )
    db.execute(
        """
        CREATE TABLE eval_cases (
            id INTEGER PRIMARY KEY,
            eval_id INTEGER NOT NULL REFERENCES evals (id) ON DELETE CASCADE,
            scenario TEXT NOT NULL,
            repeat_index INTEGER NOT NULL DEFAULT 0,
            run_id TEXT REFERENCES runs (id) ON DELETE SET NULL,
            success INTEGER NOT NULL DEFAULT 0,
            reason TEXT,
            metrics TEXT
        )
        """
    )
    db.execute("CREATE INDEX idx_eval_cases_eval_id ON eval_cases (eval_id)")
    db.execute("CREATE INDEX idx_eval_cases_run_id ON eval_cases (run_id)")


def m006_add_eval_case_family(db: sqlite_utils.Database) -> None:
    """Issue 13: each eval case's fault family, kind (precise / vague / control) and phrasing, so
    results can be read per family and per kind straight from SQL."""
    for column in ("family", "kind", "phrasing"):
        db.execute(f"ALTER TABLE eval_cases ADD COLUMN {column} TEXT")


def m007_add_run_host(db: sqlite_utils.Database) -> None:
    """Issue 17: the machine a run was made on, so the runs of a whole site can share one file
    (`appliance runs import`). Runs recorded before this migration keep NULL: nobody knows."""
    db.execute("ALTER TABLE runs ADD COLUMN host TEXT")
    db.execute("CREATE INDEX idx_runs_host ON runs (host)")


def m008_add_run_timing(db: sqlite_utils.Database) -> None:
    """Issue 14: where each run's seconds went (JSON: model_load, prompt, generation, tools, engine,
    total) and the llama.cpp settings and prompt-cache use it ran with (JSON)."""
    db.execute("ALTER TABLE runs ADD COLUMN timing TEXT")
    db.execute("ALTER TABLE runs ADD COLUMN runtime TEXT")


MIGRATIONS: tuple[Migration, ...] = (
    m001_create_runs,
    m002_create_steps,
    m003_create_search,
    m004_add_step_threads,
    m005_create_evals,
    m006_add_eval_case_family,
    m007_add_run_host,
    m008_add_run_timing,
)


def _ensure_ledger(db: sqlite_utils.Database) -> None:
    db.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )


def applied(db: sqlite_utils.Database) -> list[str]:
    """Names of the migrations recorded in this database (empty for a new file)."""
    if not db["_migrations"].exists():
        return []
    return [row[0] for row in db.execute("SELECT name FROM _migrations ORDER BY rowid").fetchall()]


def pending(db: sqlite_utils.Database, migrations: tuple[Migration, ...] = MIGRATIONS) -> list[Migration]:
    done = set(applied(db))
    return [m for m in migrations if m.__name__ not in done]


def migrate(db: sqlite_utils.Database, migrations: tuple[Migration, ...] = MIGRATIONS) -> list[str]:
    """Apply the missing migrations in order, each with its ledger row in one transaction.

    A crash part-way leaves the database at the last fully applied migration. Returns the names
    applied now. `migrations` is a parameter so tests can build a database at an earlier version.
    """
    if not pending(db, migrations):
        return []  # the usual case: no write transaction at all
    with transaction(db):
        _ensure_ledger(db)
    ran: list[str] = []
    for migration in migrations:
        with transaction(db):
            # Re-read inside the transaction: another process may have migrated meanwhile.
            if db.execute("SELECT 1 FROM _migrations WHERE name = ?", [migration.__name__]).fetchone():
                continue
            migration(db)
            stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            db.execute("INSERT INTO _migrations (name, applied_at) VALUES (?, ?)", [migration.__name__, stamp])
        ran.append(migration.__name__)
    return ran
