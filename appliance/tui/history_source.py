"""What the history panel needs from the trajectory store, as plain values.

The panel talks to a `HistorySource` (list runs matching a search, get one run with its steps);
`StoreHistory` adapts the SQLite store, `MemoryHistory` keeps runs of this session in memory (used
when no database can be opened, and in tests). Both are called from thread workers only.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence


@dataclass(frozen=True)
class RunRow:
    run_id: str
    question: str
    status: str
    started_at: float
    steps: int
    model: str = ""


@dataclass(frozen=True)
class StepRow:
    step: int
    thought: str
    action: str
    action_input: Mapping[str, Any]
    observation_status: str
    observation: str
    observation_summary: str
    reflection: Mapping[str, Any] | None = None
    threads: int | None = None
    threads_batch: int | None = None
    tokens_per_second: float = 0.0


@dataclass(frozen=True)
class RunReplay:
    row: RunRow
    answer: str = ""
    result: Mapping[str, Any] = field(default_factory=dict)
    evidence: tuple[str, ...] = ()
    error: str = ""
    forced: bool = False
    steps: tuple[StepRow, ...] = ()


class HistorySource(Protocol):
    def list_runs(self, query: str = "", limit: int = 200) -> list[RunRow]: ...

    def get_run(self, run_id: str) -> RunReplay | None: ...


def _matches(row: RunRow, query: str) -> bool:
    words = query.lower().split()
    haystack = f"{row.question} {row.status} {row.model} {row.run_id}".lower()
    return all(word in haystack for word in words)


def step_row_from_event(event: Any) -> StepRow:
    """A StepRecorded event (or any object with the same attributes) as a StepRow."""
    stats = getattr(event, "stats", None)
    return StepRow(
        step=event.step,
        thought=event.thought or "",
        action=event.action or "",
        action_input=dict(event.action_input or {}),
        observation_status=event.observation_status or "",
        observation=event.observation or "",
        observation_summary=event.observation_summary or "",
        reflection=dict(event.reflection) if event.reflection else None,
        threads=getattr(stats, "threads", None),
        threads_batch=getattr(stats, "threads_batch", None),
        tokens_per_second=float(getattr(stats, "tokens_per_second", 0.0) or 0.0),
    )


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
            run["steps"].append(step_row_from_event(event))
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


def evidence_list(value: Any) -> tuple[str, ...]:
    if not value:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Sequence):
        return tuple(str(item) for item in value)
    return (str(value),)


def _epoch(value: Any) -> float:
    """The store keeps ISO-8601 UTC text; the panel wants epoch seconds."""
    if isinstance(value, (int, float)):
        return float(value)
    import datetime as dt

    try:
        return dt.datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def _row_from_store(run: Mapping[str, Any]) -> RunRow:
    return RunRow(
        run_id=str(run["id"]),
        question=str(run.get("question") or ""),
        status=str(run.get("status") or ""),
        started_at=_epoch(run.get("started_at")),
        steps=int(run.get("step_count") or len(run.get("steps") or ())),
        model=str(run.get("model_name") or ""),
    )


class StoreHistory:
    """The SQLite store, opened read-only for each query in the calling (worker) thread, so the
    history panel never shares a connection with the run being recorded."""

    def __init__(self, db_path: Any) -> None:
        self.db_path = db_path

    def _open(self) -> Any:
        from appliance.store import open_store

        return open_store(self.db_path, readonly=True)

    def list_runs(self, query: str = "", limit: int = 200) -> list[RunRow]:
        import os

        if not os.path.exists(self.db_path):
            return []  # nothing asked yet: an empty list, not an error
        with self._open() as store:
            return [_row_from_store(run) for run in store.list_runs(limit=limit, search=query or None)]

    def get_run(self, run_id: str) -> RunReplay | None:
        with self._open() as store:
            run = store.get_run(run_id)
        result = run.get("result") or {}
        result = dict(result) if isinstance(result, Mapping) else {"value": result}
        steps = []
        for step in run.get("steps") or ():
            reflection = step.get("reflection")
            steps.append(
                StepRow(
                    step=int(step.get("step") or 0),
                    thought=str(step.get("thought") or ""),
                    action=str(step.get("action") or ""),
                    action_input=step.get("action_input") if isinstance(step.get("action_input"), Mapping) else {},
                    observation_status=str(step.get("observation_status") or ""),
                    observation=str(step.get("observation") or ""),
                    observation_summary=str(step.get("observation_summary") or ""),
                    reflection=reflection if isinstance(reflection, Mapping) else None,
                    threads=step.get("threads"),
                    threads_batch=step.get("threads_batch"),
                    tokens_per_second=float(step.get("tokens_per_second") or 0.0),
                )
            )
        return RunReplay(
            row=_row_from_store(run),
            answer=str(run.get("answer") or ""),
            result=result,
            # The store keeps evidence in its own column (decoded to a list); older rows may
            # have carried it inside the result.
            evidence=evidence_list(run.get("evidence") or result.get("evidence")),
            error=str(run.get("error") or ""),
            steps=tuple(steps),
        )
