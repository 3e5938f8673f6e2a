"""Reading evaluations back from the database, and the canary search.

The rows are written through the store (`Store.start_eval/add_eval_case/end_eval`, tables `evals`
and `eval_cases` beside the runs, `run_id` -> runs.id); this module turns what a person typed into
an eval id and normalises a stored eval for summaries and `eval compare`.

The canary search: a planted secret must appear nowhere in the database, so every column of every
ordinary table is searched (the FTS indexes read from those same tables).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, Iterable, Sequence

from appliance.errors import UsageError

CANARY_WINDOW = 12  # a stretch of this many characters of a canary counts as a leak


def resolve_eval(store: Any, ref: str) -> int:
    """An eval id from what a person typed: a number, 'latest' or 'previous'."""
    text = ref.strip().lower()
    if text in ("latest", "last", "previous", "prev"):
        offset = 0 if text in ("latest", "last") else 1
        evals = store.list_evals(limit=offset + 1)
        if len(evals) <= offset:
            raise UsageError(f"no {text} evaluation in the database")
        return evals[offset].id
    if not text.isdigit():
        raise UsageError(f"not an evaluation id: {ref!r} (use a number from `appliance eval list`, or latest/previous)")
    return int(text)


def load_eval(store: Any, eval_id: int) -> dict[str, Any]:
    """The eval row and its cases as plain data (an EvalRecord's `to_dict()`: success a bool,
    settings, summary and metrics dicts), the shape summaries and `eval compare` read."""
    return store.get_eval(eval_id).to_dict()


# -- canaries ---------------------------------------------------------------------------------


def canary_windows(canary: str, window: int = CANARY_WINDOW) -> list[str]:
    """Overlapping stretches of a canary; any one of them found counts as a leak (a redactor that
    keeps half a secret has still leaked it)."""
    if len(canary) <= window:
        return [canary]
    step = max(1, window // 3)
    starts = list(range(0, len(canary) - window + 1, step))
    if starts[-1] != len(canary) - window:
        starts.append(len(canary) - window)
    return [canary[s : s + window] for s in starts]


def leaked_in_text(canaries: Iterable[str], text: str) -> list[str]:
    return [c for c in canaries if any(w in text for w in canary_windows(c))]


def _text_columns(conn: sqlite3.Connection) -> list[tuple[str, list[str]]]:
    tables = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
    ).fetchall()
    out = []
    for name, sql in tables:
        if (sql or "").upper().startswith("CREATE VIRTUAL"):
            continue  # FTS index: its content comes from the ordinary tables searched here
        if any(name.startswith(f"{v}_") for v, s in tables if (s or "").upper().startswith("CREATE VIRTUAL")):
            continue  # FTS shadow tables (binary segments)
        columns = [row[1] for row in conn.execute(f'PRAGMA table_info("{name}")').fetchall()]
        out.append((name, columns))
    return out


def leaked_in_database(canaries: Sequence[str], db_path: Path | str) -> list[str]:
    """The canaries any stretch of which appears in any column of any table of the database."""
    if not canaries:
        return []
    conn = sqlite3.connect(f"file:{Path(db_path).absolute()}?mode=ro", uri=True)
    try:
        found = []
        tables = _text_columns(conn)
        for canary in canaries:
            for (table, columns), window in ((t, w) for t in tables for w in canary_windows(canary)):
                where = " OR ".join(f'instr(CAST("{c}" AS TEXT), :w) > 0' for c in columns)
                if conn.execute(f'SELECT 1 FROM "{table}" WHERE {where} LIMIT 1', {"w": window}).fetchone():
                    found.append(canary)
                    break
        return found
    finally:
        conn.close()
