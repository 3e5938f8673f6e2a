"""Store.record writes what the events say; the queries give it back; SafeRecorder never raises."""

from __future__ import annotations

import threading
import time

import pytest

from appliance.agent import events as ev
from appliance.errors import StoreError, UsageError
from appliance.llm.base import GenerationStats
from appliance.store import OBSERVATION_CAP, SafeRecorder, open_recorder, open_store
from appliance.store.timefmt import epoch, parse_date
from support.store import MODEL, SETTINGS, record_all, run_events


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "runs.db")
    yield s
    s.close()


def test_a_run_is_written_as_its_events_say(store):
    events = run_events("run-abc", 3)
    store.record(events[0])
    live = store.get_run("run-abc")
    assert live["status"] == ev.RUNNING and live["steps"] == []
    assert live["model_sha256"] == MODEL.sha256 and live["model_size"] == MODEL.size
    assert live["model_path"] == MODEL.path and live["context_length"] == 4096
    assert live["settings"] == SETTINGS
    for event in events[1:]:
        store.record(event)
    run = store.get_run("run-abc")
    end = events[-1]
    assert run["status"] == ev.FINISHED and run["answer"] == end.answer
    assert run["result"] == {"process": "hogzilla"} and run["evidence"] == ["pid=4711"] and run["forced"] == 0
    assert (run["step_count"], run["prompt_tokens"], run["prompt_tokens_reused"], run["completion_tokens"]) == \
        (3, end.prompt_tokens, end.prompt_tokens_reused, 60)
    assert run["seconds"] == pytest.approx(end.seconds)
    assert epoch(run["started_at"]) == pytest.approx(events[0].started_at, abs=0.002)
    assert epoch(run["ended_at"]) == pytest.approx(end.ended_at, abs=0.002)
    steps = run["steps"]
    assert [s["step"] for s in steps] == [0, 1, 2]
    one = steps[1]
    assert one["thought"] == "thought 1 of run-abc" and one["action"] == "top_processes"
    assert one["action_input"] == {"sort_by": "cpu", "n": 6}
    assert one["observation_status"] == "ok" and one["observation"].endswith("(step 1)")
    assert one["observation_summary"] == "summary 1" and one["reflection"] == {"reason": "checking"}
    assert (one["prompt_tokens"], one["prompt_tokens_reused"], one["completion_tokens"]) == (101, 50, 20)
    assert one["generation_ms"] == 400.0 and one["prompt_ms"] == 80.0 and one["tool_ms"] == 3.5
    assert one["tokens_per_second"] == pytest.approx(50.0)
    assert (one["threads"], one["threads_batch"]) == (1, 2)


def test_events_that_are_not_stored_are_ignored(store):
    record_all(store, run_events("r1", 1)[:2])
    store.record(ev.TextDelta("r1", 1, "{\"thou"))
    store.record(ev.ThoughtMade("r1", 1, "hmm"))
    store.record(ev.StepStarted("r1", 1, 8, time.time()))
    assert store.db.execute("SELECT count(*) FROM steps").fetchone()[0] == 1


def test_observations_are_redacted_and_capped(store):
    secret = "AKIAABCDEFGHIJKLMNOP"
    long_text = "password=hunter2hunter2\n" + "x" * (OBSERVATION_CAP + 5000)  # a value runs to its line's end
    store.record(run_events("r1", 0, end=False)[0])
    store.record(ev.StepRecorded("r1", 0, time.time(), "t", "read_file", {"path": "/etc/app.env"}, "ok",
                                 long_text, f"aws key {secret}", None, ""))
    step = store.get_run("r1")["steps"][0]
    assert "hunter2hunter2" not in step["observation"]
    assert secret not in step["observation_summary"]
    assert len(step["observation"]) < OBSERVATION_CAP + 100
    assert "more characters not stored" in step["observation"]


