"""`appliance runs import FILE…`: the exports of other machines merged into this database.

Why: a site with many air-gapped workstations carries each one's `runs export` to one machine and
reads them all together with `appliance runs`, Datasette or `sqlite-utils` — the same file format,
the same schema, no collector to run. Each run keeps the host it was made on (from the export, or
`--host` for exports made before runs carried it, and to tell anonymised exports apart).

Ids stay unique: run ids are 128 random bits, so a clash means the same run imported again (same
id, host and start: skipped) or, vanishingly rarely, two different runs (the newcomer gets a fresh
id). Step rows get new row ids; their order and contents are kept.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from appliance.agent.events import INTERRUPTED, RUNNING
from appliance.errors import UsageError
from appliance.store.connection import transaction
from appliance.store.export import FORMAT_NAME
from appliance.store.failures import translate
from appliance.store.store import JSON_COLUMNS, Store


@dataclass
class ImportResult:
    added: int = 0
    skipped: int = 0
    renamed: int = 0
    hosts: tuple[str, ...] = ()


def read_export(path: Path) -> list[dict[str, Any]]:
    """The runs of a JSON Lines or JSON export (`runs export`); a file that is neither is one line."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not a text file; `appliance runs export` writes JSON Lines or JSON") from None
    try:
        if text.lstrip().startswith("{") and "\n{" not in text.strip():
            document = json.loads(text)
            if "resourceSpans" in document:
                raise UsageError(f"{path} is an OTLP trace file; import the jsonl or json export instead "
                                 "(OTLP keeps summaries, not whole observations)")
            runs = document["runs"] if document.get("format") == FORMAT_NAME else [document]
        else:
            runs = [json.loads(line) for line in text.splitlines() if line.strip()]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UsageError(f"{path} is not an appliance runs export ({exc.__class__.__name__})") from None
    for run in runs:
        if not isinstance(run, dict) or not all(k in run for k in ("id", "started_at", "question", "status")):
            raise UsageError(f"{path} holds a record that is not a run (it needs id, started_at, question, status)")
    return runs


def import_runs(store: Store, runs: Iterable[dict[str, Any]], *, host: str | None = None) -> ImportResult:
    """Insert `runs` (each with its `steps`) into the open writable `store`, one transaction each."""
    if store.readonly or store.db is None:
        raise UsageError(f"the run database {store.path} is not open for writing")
    result = ImportResult()
    hosts: set[str] = set()
    run_columns = _columns(store, "runs") - {"seq"}
    step_columns = _columns(store, "steps") - {"id"}
    for run in runs:
        row = _row("runs", run, run_columns)
        row["host"] = host or run.get("host") or "unknown"
        if row["status"] == RUNNING:
            row["status"] = INTERRUPTED
            row["error"] = row.get("error") or "the run was still going when it was exported"
        try:
            with transaction(store.db):
                outcome = _insert(store, row, run.get("steps") or [], step_columns)
        except sqlite3.Error as exc:
            raise translate(exc, store.path) from exc
        if outcome == "skipped":
            result.skipped += 1
            continue
        result.added += 1
        result.renamed += outcome == "renamed"
        hosts.add(row["host"])
    result.hosts = tuple(sorted(hosts))
    return result


def _insert(store: Store, row: dict[str, Any], steps: list[dict], step_columns: set[str]) -> str:
    db = store.db
    outcome = "added"
    same = db.execute("SELECT host, started_at FROM runs WHERE id = ?", [row["id"]]).fetchone()
    if same is not None:
        if tuple(same) == (row["host"], row["started_at"]):
            return "skipped"
        row["id"] = uuid.uuid4().hex
        outcome = "renamed"
    db["runs"].insert(row, alter=False)
    for step in steps:
        step_row = _row("steps", step, step_columns)
        step_row["run_id"] = row["id"]
        db["steps"].insert(step_row, alter=False)
    return outcome


def _columns(store: Store, table: str) -> set[str]:
    return {column.name for column in store.db[table].columns}


def _row(table: str, record: dict[str, Any], columns: set[str]) -> dict[str, Any]:
    """The record's values for the table's columns, JSON columns encoded as the store keeps them."""
    row = {}
    for key in columns & record.keys():
        value = record[key]
        if key in JSON_COLUMNS.get(table, ()) and value is not None and not isinstance(value, str):
            value = json.dumps(value, ensure_ascii=False, default=str)
        row[key] = value
    return row
