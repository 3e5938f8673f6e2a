"""What the store gives back: typed, frozen records of runs and steps, made from rows by `from_row`.

Why typed records and not the rows: every reader (`appliance runs`, the TUI's history and replay,
the exports, the importer) would otherwise re-type the same columns (`str(row.get(..) or "")`),
and each would do it a little differently. `from_row` is the one place that knows how a stored
row (or an exported one) becomes values, the pattern of simonw/llm's `Response.from_row`.

A field is optional (None) exactly where the store leaves the column NULL: a run that has not
ended, a run without a final answer, a step without a reflection, a count the model did not
report. Where the store always writes a value, a NULL in an older or imported row reads as the
empty value ("", 0, {}), so readers never test for None there.

`from_row` takes either a row as SQLite holds it (JSON columns as text) or the `to_dict()` shape
(JSON already decoded, as in an export file), so an export reads back as what was exported.
`to_dict()` is the documented JSON shape (docs/store.md): the column names, JSON decoded, a run's
`steps` as a list when they were loaded. `record["column"]` and `record.get("column")` read that
shape too, for scripts written against the rows; code in the appliance uses the attributes.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

from appliance.agent.events import StepRecorded
from appliance.store.timefmt import iso

OMIT_WHEN_NONE = {"omit_when_none": True}  # field metadata: left out of to_dict() when not loaded
AS_INTEGER = {"as_integer": True}  # field metadata: a flag the JSON shape has always carried as 0/1


def dumps(value: Any) -> str | None:
    """A JSON column's text (None stays NULL)."""
    if value is None:
        return None
    return json.dumps(value, default=str, ensure_ascii=False)


def loads(value: Any) -> Any:
    """A JSON column's value: text decoded, anything else (already decoded, NULL) as it is; text
    that is not JSON is kept as text rather than lost."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def text(value: Any) -> str:
    return "" if value is None else str(value)


def optional_text(value: Any) -> str | None:
    return None if value is None else str(value)


def integer(value: Any, default: int = 0) -> int:
    try:
        return default if value is None else int(value)
    except (TypeError, ValueError):
        return default


def optional_integer(value: Any) -> int | None:
    return None if value is None else integer(value)


def number(value: Any) -> float:
    try:
        return 0.0 if value is None else float(value)
    except (TypeError, ValueError):
        return 0.0


def optional_number(value: Any) -> float | None:
    return None if value is None else number(value)


def optional_flag(value: Any) -> bool | None:
    return None if value is None else bool(value)


def mapping(value: Any) -> dict[str, Any]:
    """A JSON object column as a dict: NULL is {}, and a stray non-object value is kept under
    "value" rather than dropped."""
    decoded = loads(value)
    if decoded is None:
        return {}
    if isinstance(decoded, Mapping):
        return dict(decoded)
    return {"value": decoded}


def optional_mapping(value: Any) -> dict[str, Any] | None:
    return None if loads(value) is None else mapping(value)


def strings(value: Any) -> tuple[str, ...]:
    decoded = loads(value)
    if not decoded:
        return ()
    if isinstance(decoded, str):
        return (decoded,)
    if isinstance(decoded, (list, tuple)):
        return tuple(str(item) for item in decoded)
    return (str(decoded),)


def epoch_of(stamp: str | None) -> float:
    """Epoch seconds of a stored ISO time; 0.0 when there is none or it cannot be read."""
    if not stamp:
        return 0.0
    try:
        return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def _plain(value: Any) -> Any:
    """`value` as JSON-ready data: records as their dicts, tuples as lists, dicts copied."""
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


class Record:
    """The read-only dict view every record shares: `to_dict()`, `record[key]`, `record.get(key)`."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if value is None and f.metadata.get("omit_when_none"):
                continue
            if isinstance(value, bool) and f.metadata.get("as_integer"):
                value = int(value)
            out[f.name] = _plain(value)
        return out

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.to_dict().get(key, default)

    def keys(self) -> Any:
        return self.to_dict().keys()

    def __contains__(self, key: object) -> bool:
        return key in self.to_dict()


