"""What the history panel needs from the trajectory store, as plain values.

The panel talks to a `HistorySource` (list runs matching a search, get one run with its steps);
`StoreHistory` adapts the SQLite store, `MemoryHistory` keeps runs of this session in memory (used
when no database can be opened, and in tests). Both are called from thread workers only. The
steps of a replay are the store's own StepRecords, from the database or from the events.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol

from appliance.store import Store, open_store
from appliance.store.records import RunRecord, StepRecord, strings


@dataclass(frozen=True)
class RunRow:
    """One line of the history table (times as epoch seconds, for local formatting)."""

    run_id: str
    question: str
    status: str
    started_at: float
    steps: int
    model: str = ""

    @classmethod
    def from_record(cls, run: RunRecord) -> "RunRow":
        steps = run.step_count or len(run.steps or ())
        return cls(run.id, run.question, run.status, run.started_epoch, steps, run.model_name)


@dataclass(frozen=True)
class RunReplay:
    row: RunRow
    answer: str = ""
    result: Mapping[str, Any] = field(default_factory=dict)
    evidence: tuple[str, ...] = ()
    error: str = ""
    forced: bool = False
    steps: tuple[StepRecord, ...] = ()

    @classmethod
    def from_record(cls, run: RunRecord) -> "RunReplay":
        result = run.result or {}
        return cls(
            row=RunRow.from_record(run),
            answer=run.answer or "",
            result=result,
            # The store keeps evidence in its own column; older rows may have carried it inside the result.
            evidence=run.evidence or strings(result.get("evidence")),
            error=run.error or "",
            forced=bool(run.forced),
            steps=run.steps or (),
        )


class HistorySource(Protocol):
    def list_runs(self, query: str = "", limit: int = 200) -> list[RunRow]: ...

    def get_run(self, run_id: str) -> RunReplay | None: ...


def _matches(row: RunRow, query: str) -> bool:
    words = query.lower().split()
    haystack = f"{row.question} {row.status} {row.model} {row.run_id}".lower()
    return all(word in haystack for word in words)


class MemoryHistory:
    """Runs of this session, rebuilt from the events (also a recorder: `record(event)`)."""

    def __init__(self) -> None:
        self._runs: dict[str, dict[str, Any]] = {}
        self.failure: str | None = None

    def record(self, event: Any) -> None:
        from appliance.agent import events as ev

        if isinstance(event, ev.RunStarted):
            self._runs[event.run_id] = {
                "row": RunRow(event.run_id, event.question, "running", event.started_at, 0, event.model.name),
                "steps": [],
                "final": None,
                "ended": None,
            }
            return
        run = self._runs.get(getattr(event, "run_id", ""))
        if run is None:
            return
        if isinstance(event, ev.StepRecorded):
            run["steps"].append(StepRecord.from_event(event))
        elif isinstance(event, ev.FinalAnswer):
            run["final"] = event
        elif isinstance(event, ev.RunEnded):
            run["ended"] = event

    def list_runs(self, query: str = "", limit: int = 200) -> list[RunRow]:
        rows = [self._row(run) for run in self._runs.values()]
        rows = [row for row in rows if _matches(row, query)]
        rows.sort(key=lambda row: row.started_at, reverse=True)
        return rows[:limit]

    def get_run(self, run_id: str) -> RunReplay | None:
        run = self._runs.get(run_id)
        if run is None:
            return None
        final, ended = run["final"], run["ended"]
        return RunReplay(
            row=self._row(run),
            answer=(ended.answer if ended else "") or (final.answer if final else ""),
            result=dict((ended.result if ended else None) or (final.result if final else {}) or {}),
            evidence=tuple(final.evidence) if final else (),
            error=ended.error if ended else "",
            forced=bool(final.forced) if final else False,
            steps=tuple(run["steps"]),
        )

    @staticmethod
    def _row(run: dict[str, Any]) -> RunRow:
        row: RunRow = run["row"]
        ended = run["ended"]
        return RunRow(
            row.run_id,
            row.question,
            ended.status if ended else row.status,
            row.started_at,
            len(run["steps"]),
            row.model,
        )


def format_when(started_at: float, now: float | None = None) -> str:
    """'14:02' today, else '11-28 14:02' (local time): short enough for an 80-column table."""
    now = time.time() if now is None else now
    stamp = time.localtime(started_at)
    if time.strftime("%Y-%m-%d", stamp) == time.strftime("%Y-%m-%d", time.localtime(now)):
        return time.strftime("%H:%M", stamp)
    return time.strftime("%m-%d %H:%M", stamp)


class StoreHistory:
    """The SQLite store, opened read-only for each query in the calling (worker) thread, so the
    history panel never shares a connection with the run being recorded."""

    def __init__(self, db_path: Any) -> None:
        self.db_path = db_path

    def _open(self) -> Store:
        return open_store(self.db_path, readonly=True)

    def list_runs(self, query: str = "", limit: int = 200) -> list[RunRow]:
        if not os.path.exists(self.db_path):
            return []  # nothing asked yet: an empty list, not an error
        with self._open() as store:
            return [RunRow.from_record(run) for run in store.list_runs(limit=limit, search=query or None)]

    def get_run(self, run_id: str) -> RunReplay | None:
        with self._open() as store:
            return RunReplay.from_record(store.get_run(run_id))
