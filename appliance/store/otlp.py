"""Runs as OpenTelemetry traces: the OTLP JSON file format with the GenAI semantic conventions.

Why OTLP: a site that wants one place to read the runs of many machines most likely runs (or can
run) an OpenTelemetry Collector, Jaeger, Tempo or any other OTLP backend; the Collector's file
receiver (`otlpjsonfile`) reads exactly this file. So the appliance writes the standard and invents
no collector.

One trace per run, its id the run's id (both are 128 random bits):
- `invoke_agent appliance` — the run: the question, the model, the status, the token totals;
- per step, two children: `chat MODEL` (the model call, with its token usage) followed by
  `execute_tool TOOL` (the action and what it returned); step 0, the first snapshot the engine
  takes without the model, is an `execute_tool snapshot` alone.

Step spans are placed on the run's clock from what the store knows: a step ends at its `at`, its
tool ran for `tool_ms` just before that, and the model call took `prompt_ms + generation_ms` before
the tool. Anonymised exactly as the JSON export is (the same Masker, before the spans are built).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Iterable, TextIO

from appliance import __version__
from appliance.store.anonymize import Identity
from appliance.store.export import prepare
from appliance.store.records import RunRecord, StepRecord, epoch_of

SPAN_KIND_INTERNAL = 1
SPAN_KIND_CLIENT = 3
STATUS_OK = 1
STATUS_ERROR = 2
AGENT = "appliance"
ERROR_STATUSES = {"error", "interrupted"}


def _nanos(seconds: float) -> str:
    return str(int(round(seconds * 1e9)))


def _span_id(run_id: str, label: str) -> str:
    return hashlib.sha256(f"{run_id}/{label}".encode()).hexdigest()[:16]


def trace_id(run_id: str) -> str:
    """The run id when it is already 32 hex digits (uuid4 hex), else a hash of it."""
    text = run_id.lower()
    if len(text) == 32 and all(c in "0123456789abcdef" for c in text) and text.strip("0"):
        return text
    return hashlib.sha256(run_id.encode()).hexdigest()[:32]


def attribute(key: str, value: Any) -> dict[str, Any] | None:
    """One OTLP KeyValue; None for an empty value (absent beats blank)."""
    if value is None or value == "":
        return None
    wrapped: dict[str, Any]
    if isinstance(value, bool):
        wrapped = {"boolValue": value}
    elif isinstance(value, int):
        wrapped = {"intValue": str(value)}  # int64 is a string in OTLP JSON
    elif isinstance(value, float):
        wrapped = {"doubleValue": value}
    elif isinstance(value, (list, tuple)):
        wrapped = {"arrayValue": {"values": [{"stringValue": str(v)} for v in value]}}
    elif isinstance(value, dict):
        wrapped = {"stringValue": json.dumps(value, ensure_ascii=False, default=str)}
    else:
        wrapped = {"stringValue": str(value)}
    return {"key": key, "value": wrapped}


def attributes(pairs: dict[str, Any]) -> list[dict[str, Any]]:
    return [a for a in (attribute(k, v) for k, v in pairs.items()) if a is not None]


def _span(run: RunRecord, name: str, span_id: str, parent: str, kind: int, start: float, end: float,
          attrs: dict[str, Any], error: str = "") -> dict[str, Any]:
    span = {
        "traceId": trace_id(run.id),
        "spanId": span_id,
        "name": name,
        "kind": kind,
        "startTimeUnixNano": _nanos(start),
        "endTimeUnixNano": _nanos(max(start, end)),
        "attributes": attributes(attrs),
        "status": {"code": STATUS_ERROR, "message": error} if error else {"code": STATUS_OK},
    }
    if parent:
        span["parentSpanId"] = parent
    return span


def run_spans(run: RunRecord) -> list[dict[str, Any]]:
    """The spans of one stored run (as `Store.get_run` returns it)."""
    started = run.started_epoch
    ended = run.ended_epoch or started + (run.seconds or 0.0)
    root = _span_id(run.id, "run")
    failed = run.status in ERROR_STATUSES
    spans = [_span(run, f"invoke_agent {AGENT}", root, "", SPAN_KIND_INTERNAL, started, ended, {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": AGENT,
        "gen_ai.conversation.id": run.id,
        "gen_ai.request.model": run.model_name,
        "gen_ai.usage.input_tokens": run.prompt_tokens + run.prompt_tokens_reused,
        "gen_ai.usage.output_tokens": run.completion_tokens,
        "appliance.run.status": run.status,
        "appliance.question": run.question,
        "appliance.answer": run.answer,
        "appliance.steps": run.step_count,
        "appliance.model.sha256": run.model_sha256,
        "appliance.usage.prompt_tokens_reused": run.prompt_tokens_reused,
    }, error=(run.error or run.status) if failed else "")]
    previous_end = started
    for step in run.steps or ():
        spans.extend(_step_spans(run, step, root, previous_end))
        previous_end = epoch_of(step.at) or previous_end
    return spans


def _step_spans(run: RunRecord, step: StepRecord, root: str, previous_end: float) -> list[dict[str, Any]]:
    end = epoch_of(step.at) or previous_end
    # stored times are whole milliseconds and the tool's own time is finer: a span never starts before the one before it
    tool_start = max(previous_end, end - step.tool_ms / 1000.0)
    chat_start = max(previous_end, tool_start - (step.prompt_ms + step.generation_ms) / 1000.0)
    n = step.step
    chat = _span(run, f"chat {run.model_name}", _span_id(run.id, f"chat/{n}"), root, SPAN_KIND_CLIENT,
                 chat_start, tool_start, {
                     "gen_ai.operation.name": "chat",
                     "gen_ai.request.model": run.model_name,
                     "gen_ai.usage.input_tokens": step.prompt_tokens + step.prompt_tokens_reused,
                     "gen_ai.usage.output_tokens": step.completion_tokens,
                     "appliance.step": n,
                     "appliance.thought": step.thought,
                     "appliance.usage.prompt_tokens_reused": step.prompt_tokens_reused,
                 })
    action = step.action or "unknown"
    status = step.observation_status
    tool = _span(run, f"execute_tool {action}", _span_id(run.id, f"tool/{n}"), root, SPAN_KIND_INTERNAL,
                 tool_start, end, {
                     "gen_ai.operation.name": "execute_tool",
                     "gen_ai.tool.name": action,
                     "gen_ai.tool.call.id": f"{run.id}/{n}",
                     "gen_ai.tool.call.arguments": step.action_input,
                     "appliance.step": n,
                     "appliance.observation.status": status,
                     "appliance.observation.summary": step.observation_summary,
                     "appliance.evaluation": step.evaluation,
                 }, error=status if status in ("error", "timeout") else "")
    return [chat, tool] if step.made_by_model else [tool]


def document(runs: Iterable[RunRecord], *, anonymize: bool = False,
             identity: Identity | None = None) -> dict[str, Any]:
    """One ExportTraceServiceRequest in OTLP JSON: one resource per host, every run's spans."""
    by_host: dict[str, list[dict[str, Any]]] = {}
    for run in prepare(runs, anonymize=anonymize, identity=identity):
        by_host.setdefault(run.host or "unknown", []).extend(run_spans(run))
    return {"resourceSpans": [
        {
            "resource": {"attributes": attributes({"service.name": AGENT, "service.version": __version__,
                                                   "host.name": host})},
            "scopeSpans": [{"scope": {"name": "appliance.store.otlp", "version": __version__}, "spans": spans}],
        }
        for host, spans in by_host.items()
    ]}


def write(runs: Iterable[RunRecord], stream: TextIO, *, anonymize: bool = False,
          identity: Identity | None = None) -> int:
    """Write the OTLP JSON document (one line, as the Collector's file exporter does); returns the
    number of runs."""
    doc = document(runs, anonymize=anonymize, identity=identity)
    stream.write(json.dumps(doc, ensure_ascii=False) + "\n")
    return sum(1 for rs in doc["resourceSpans"] for s in rs["scopeSpans"][0]["spans"] if "parentSpanId" not in s)
