"""Runs of many machines in one place: OTLP traces read back by OpenTelemetry's own protobuf
decoders, and `runs import` of two machines' exports giving one database that lists both hosts."""

from __future__ import annotations

import base64
import json

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from appliance.agent import events as ev
from appliance.agent.engine import Engine
from appliance.agent.settings import EngineSettings
from appliance.cli import main
from appliance.llm.fake import ScriptedModel
from appliance.store import open_store
from appliance.store.anonymize import Identity
from appliance.store.otlp import document
from support.tui import STEP_FINISH, STEP_TOOL, registry


def record_runs(db, host: str, questions: list[str], *, fail_second_step: bool = False) -> list[str]:
    """Real engine runs (scripted model) recorded in `db` as made on `host`; returns the run ids."""
    ids = []
    with open_store(db, host=host) as store:
        for question in questions:
            model = ScriptedModel([STEP_TOOL, STEP_FINISH], name="smollm2-135m-instruct",
                                  fail_on_call=1 if fail_second_step else None)
            engine = Engine(model, registry(), EngineSettings(max_steps=4, allow_ask=False),
                            snapshot=lambda pids: {"load": [0.1, 0.1, 0.1]})
            for event in engine.run(question):
                store.record(event)
                if isinstance(event, ev.RunEnded):
                    ids.append(event.run_id)
    return ids