@dataclass(frozen=True)
class ReflectionRecord(Record):
    """A step's reflection. The engine stores {"continue", "reason", "next_plan", "trigger"}, the
    keys of its reflection schema; `should_continue` is only the Python name, because `continue` is
    a keyword. A row that spelled the key `should_continue` reads the same way.

    `to_dict()` gives back what the row held (the one spelling fixed, nothing added), so a stored
    reflection survives export and import unchanged."""

    should_continue: bool = True
    reason: str = ""
    next_plan: str = ""
    trigger: str | None = None
    stored: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_value(cls, value: Any) -> "ReflectionRecord | None":
        decoded = loads(value)
        if isinstance(decoded, ReflectionRecord):
            return decoded
        if not isinstance(decoded, Mapping) or not decoded:
            return None
        legacy = "continue" not in decoded  # then `should_continue`, if there, is the verdict
        stored = {("continue" if key == "should_continue" else key): item for key, item in decoded.items()
                  if key != "should_continue" or legacy}
        return cls(bool(stored.get("continue", True)), text(stored.get("reason")), text(stored.get("next_plan")),
                   optional_text(stored.get("trigger")), stored)

    def to_dict(self) -> dict[str, Any]:
        if self.stored is not None:
            return _plain(dict(self.stored))
        out: dict[str, Any] = {"continue": self.should_continue, "reason": self.reason, "next_plan": self.next_plan}
        if self.trigger is not None:
            out["trigger"] = self.trigger
        return out


@dataclass(frozen=True, kw_only=True)
class StepRecord(Record):
    """One row of `steps`: what the model thought and did in one step and what it saw."""

    id: int | None = None
    run_id: str
    step: int
    at: str
    thought: str = ""
    action: str = ""
    action_input: dict[str, Any] = field(default_factory=dict)
    observation_status: str = ""
    observation: str = ""
    observation_summary: str = ""
    reflection: ReflectionRecord | None = None
    evaluation: str = ""
    prompt_tokens: int = 0
    prompt_tokens_reused: int = 0
    completion_tokens: int = 0
    generation_ms: float = 0.0
    prompt_ms: float = 0.0
    tool_ms: float = 0.0
    tokens_per_second: float = 0.0
    threads: int | None = None
    threads_batch: int | None = None

    JSON_COLUMNS: ClassVar[tuple[str, ...]] = ("action_input", "reflection")

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> "StepRecord":
        return cls(
            run_id=text(row.get("run_id")), step=integer(row.get("step")), at=text(row.get("at")),
            id=optional_integer(row.get("id")), thought=text(row.get("thought")), action=text(row.get("action")),
            action_input=mapping(row.get("action_input")), observation_status=text(row.get("observation_status")),
            observation=text(row.get("observation")), observation_summary=text(row.get("observation_summary")),
            reflection=ReflectionRecord.from_value(row.get("reflection")), evaluation=text(row.get("evaluation")),
            prompt_tokens=integer(row.get("prompt_tokens")),
            prompt_tokens_reused=integer(row.get("prompt_tokens_reused")),
            completion_tokens=integer(row.get("completion_tokens")), generation_ms=number(row.get("generation_ms")),
            prompt_ms=number(row.get("prompt_ms")), tool_ms=number(row.get("tool_ms")),
            tokens_per_second=number(row.get("tokens_per_second")), threads=optional_integer(row.get("threads")),
            threads_batch=optional_integer(row.get("threads_batch")),
        )

    @classmethod
    def from_event(cls, event: StepRecorded) -> "StepRecord":
        """The record of a step as the engine reported it (before the store redacts and caps it)."""
        stats = event.stats
        return cls(
            run_id=event.run_id, step=event.step, at=iso(event.at), thought=text(event.thought),
            action=text(event.action), action_input=dict(event.action_input or {}),
            observation_status=text(event.observation_status), observation=text(event.observation),
            observation_summary=text(event.observation_summary),
            reflection=ReflectionRecord.from_value(event.reflection), evaluation=text(event.evaluation),
            prompt_tokens=stats.prompt_tokens_evaluated, prompt_tokens_reused=stats.prompt_tokens_reused,
            completion_tokens=stats.completion_tokens, generation_ms=round(stats.generation_ms, 3),
            prompt_ms=round(stats.prompt_ms, 3), tool_ms=round(event.tool_ms, 3),
            tokens_per_second=round(stats.tokens_per_second, 3), threads=stats.threads,
            threads_batch=stats.threads_batch,
        )

    @property
    def made_by_model(self) -> bool:
        """False for the first snapshot, which the engine takes without the model."""
        return bool(self.completion_tokens or self.generation_ms)

    def to_row(self) -> dict[str, Any]:
        return to_row(self, self.JSON_COLUMNS, ("id",))


