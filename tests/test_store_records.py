"""The store's typed records: `from_row` reads rows of every age (NULL columns, columns added by
later migrations missing, the old reflection spelling), and what it reads survives to_dict, an
export file and an import unchanged."""

from __future__ import annotations

import dataclasses
import io
import json

import pytest

from appliance.agent import events as ev
from appliance.commands.runs import render_run
from appliance.store import export, migrations, open_store
from appliance.store.connection import connect
from appliance.store.evals import EvalCaseRecord, EvalRecord
from appliance.store.importer import import_runs
from appliance.store.records import ReflectionRecord, RunRecord, StepRecord
from appliance.tui.history_source import MemoryHistory, StoreHistory
from support.store import record_all, run_events

OLD_RUN = {  # a runs row as m001 wrote it: no host, timing or runtime columns; a run that never ended
    "seq": 1, "id": "old-run", "started_at": "2026-01-01T00:00:00.000Z", "ended_at": None,
    "question": "why is the disk full?", "model_name": "m", "model_path": None, "model_size": None,
    "model_sha256": None, "context_length": None, "settings": None, "status": "interrupted", "answer": None,
    "result": None, "evidence": None, "forced": None, "error": None, "step_count": 0, "prompt_tokens": 0,
    "prompt_tokens_reused": 0, "completion_tokens": 0, "seconds": None, "version": None,
}


def test_an_old_run_row_reads_with_none_only_where_the_store_leaves_nulls():
    run = RunRecord.from_row(OLD_RUN)
    assert (run.id, run.status, run.question) == ("old-run", "interrupted", "why is the disk full?")
    assert run.ended_at is None and run.answer is None and run.result is None and run.evidence is None
    assert run.forced is None and run.seconds is None and run.host is None and run.timing is None
    assert run.settings == {} and run.version == "" and run.step_count == 0
    assert run.steps is None and "steps" not in run.to_dict()  # a listed run: its steps were not read
    assert run.started_epoch == pytest.approx(1767225600.0) and run.ended_epoch == 0.0


def test_a_step_row_with_null_columns_reads_as_empty_values():
    step = StepRecord.from_row({"id": 7, "run_id": "old-run", "step": 0, "at": "2026-01-01T00:00:01.000Z",
                                "thought": None, "action": None, "action_input": None, "observation": None,
                                "observation_status": None, "reflection": None, "prompt_tokens": None,
                                "generation_ms": None})
    assert (step.thought, step.action, step.observation, step.observation_status) == ("", "", "", "")
    assert step.action_input == {} and step.reflection is None and step.prompt_tokens == 0
    assert step.generation_ms == 0.0 and step.threads is None and step.threads_batch is None
    assert not step.made_by_model


@pytest.mark.parametrize("stored, should_continue", [
    ('{"continue": false, "reason": "enough", "next_plan": "finish"}', False),
    ('{"should_continue": false, "reason": "enough", "next_plan": "finish"}', False),
    ('{"should_continue": true, "reason": "enough", "next_plan": "finish"}', True),
    ('{"continue": false, "should_continue": true, "reason": "enough", "next_plan": "finish"}', False),
])
def test_both_reflection_spellings_read_as_one(stored, should_continue):
    step = StepRecord.from_row({"run_id": "r", "step": 1, "at": "", "reflection": stored})
    assert step.reflection == ReflectionRecord(should_continue, "enough", "finish")
    assert step.reflection.to_dict() == {"continue": should_continue, "reason": "enough", "next_plan": "finish"}
    assert step["reflection"]["continue"] is should_continue


def test_a_reflection_keeps_exactly_what_was_stored():
    partial = ReflectionRecord.from_value({"reason": "checking"})
    assert partial.should_continue and partial.next_plan == "" and partial.to_dict() == {"reason": "checking"}
    made = ReflectionRecord(False, "r", "p", "tool failed")
    assert made.to_dict() == {"continue": False, "reason": "r", "next_plan": "p", "trigger": "tool failed"}
    assert ReflectionRecord.from_value(None) is None and ReflectionRecord.from_value("not json") is None


def test_records_are_frozen_and_read_by_key_like_their_dict():
    run = RunRecord.from_row(OLD_RUN)
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.status = "finished"  # type: ignore[misc]
    assert run["question"] == run.question and run.get("nothing", 3) == 3 and "host" in run
    with pytest.raises(KeyError):
        run["nothing"]