def test_search_finds_questions_answers_thoughts_and_observations(store):
    record_all(store, run_events("q-run", 1, question="why is nginx slow?", answer="ok", observation="nothing"))
    record_all(store, run_events("a-run", 1, question="q", answer="the swapfile is thrashing", observation="x"))
    record_all(store, run_events("o-run", 1, question="q", answer="ok", observation="oom-killer took postgres"))
    store.record(ev.RunStarted("t-run", "q", MODEL, {}, time.time(), "0.1.0"))
    store.record(ev.StepRecorded("t-run", 0, time.time(), "maybe the raid array is degraded", "df", {}, "ok", "", "",
                                 None, ""))
    assert [r["id"] for r in store.list_runs(search="nginx")] == ["q-run"]
    assert [r["id"] for r in store.list_runs(search="swapfile")] == ["a-run"]
    assert [r["id"] for r in store.list_runs(search="oom-killer postgres")] == ["o-run"]
    assert [r["id"] for r in store.list_runs(search="raid degraded")] == ["t-run"]
    assert store.list_runs(search='quote" ( AND') == []  # punctuation cannot break the FTS query
    assert {r["id"] for r in store.list_runs(status=ev.RUNNING)} == {"t-run"}
    assert len(store.list_runs(limit=2)) == 2
    assert store.list_runs(limit=1)[0]["id"] == "t-run"  # newest first


def test_run_ids_resolve_by_unique_prefix(store):
    record_all(store, run_events("3f2a91", 1))
    record_all(store, run_events("3f2b07", 1))
    assert store.get_run("3f2a")["id"] == "3f2a91"
    assert store.resolve_run_id("3f2b07") == "3f2b07"
    with pytest.raises(UsageError, match="several runs"):
        store.get_run("3f2")
    with pytest.raises(UsageError, match="no run"):
        store.get_run("zz")


def test_stats_per_model(store):
    record_all(store, run_events("r1", 2))
    record_all(store, run_events("r2", 4, status=ev.MAX_STEPS))
    (row,) = store.stats()
    assert row["model"] == MODEL.name and row["runs"] == 2 and row["finished"] == 1
    assert row["finished_share"] == 0.5 and row["mean_steps"] == 3.0
    assert row["completion_tokens"] == 120
    assert row["tokens_per_second"] == pytest.approx(50.0)  # 20 tokens per 400 ms


def test_delete_by_id_and_before_date_removes_steps_and_search_entries(store):
    old = time.time() - 10 * 86400
    record_all(store, run_events("old-1", 2, start=old, observation="ancient zebra"))
    record_all(store, run_events("old-2", 1, start=old + 60))
    record_all(store, run_events("new-1", 2, observation="fresh zebra"))
    cutoff = parse_date(time.strftime("%Y-%m-%d", time.gmtime(time.time() - 86400)))
    assert store.delete_before(cutoff) == 2
    assert [r["id"] for r in store.list_runs()] == ["new-1"]
    assert store.db.execute("SELECT count(*) FROM steps WHERE run_id LIKE 'old%'").fetchone()[0] == 0
    assert [r["id"] for r in store.list_runs(search="zebra")] == ["new-1"]
    assert store.delete_run("new") == "new-1"
    assert store.list_runs() == [] and store.db.execute("SELECT count(*) FROM steps_fts").fetchone()[0] == 0


def test_size_cap_refuses_new_runs_with_a_clear_message_and_rm_makes_room(tmp_path):
    store = open_store(tmp_path / "runs.db", max_bytes=400_000)
    old = time.time() - 5 * 86400
    n = 0
    with pytest.raises(StoreError) as caught:
        while n < 200:
            record_all(store, run_events(f"big-{n}", 3, start=old, observation="y" * 9000))
            n += 1
    assert "size cap" in caught.value.message and "appliance runs rm --before DATE" in caught.value.message
    assert 5 < n < 200
    assert store.delete_before(parse_date(time.strftime("%Y-%m-%d"))) == n
    record_all(store, run_events("after-rm", 1))  # room again
    assert store.get_run("after-rm")["status"] == ev.FINISHED
    store.close()


def test_safe_recorder_never_raises_keeps_the_first_failure_and_stops(tmp_path):
    store = open_store(tmp_path / "runs.db", max_bytes=1)  # every new run is refused
    recorder = SafeRecorder(store)
    for event in run_events("r1", 3):
        recorder.record(event)  # must not raise
    assert recorder.failure and "size cap" in recorder.failure and not recorder.ok
    assert store.db.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
    first = recorder.failure
    recorder.record(run_events("r2", 1)[0])
    assert recorder.failure == first
    store.close()
    nothing = SafeRecorder(None)
    nothing.record(run_events("r3", 1)[0])
    assert nothing.failure is None and not nothing.ok


