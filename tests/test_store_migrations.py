"""Migrations: an empty file and a file at every earlier version end at the same schema, data kept;
and the schema written in docs/store.md is the schema the migrations build."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
import sqlite_utils

from appliance.store import migrations, open_store
from appliance.store.connection import connect
from support.store import REPO, record_all, run_events

DOC = REPO / "docs" / "store.md"


def schema_of(path: Path) -> dict[str, list[tuple[str, str, int, object, int]]]:
    """Every table's PRAGMA table_info (name, type, notnull, default, pk), FTS shadow tables too."""
    conn = sqlite3.connect(path)
    try:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {n: [tuple(row[1:]) for row in conn.execute(f"PRAGMA table_info('{n}')")] for n in names}
    finally:
        conn.close()


def objects_of(path: Path) -> set[tuple[str, str]]:
    conn = sqlite3.connect(path)
    try:
        return set(conn.execute("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"))
    finally:
        conn.close()


def test_migrations_on_an_empty_database_apply_once_and_are_recorded(tmp_path):
    path = tmp_path / "runs.db"
    store = open_store(path)
    names = [r["name"] for r in store.db.query("SELECT name FROM _migrations ORDER BY rowid")]
    assert names == [m.__name__ for m in migrations.MIGRATIONS]
    assert names[0] == "m001_create_runs"
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert store.db.execute("PRAGMA busy_timeout").fetchone()[0] > 0
    store.close()
    before = schema_of(path)
    # a second open applies nothing and changes nothing
    store = open_store(path)
    assert migrations.migrate(store.db) == []
    assert store.db.execute("SELECT count(*) FROM _migrations").fetchone()[0] == len(migrations.MIGRATIONS)
    store.close()
    assert schema_of(path) == before


@pytest.mark.parametrize("level", range(1, len(migrations.MIGRATIONS)))
def test_a_database_at_each_earlier_version_is_brought_up_to_date_keeping_its_data(tmp_path, level):
    fresh = tmp_path / "fresh.db"
    open_store(fresh).close()

    old = tmp_path / "old.db"
    db = connect(old, readonly=False)
    applied_now = migrations.migrate(db, migrations.MIGRATIONS[:level])
    assert applied_now == [m.__name__ for m in migrations.MIGRATIONS[:level]]
    # data written by that version: a run (and its steps when that table exists)
    db.execute("INSERT INTO runs (id, started_at, question, model_name, status) "
               "VALUES ('old-run', '2026-01-01T00:00:00.000Z', 'why is the disk full?', 'm', 'finished')")
    if level >= 2:
        db.execute("INSERT INTO steps (run_id, step, at, thought, observation) VALUES "
                   "('old-run', 0, '2026-01-01T00:00:01.000Z', 'look at the disk', 'sda1 99% full')")
    db.close()

    store = open_store(old)
    assert store.db.execute("SELECT count(*) FROM _migrations").fetchone()[0] == len(migrations.MIGRATIONS)
    run = store.get_run("old-run")
    assert run["question"] == "why is the disk full?" and run["status"] == "finished"
    if level >= 2:
        assert [s["observation"] for s in run["steps"]] == ["sda1 99% full"]
        # the search index covers rows written before it existed
        assert [r["id"] for r in store.list_runs(search="sda1")] == ["old-run"]
    assert [r["id"] for r in store.list_runs(search="disk full")] == ["old-run"]
    # and the upgraded file records a new run like a fresh one
    record_all(store, run_events("new-run", 2))
    assert store.get_run("new-run")["steps"][1]["threads_batch"] == 2
    store.close()
    assert schema_of(old) == schema_of(fresh)
    assert objects_of(old) == objects_of(fresh)


def test_a_failing_migration_leaves_the_database_at_the_last_complete_one(tmp_path):
    path = tmp_path / "runs.db"
    db = connect(path, readonly=False)

    def m900_broken(db: sqlite_utils.Database) -> None:
        db.execute("CREATE TABLE half_done (x INTEGER)")
        raise RuntimeError("boom in the middle")

    with pytest.raises(RuntimeError):
        migrations.migrate(db, migrations.MIGRATIONS[:1] + (m900_broken,))
    assert migrations.applied(db) == ["m001_create_runs"]
    assert not db["half_done"].exists()  # rolled back with its transaction
    db.close()


# ---- the documented schema is the real one ------------------------------------------------------

def documented_schema(text: str) -> dict[str, list[tuple[str, str]]]:
    """Parse docs/store.md's '## Schema' section: '### table' headings over '| column | type |' rows."""
    section = text.split("\n## Schema", 1)[1]
    section = re.split(r"\n## (?!#)", section, maxsplit=1)[0]
    tables: dict[str, list[tuple[str, str]]] = {}
    current = None
    for line in section.splitlines():
        heading = re.match(r"^### (\w+)\s*$", line)
        if heading:
            current = heading.group(1)
            tables[current] = []
            continue
        row = re.match(r"^\|\s*([A-Za-z_]\w*)\s*\|\s*([A-Z]+)\s*\|", line)
        if current and row and row.group(1) != "column":
            tables[current].append((row.group(1), row.group(2)))
    return tables


def test_the_schema_in_the_docs_matches_the_migrated_database(tmp_path):
    path = tmp_path / "runs.db"
    open_store(path).close()
    documented = documented_schema(DOC.read_text())
    actual = {name: [(col[0], col[1]) for col in cols] for name, cols in schema_of(path).items()
              if "_fts" not in name}
    assert documented, "no schema section found in docs/store.md"
    assert set(documented) == set(actual)
    for table, columns in actual.items():
        assert documented[table] == columns, f"docs/store.md disagrees with the database on table {table}"
    # the search indexes the doc names exist, with their triggers
    objects = objects_of(path)
    for name in ("runs_fts", "steps_fts"):
        assert ("table", name) in objects and name in DOC.read_text()
    for trigger in ("runs_ai", "runs_ad", "runs_au", "steps_ai", "steps_ad", "steps_au"):
        assert ("trigger", trigger) in objects and trigger in DOC.read_text()
    for migration in migrations.MIGRATIONS:
        assert migration.__name__ in DOC.read_text()


def test_sqlite_utils_sees_the_search_indexes(tmp_path):
    """Browsing with sqlite-utils/Datasette: their FTS detection finds our indexes."""
    path = tmp_path / "runs.db"
    store = open_store(path)
    record_all(store, run_events("r-1", 2, observation="kworker spinning at 97 percent"))
    store.close()
    db = sqlite_utils.Database(path)
    assert db["runs"].detect_fts() == "runs_fts"
    assert db["steps"].detect_fts() == "steps_fts"
    hits = list(db["steps"].search("kworker"))
    assert len(hits) == 2 and all(h["run_id"] == "r-1" for h in hits)
    db.close()