def parse_otlp(text: str) -> ExportTraceServiceRequest:
    """OTLP JSON -> the protobuf message. OTLP JSON writes trace and span ids as hex where
    protobuf's JSON mapping expects base64 (the one documented difference), so they are converted
    first — and must then be exactly 16 and 8 bytes."""
    raw = json.loads(text)
    for resource in raw["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return json_format.Parse(json.dumps(raw), ExportTraceServiceRequest(), ignore_unknown_fields=False)


def attrs(span) -> dict:
    out = {}
    for kv in span.attributes:
        kind = kv.value.WhichOneof("value")
        out[kv.key] = getattr(kv.value, kind)
    return out


def test_otlp_export_is_read_back_by_the_opentelemetry_decoders(tmp_path, capsys):
    db = tmp_path / "runs.db"
    [ok_id] = record_runs(db, "ws-01", ["why is my fan loud?"])
    [bad_id] = record_runs(db, "ws-01", ["why is it slow?"], fail_second_step=True)
    out = tmp_path / "traces.json"
    assert main(["runs", "export", "--all", "--format", "otlp", "--db", str(db), "-o", str(out)]) == 0
    request = parse_otlp(out.read_text())
    [resource] = request.resource_spans
    assert attrs(resource.resource) == {"service.name": "appliance", "service.version": attrs(resource.resource)["service.version"],
                                        "host.name": "ws-01"}
    spans = list(resource.scope_spans[0].spans)
    by_trace: dict[str, list] = {}
    for span in spans:
        assert len(span.trace_id) == 16 and len(span.span_id) == 8
        assert span.end_time_unix_nano >= span.start_time_unix_nano > 1_700_000_000 * 10**9
        by_trace.setdefault(span.trace_id.hex(), []).append(span)
    assert set(by_trace) == {ok_id, bad_id}  # one trace per run, its id the run's id

    ok = by_trace[ok_id]
    [root] = [s for s in ok if not s.parent_span_id]
    assert root.name == "invoke_agent appliance" and root.status.code == 1
    a = attrs(root)
    assert a["gen_ai.operation.name"] == "invoke_agent" and a["gen_ai.request.model"] == "smollm2-135m-instruct"
    assert a["gen_ai.usage.output_tokens"] > 0 and a["appliance.run.status"] == "finished"
    children = [s for s in ok if s.parent_span_id == root.span_id]
    assert len(children) == len(ok) - 1  # every other span hangs under the run
    tools = [attrs(s) for s in children if s.name.startswith("execute_tool")]
    assert [t["gen_ai.tool.name"] for t in tools] == ["snapshot", "top_processes", "finish"]  # one per step
    chats = [attrs(s) for s in children if s.name.startswith("chat ")]
    assert len(chats) == 2 and all(c["gen_ai.usage.output_tokens"] > 0 for c in chats)
    assert sum(c["gen_ai.usage.output_tokens"] for c in chats) == a["gen_ai.usage.output_tokens"]
    for span in children:
        assert root.start_time_unix_nano <= span.start_time_unix_nano <= span.end_time_unix_nano <= root.end_time_unix_nano

    [failed] = [s for s in by_trace[bad_id] if not s.parent_span_id]
    assert failed.status.code == 2 and "scripted model failure" in failed.status.message


def test_otlp_export_is_anonymized_like_the_json_export(tmp_path):
    db = tmp_path / "runs.db"
    record_runs(db, "alice-laptop", ["why is /home/alice/big full? (ip 10.1.2.3)"])
    with open_store(db, readonly=True) as store:
        runs = [store.get_run(r["id"]) for r in store.list_runs()]
    identity = Identity(hostnames=("alice-laptop",), users=("alice",), homes=("/home/alice",))
    text = json.dumps(document(runs, anonymize=True, identity=identity))
    assert "alice" not in text and "10.1.2.3" not in text
    request = parse_otlp(text)
    resource = request.resource_spans[0]
    assert attrs(resource.resource)["host.name"] == "host-1"
    [root] = [s for s in resource.scope_spans[0].spans if not s.parent_span_id]
    assert attrs(root)["appliance.question"] == "why is /home/user-1/big full? (ip ip-1)"


def test_runs_import_merges_two_machines_into_one_database(tmp_path, capsys):
    first, second, site = tmp_path / "a.db", tmp_path / "b.db", tmp_path / "site.db"
    a_ids = record_runs(first, "ws-01", ["why is my fan loud?", "why is the disk full?"])
    b_ids = record_runs(second, "build-02", ["why is it slow?"], fail_second_step=True)
    exports = []
    for db, fmt in ((first, "jsonl"), (second, "json")):
        path = tmp_path / f"{db.stem}.{fmt}"
        assert main(["runs", "export", "--all", "--format", fmt, "--db", str(db), "-o", str(path)]) == 0
        exports.append(str(path))
    capsys.readouterr()
    assert main(["runs", "import", *exports, "--db", str(site)]) == 0
    said = capsys.readouterr().out
    assert "imported 2 runs from ws-01" in said and "imported 1 run from build-02" in said

    assert main(["runs", "list", "--db", str(site)]) == 0
    listing = capsys.readouterr().out.splitlines()
    assert "HOST" in listing[0]
    assert sorted(line.split()[3] for line in listing[1:]) == ["build-02", "ws-01", "ws-01"]

    with open_store(site, readonly=True) as store:
        merged = {r["id"]: store.get_run(r["id"]) for r in store.list_runs(limit=None)}
    with open_store(first, readonly=True) as store:
        original = store.get_run(a_ids[0])
    assert set(merged) == set(a_ids + b_ids)
    copy = merged[a_ids[0]]
    assert copy["question"] == original["question"] and copy["result"] == original["result"]
    assert [(s["step"], s["action"], s["observation"]) for s in copy["steps"]] == \
           [(s["step"], s["action"], s["observation"]) for s in original["steps"]]
    assert merged[b_ids[0]]["status"] == ev.ERROR and merged[b_ids[0]]["host"] == "build-02"
    # the full-text index covers imported runs too
    assert main(["runs", "list", "--db", str(site), "--search", "disk", "--json"]) == 0
    assert [r["id"] for r in json.loads(capsys.readouterr().out)] == [a_ids[1]]

    # importing the same export again adds nothing; a clashing id from elsewhere gets a new one
    assert main(["runs", "import", exports[0], "--db", str(site)]) == 0
    assert "imported 0 runs" in capsys.readouterr().out
    assert main(["runs", "import", exports[0], "--db", str(site), "--host", "ws-01-clone"]) == 0
    assert "2 given new ids" in capsys.readouterr().out
    with open_store(site, readonly=True) as store:
        assert len(store.list_runs(limit=None)) == 5


def test_runs_import_refuses_what_is_not_an_export(tmp_path, capsys):
    bogus = tmp_path / "notes.txt"
    bogus.write_text("hello\n")
    assert main(["runs", "import", str(bogus), "--db", str(tmp_path / "site.db")]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("appliance: ") and "is not an appliance runs export" in line
    assert not (tmp_path / "site.db").exists()  # nothing written when an input is bad