def test_open_recorder_carries_the_reason_when_the_database_cannot_be_opened(tmp_path):
    bad = tmp_path / "not-a-db.db"
    bad.write_bytes(b"this is not sqlite at all" * 100)
    recorder = open_recorder(bad)
    assert recorder.store is None and "corrupt" in recorder.failure
    for event in run_events("r1", 1):
        recorder.record(event)
    good = open_recorder(tmp_path / "ok.db")
    assert good.ok
    record_all(good, run_events("r1", 1))
    good.close()


def test_a_second_writer_is_refused_while_the_first_is_open(tmp_path):
    path = tmp_path / "runs.db"
    import subprocess, sys
    from support.store import REPO
    holder = subprocess.Popen([sys.executable, "-c",
                               "import sys, time; sys.path.insert(0, sys.argv[2]);"
                               "from appliance.store import open_store; s = open_store(sys.argv[1]);"
                               "print('open', flush=True); time.sleep(60)", str(path), str(REPO)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        with pytest.raises(StoreError, match=rf"being written by another appliance process \(pid {holder.pid}\)"):
            open_store(path)
        reader = open_store(path, readonly=True)  # readers are never refused
        assert reader.list_runs() == []
        reader.close()
    finally:
        holder.kill()
        holder.wait()
    open_store(path).close()  # the kernel dropped the dead writer's lock


def test_record_from_several_threads_is_serialised(store):
    errors: list[BaseException] = []

    def writer(k: int) -> None:
        try:
            record_all(store, run_events(f"thread-{k}", 5))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert store.db.execute("SELECT count(*) FROM steps").fetchone()[0] == 20


def test_evaluations_link_cases_to_runs(store):
    record_all(store, run_events("eval-run-1", 2))
    eval_id = store.start_eval(model="smollm2-135m", suite="smoke", repeat=3, settings={"temperature": 0.0},
                               version="0.1.0")
    store.add_eval_case(eval_id, scenario="cpu_hog", repeat_index=0, run_id="eval-run-1", success=True,
                        reason="named hogzilla", metrics={"steps": 2})
    store.add_eval_case(eval_id, scenario="disk_full", repeat_index=0, run_id="never-recorded", success=False,
                        reason="no answer")
    store.end_eval(eval_id, summary={"success_rate": 0.5})
    result = store.get_eval(eval_id)
    assert result["summary"] == {"success_rate": 0.5} and result["repeat"] == 3 and result["ended_at"]
    assert [(c["scenario"], c["run_id"], c["success"]) for c in result["cases"]] == \
        [("cpu_hog", "eval-run-1", 1), ("disk_full", None, 0)]
    store.delete_run("eval-run-1")
    assert store.get_eval(eval_id)["cases"][0]["run_id"] is None  # the case stays, unlinked
    assert [e["id"] for e in store.list_evals()] == [eval_id]


def test_a_reader_cannot_write(tmp_path):
    path = tmp_path / "runs.db"
    open_store(path).close()
    reader = open_store(path, readonly=True)
    with pytest.raises(StoreError, match="read-only"):
        reader.record(run_events("r1", 0)[0])
    reader.close()
    with pytest.raises(StoreError, match="no run database"):
        open_store(tmp_path / "missing.db", readonly=True)


def test_generation_stats_threads_default_to_null(store):
    store.record(run_events("r1", 0, end=False)[0])
    store.record(ev.StepRecorded("r1", 0, time.time(), "t", "a", {}, "ok", "o", "", None, "", GenerationStats()))
    step = store.get_run("r1")["steps"][0]
    assert step["threads"] is None and step["tokens_per_second"] == 0.0


def test_a_folder_where_the_database_should_be(tmp_path):
    folder = tmp_path / "runs.db"
    folder.mkdir()
    for readonly in (False, True):
        with pytest.raises(StoreError, match="is a folder, not a file"):
            open_store(folder, readonly=readonly)
    assert not (tmp_path / "runs.db.lock").exists()