@dataclass(frozen=True, kw_only=True)
class RunRecord(Record):
    """One row of `runs`, with its steps in order when they were loaded (`Store.get_run`); `steps`
    is None for a run from `Store.list_runs`, which reads the runs table only."""

    seq: int | None = None
    id: str
    started_at: str
    ended_at: str | None = None
    question: str
    model_name: str = ""
    model_path: str | None = None
    model_size: int | None = None
    model_sha256: str | None = None
    context_length: int | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    status: str
    answer: str | None = None
    result: dict[str, Any] | None = None
    evidence: tuple[str, ...] | None = None
    forced: bool | None = field(default=None, metadata=AS_INTEGER)
    error: str | None = None
    step_count: int = 0
    prompt_tokens: int = 0
    prompt_tokens_reused: int = 0
    completion_tokens: int = 0
    seconds: float | None = None
    version: str = ""
    host: str | None = None
    timing: dict[str, Any] | None = None
    runtime: dict[str, Any] | None = None
    steps: tuple[StepRecord, ...] | None = field(default=None, metadata=OMIT_WHEN_NONE)

    JSON_COLUMNS: ClassVar[tuple[str, ...]] = ("settings", "result", "evidence", "timing", "runtime")

    @classmethod
    def from_row(cls, row: Mapping[str, Any], steps: Any = None) -> "RunRecord":
        """`steps`: the step rows (default: the row's own "steps", as in an export file)."""
        steps = row.get("steps") if steps is None else steps
        evidence = loads(row.get("evidence"))
        return cls(
            id=text(row.get("id")), started_at=text(row.get("started_at")), question=text(row.get("question")),
            status=text(row.get("status")), seq=optional_integer(row.get("seq")),
            ended_at=optional_text(row.get("ended_at")), model_name=text(row.get("model_name")),
            model_path=optional_text(row.get("model_path")), model_size=optional_integer(row.get("model_size")),
            model_sha256=optional_text(row.get("model_sha256")),
            context_length=optional_integer(row.get("context_length")), settings=mapping(row.get("settings")),
            answer=optional_text(row.get("answer")), result=optional_mapping(row.get("result")),
            evidence=None if evidence is None else strings(evidence), forced=optional_flag(row.get("forced")),
            error=optional_text(row.get("error")), step_count=integer(row.get("step_count")),
            prompt_tokens=integer(row.get("prompt_tokens")),
            prompt_tokens_reused=integer(row.get("prompt_tokens_reused")),
            completion_tokens=integer(row.get("completion_tokens")), seconds=optional_number(row.get("seconds")),
            version=text(row.get("version")), host=optional_text(row.get("host")),
            timing=optional_mapping(row.get("timing")), runtime=optional_mapping(row.get("runtime")),
            steps=None if steps is None else tuple(
                s if isinstance(s, StepRecord) else StepRecord.from_row(s) for s in steps),
        )

    @property
    def started_epoch(self) -> float:
        return epoch_of(self.started_at)

    @property
    def ended_epoch(self) -> float:
        return epoch_of(self.ended_at)

    def to_row(self) -> dict[str, Any]:
        """The runs row (no seq, no steps): JSON columns as text, flags as 0/1."""
        return to_row(self, self.JSON_COLUMNS, ("seq", "steps"))


@dataclass(frozen=True)
class ModelStats(Record):
    """One line of `Store.stats()`: a model's runs, finished share, means and generation speed."""

    model: str
    runs: int = 0
    finished: int = 0
    finished_share: float = 0.0
    mean_steps: float = 0.0
    prompt_tokens: int = 0
    prompt_tokens_reused: int = 0
    completion_tokens: int = 0
    mean_tokens: float = 0.0
    mean_seconds: float | None = None
    tokens_per_second: float | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> "ModelStats":
        return cls(
            model=text(row.get("model")), runs=integer(row.get("runs")), finished=integer(row.get("finished")),
            finished_share=number(row.get("finished_share")), mean_steps=number(row.get("mean_steps")),
            prompt_tokens=integer(row.get("prompt_tokens")),
            prompt_tokens_reused=integer(row.get("prompt_tokens_reused")),
            completion_tokens=integer(row.get("completion_tokens")), mean_tokens=number(row.get("mean_tokens")),
            mean_seconds=optional_number(row.get("mean_seconds")),
            tokens_per_second=optional_number(row.get("tokens_per_second")),
        )


def to_row(record: Record, json_columns: tuple[str, ...], leave_out: tuple[str, ...]) -> dict[str, Any]:
    """A record as the row to insert: JSON columns encoded, booleans as 0/1, `leave_out` (row ids
    the database assigns, loaded children) not included."""
    row: dict[str, Any] = {}
    for f in dataclasses.fields(record):  # type: ignore[arg-type]
        if f.name in leave_out:
            continue
        value = getattr(record, f.name)
        if f.name in json_columns:
            value = dumps(_plain(value))
        elif isinstance(value, bool):
            value = int(value)
        row[f.name] = value
    return row
