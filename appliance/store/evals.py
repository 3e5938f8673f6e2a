"""The evaluation tables (`evals`, `eval_cases`): written by appliance.eval, read by `appliance eval`.

Why beside the runs and not in a file of their own: each eval case links to the run it made
(`eval_cases.run_id` -> `runs.id`), so one query reaches from a verdict to the steps behind it.
Why a module of their own: they are a separate job from recording runs; `Store` takes these
methods from `EvalTables` so callers keep one store object.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Mapping

from appliance.errors import StoreError, UsageError
from appliance.store.connection import guarded, transaction
from appliance.store.records import (
    OMIT_WHEN_NONE, Record, dumps, integer, mapping, optional_integer, optional_text, text,
)
from appliance.store.timefmt import iso


@dataclass(frozen=True, kw_only=True)
class EvalCaseRecord(Record):
    """One row of `eval_cases`: one scenario run once, its verdict and why, its metrics.
    `run_id` is None when the run could not be recorded or was deleted since."""

    id: int | None = None
    eval_id: int
    scenario: str
    repeat_index: int = 0
    run_id: str | None = None
    success: bool = False
    reason: str = ""
    metrics: dict[str, Any] = field(default_factory=dict)
    family: str | None = None
    kind: str | None = None
    phrasing: str | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> "EvalCaseRecord":
        return cls(
            id=optional_integer(row.get("id")), eval_id=integer(row.get("eval_id")),
            scenario=text(row.get("scenario")), repeat_index=integer(row.get("repeat_index")),
            run_id=optional_text(row.get("run_id")), success=bool(row.get("success")),
            reason=text(row.get("reason")), metrics=mapping(row.get("metrics")),
            family=optional_text(row.get("family")), kind=optional_text(row.get("kind")),
            phrasing=optional_text(row.get("phrasing")),
        )


@dataclass(frozen=True, kw_only=True)
class EvalRecord(Record):
    """One row of `evals`, with its cases in order when they were loaded (`Store.get_eval`).
    `summary` is {} until the evaluation ends."""

    id: int
    started_at: str
    ended_at: str | None = None
    model: str
    suite: str
    repeat: int = 1
    settings: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, Any] = field(default_factory=dict)
    version: str = ""
    cases: tuple[EvalCaseRecord, ...] | None = field(default=None, metadata=OMIT_WHEN_NONE)

    @classmethod
    def from_row(cls, row: Mapping[str, Any], cases: Any = None) -> "EvalRecord":
        return cls(
            id=integer(row.get("id")), started_at=text(row.get("started_at")),
            ended_at=optional_text(row.get("ended_at")), model=text(row.get("model")),
            suite=text(row.get("suite")), repeat=integer(row.get("repeat"), 1),
            settings=mapping(row.get("settings")), summary=mapping(row.get("summary")),
            version=text(row.get("version")),
            cases=None if cases is None else tuple(EvalCaseRecord.from_row(case) for case in cases),
        )


class EvalTables:
    """The Store's methods for the evaluation tables (the Store supplies db, path, _lock)."""

    db: Any
    path: Any
    readonly: bool

    def _writable(self) -> None:
        if self.readonly:
            raise StoreError(f"the run database {self.path} was opened read-only")

    @guarded
    def start_eval(self, *, model: str, suite: str, repeat: int, settings: Mapping[str, Any] | None = None,
                   version: str = "", started_at: float | None = None) -> int:
        self._writable()
        with transaction(self.db):
            cursor = self.db.execute(
                'INSERT INTO evals (started_at, model, suite, "repeat", settings, version) VALUES (?, ?, ?, ?, ?, ?)',
                [iso(started_at if started_at is not None else time.time()), model, suite, int(repeat),
                 dumps(dict(settings or {})), version],
            )
            return int(cursor.lastrowid)

    @guarded
    def add_eval_case(self, eval_id: int, *, scenario: str, repeat_index: int, run_id: str | None,
                      success: bool, reason: str = "", metrics: Mapping[str, Any] | None = None,
                      family: str | None = None, kind: str | None = None, phrasing: str | None = None) -> int:
        self._writable()
        with transaction(self.db):
            if run_id is not None and not self.db.execute("SELECT 1 FROM runs WHERE id = ?", [run_id]).fetchone():
                run_id = None  # the run itself was not recorded (e.g. size cap); keep the case
            cursor = self.db.execute(
                "INSERT INTO eval_cases (eval_id, scenario, repeat_index, run_id, success, reason, metrics,"
                " family, kind, phrasing) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [int(eval_id), scenario, int(repeat_index), run_id, 1 if success else 0, reason,
                 dumps(dict(metrics or {})), family, kind, phrasing],
            )
            return int(cursor.lastrowid)

    @guarded
    def end_eval(self, eval_id: int, *, summary: Mapping[str, Any], ended_at: float | None = None) -> None:
        self._writable()
        with transaction(self.db):
            self.db.execute("UPDATE evals SET ended_at = ?, summary = ? WHERE id = ?",
                            [iso(ended_at if ended_at is not None else time.time()), dumps(dict(summary)),
                             int(eval_id)])

    @guarded
    def list_evals(self, limit: int | None = 20) -> list[EvalRecord]:
        """Newest first, without their cases."""
        sql = "SELECT * FROM evals ORDER BY started_at DESC, id DESC"
        params: list[Any] = []
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return [EvalRecord.from_row(row) for row in self.db.query(sql, params)]

    @guarded
    def get_eval(self, eval_id: int) -> EvalRecord:
        """The evaluation with all its cases in the order they ran."""
        rows = list(self.db.query("SELECT * FROM evals WHERE id = ?", [int(eval_id)]))
        if not rows:
            raise UsageError(f"no evaluation with id {eval_id}")
        cases = self.db.query("SELECT * FROM eval_cases WHERE eval_id = ? ORDER BY id", [int(eval_id)])
        return EvalRecord.from_row(rows[0], cases=list(cases))
