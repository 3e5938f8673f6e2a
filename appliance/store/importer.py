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

import dataclasses
import json
import sqlite3
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from appliance.agent.events import INTERRUPTED, RUNNING
from appliance.errors import UsageError
from appliance.store.connection import transaction
from appliance.store.export import FORMAT_NAME
from appliance.store.export_file import read_export_text
from appliance.store.failures import translate
from appliance.store.records import RunRecord
from appliance.store.store import Store


@dataclass
class ImportResult:
    added: int = 0
    skipped: int = 0
    renamed: int = 0
    hosts: tuple[str, ...] = ()


def read_export(path: Path) -> list[RunRecord]:
    """The runs of a JSON Lines or JSON export (`runs export`); a file that is neither is one line."""
    text = read_export_text(Path(path))  # bounded: a device or a huge file is one line
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
    try:
        records = [RunRecord.from_row(run) for run in runs]
    except (AttributeError, TypeError) as exc:  # e.g. steps that are not objects
        raise UsageError(f"{path} is not an appliance runs export ({exc.__class__.__name__})") from None
    for record in records:
        numbers = [step.step for step in record.steps or ()]
        twice = sorted({n for n in numbers if numbers.count(n) > 1}, key=str)
        if twice:
            raise UsageError(f"{path} is not a valid runs export: run {str(record.id)[:8]} has two steps numbered "
                             f"{twice[0]}; nothing was imported")
    return records


def import_runs(store: Store, runs: Iterable[RunRecord], *, host: str | None = None) -> ImportResult:
    """Insert `runs` (each with its steps) into the open writable `store`, one transaction each."""
    if store.readonly or store.closed:
        raise UsageError(f"the run database {store.path} is not open for writing")
    result = ImportResult()
    hosts: set[str] = set()
    try:
        with transaction(store.db):  # all or nothing: a run the database refuses leaves no half import
            for run in runs:
                run = _as_imported(run, host)
                outcome = _insert(store, run)
                if outcome == "skipped":
                    result.skipped += 1
                    continue
                result.added += 1
                result.renamed += outcome == "renamed"
                hosts.add(run.host or "unknown")
    except sqlite3.IntegrityError as exc:  # the file's fault (a constraint its runs break), not the database's
        raise UsageError(f"the export holds a run this database cannot take ({exc}); nothing was imported") from None
    except sqlite3.Error as exc:
        raise translate(exc, store.path) from exc
    result.hosts = tuple(sorted(hosts))
    return result


def _as_imported(run: RunRecord, host: str | None) -> RunRecord:
    """The host it was made on; a run exported while still going is an interrupted one here."""
    run = dataclasses.replace(run, host=host or run.host or "unknown")
    if run.status == RUNNING:
        run = dataclasses.replace(run, status=INTERRUPTED,
                                  error=run.error or "the run was still going when it was exported")
    return run


def _insert(store: Store, run: RunRecord) -> str:
    db = store.db
    outcome = "added"
    same = db.execute("SELECT host, started_at FROM runs WHERE id = ?", [run.id]).fetchone()
    if same is not None:
        if tuple(same) == (run.host, run.started_at):
            return "skipped"
        run = dataclasses.replace(run, id=uuid.uuid4().hex)
        outcome = "renamed"
    db.table("runs").insert(run.to_row(), alter=False)
    for step in run.steps or ():
        db.table("steps").insert(dataclasses.replace(step, run_id=run.id).to_row(), alter=False)
    return outcome