def test_a_database_at_the_first_version_reads_as_records(tmp_path, capsys):
    """Rows written before later columns existed, and a reflection in the old spelling, through
    the store, `runs show` and the TUI's history."""
    path = tmp_path / "old.db"
    db = connect(path, readonly=False)
    migrations.migrate(db, migrations.MIGRATIONS[:3])
    db["runs"].insert({k: v for k, v in OLD_RUN.items() if k != "seq"})
    db.execute("INSERT INTO steps (run_id, step, at, thought, action, observation, reflection) VALUES "
               "('old-run', 0, '2026-01-01T00:00:01.000Z', 'look at the disk', 'df', 'sda1 99% full', "
               "'{\"should_continue\": false, \"reason\": \"found it\", \"next_plan\": \"finish\"}')")
    db.close()
    open_store(path).close()  # a writer brings it up to date
    with open_store(path, readonly=True) as store:
        run = store.get_run("old")
    (step,) = run.steps
    assert step.reflection.should_continue is False and step.threads is None and run.host is None
    assert "Reflection: continue=False reason=found it next_plan=finish" in render_run(run)
    replay = StoreHistory(path).get_run("old-run")
    assert replay.steps == (step,) and replay.answer == "" and replay.evidence == () and not replay.forced


def test_a_recorded_run_survives_to_dict_export_and_import_unchanged(tmp_path):
    with open_store(tmp_path / "a.db", host="ws-01") as store:
        record_all(store, run_events("run-1", 3))
        run = store.get_run("run-1")
    assert RunRecord.from_row(json.loads(json.dumps(run.to_dict()))) == run
    out = io.StringIO()
    export.write([run], out, fmt="jsonl")
    with open_store(tmp_path / "b.db") as site:
        assert import_runs(site, [RunRecord.from_row(json.loads(out.getvalue()))]).added == 1
        copy = site.get_run("run-1")
    assert dataclasses.replace(copy, seq=run.seq, steps=None) == dataclasses.replace(run, steps=None)
    assert [dataclasses.replace(s, id=None) for s in copy.steps] == [dataclasses.replace(s, id=None) for s in run.steps]
    assert copy.steps[1].reflection.to_dict() == {"reason": "checking"} and copy.forced is False


def test_the_live_history_and_the_stored_history_hold_the_same_steps(tmp_path):
    events = run_events("run-1", 3)
    events[-2] = dataclasses.replace(events[-2], forced=True)  # the final answer, made by loop control
    memory = MemoryHistory()
    with open_store(tmp_path / "runs.db") as store:
        for event in events:
            memory.record(event)
            store.record(event)
    live, stored = memory.get_run("run-1"), StoreHistory(tmp_path / "runs.db").get_run("run-1")
    assert [dataclasses.replace(s, id=None) for s in stored.steps] == list(live.steps)
    assert (stored.answer, stored.result, stored.evidence, stored.forced) == \
        (live.answer, live.result, live.evidence, live.forced) == ("hogzilla uses the CPU", {"process": "hogzilla"},
                                                                   ("pid=4711",), True)


def test_eval_rows_of_every_age_read_as_records(tmp_path):
    case = EvalCaseRecord.from_row({"id": 1, "eval_id": 2, "scenario": "cpu_hog", "repeat_index": None,
                                    "run_id": None, "success": 0, "reason": None, "metrics": None})
    assert (case.success, case.reason, case.metrics, case.family, case.repeat_index) == (False, "", {}, None, 0)
    with open_store(tmp_path / "runs.db") as store:
        eval_id = store.start_eval(model="m", suite="smoke", repeat=2)
        store.add_eval_case(eval_id, scenario="cpu_hog", repeat_index=1, run_id=None, success=True,
                            metrics={"steps": 3}, family="processes", kind="precise", phrasing="precise")
        unfinished = store.get_eval(eval_id)
        listed = store.list_evals()
    assert isinstance(unfinished, EvalRecord) and unfinished.summary == {} and unfinished.ended_at is None
    (stored,) = unfinished.cases
    assert stored.success is True and stored.metrics == {"steps": 3} and stored.family == "processes"
    assert [e.id for e in listed] == [eval_id] and listed[0].cases is None and "cases" not in listed[0].to_dict()
    assert unfinished.to_dict()["cases"][0]["success"] is True


def test_a_run_still_going_lists_as_running_with_no_end(tmp_path):
    with open_store(tmp_path / "runs.db") as store:
        record_all(store, run_events("live", 2, end=False))
        (listed,) = store.list_runs()
    assert listed.status == ev.RUNNING and listed.ended_at is None and listed.answer is None
    assert listed.steps is None and listed.step_count == 0
