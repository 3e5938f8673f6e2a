"""The engine's loop control, driven by a scripted model and small real ToolSpecs.

Each test scripts the model's replies, runs one question, and asserts on the events and on the
prompts the model was given (ScriptedModel keeps every call)."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace

import pytest

from appliance.agent import events as ev
from appliance.agent.engine import Engine
from appliance.agent.settings import EngineSettings
from appliance.llm.fake import ScriptedModel
from appliance.tools.base import Registry, ToolSpec, fail, ok, result
from appliance.tools.procs import SELF_LABEL
from appliance.tools.schema import Range, schema_from_signature
from support.claims import claim
from typing import Annotated, Literal

SNAP = {"load": {"1m": 0.4, "5m": 0.3, "15m": 0.2, "cpus": 2}}


class Tools:
    """A handful of real ToolSpecs whose calls are counted."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def _count(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    def registry(self, ttl_top: float | None = 0.0) -> Registry:
        def top_processes(sort_by: Literal["cpu", "memory"] = "cpu", n: Annotated[int, Range(1, 20)] = 5):
            self._count("top_processes")
            return ok([{"pid": 4711, "name": "hogzilla", "cpu_pct": 98.5}, {"pid": 1, "name": "init", "cpu_pct": 0.1}][:n])

        def read_log(path: str, lines: Annotated[int, Range(1, 500)] = 50):
            self._count("read_log")
            if path == "/var/log/missing.log":
                return fail("no such file: /var/log/missing.log")
            if path == "/var/log/empty.log":
                return result("empty", [], None)
            if path == "/var/log/clean.log":
                return ok(f"line one of {path}\nINFO backup of the disk quota volume finished\nline three")
            return ok(f"line one of {path}\nERROR disk quota exceeded for user7\nline three")

        def broken():
            self._count("broken")
            raise RuntimeError("sensor bus exploded")

        def slow():
            self._count("slow")
            time.sleep(2)
            return ok("late")

        def scan(path: str):
            self._count("scan")
            return ok({"path": path, "size_mb": 123})

        return Registry([
            ToolSpec("top_processes", "Processes by CPU or memory.", schema_from_signature(top_processes),
                     top_processes, {"sort_by": "cpu", "n": 5}, ttl=ttl_top),
            ToolSpec("read_log", "The tail of a log.", schema_from_signature(read_log), read_log,
                     {"path": "/var/log/syslog"}, ttl=None, reads="log"),
            ToolSpec("broken", "Always crashes.", schema_from_signature(broken), broken, {}),
            ToolSpec("slow", "Takes too long.", schema_from_signature(slow), slow, {}, timeout=0.2),
            ToolSpec("scan", "Directory scan.", schema_from_signature(scan), scan, {"path": "/tmp"}, ttl=None),
        ])


def call(action: str, thought: str = "next", **action_input) -> dict:
    return {"thought": thought, "action": action, "action_input": action_input}


def finish(answer: str, thought: str = "done", stance: str = "value", cites=None, **result_fields):
    """A finish as a claim that cites the facts holding what its answer states (support.claims);
    a process and pid given name the subject."""
    process, pid = result_fields.get("process"), result_fields.get("pid")
    subject = f"{process} (pid {pid})" if process and pid else result_fields.get("path", "")
    return claim(answer, stance, thought=thought, subject=subject, cites=cites)


GOOD_FINISH = finish("hogzilla (pid 4711) uses 98.5% CPU.", process="hogzilla", pid=4711)


def run(replies, settings=EngineSettings(), tools: Tools | None = None, *, ask=None, cancel=None,
        registry=None, model=None, question="Is the CPU busy?", snapshot=SNAP, **engine_kw):
    tools = tools or Tools()
    model = model or ScriptedModel(replies)
    engine = Engine(model, registry or tools.registry(), settings, snapshot=lambda pids: snapshot, **engine_kw)
    events = list(engine.run(question, ask=ask, cancel=cancel))
    return events, model, tools


def of(events, kind):
    return [e for e in events if isinstance(e, kind)]


def ended(events) -> ev.RunEnded:
    assert isinstance(events[-1], ev.RunEnded)
    assert len(of(events, ev.RunEnded)) == 1
    return events[-1]


def prompt_of(model: ScriptedModel, index: int) -> str:
    """The newest user message the model saw in call `index`."""
    return model.calls[index][0][-1].content


def actions_allowed(schema: dict) -> list[str]:
    options = schema.get("anyOf", [schema])
    return [o["properties"]["action"]["const"] for o in options]


# ---- the happy path and the event contract ---------------------------------------------------


def test_tool_then_finish_gives_the_answer_and_records_every_step():
    events, model, tools = run([call("top_processes", sort_by="cpu", n=5), GOOD_FINISH])
    end = ended(events)
    assert end.status == ev.FINISHED
    assert end.result["stance"] == "value" and end.result["subject"] == "hogzilla (pid 4711)"
    assert end.result["cites"][0] == "F2"  # the fact that holds what the answer states
    assert end.steps == 2 and tools.calls == {"top_processes": 1}
    recorded = of(events, ev.StepRecorded)
    assert [r.step for r in recorded] == [0, 1, 2]  # 0 is the machine snapshot
    assert recorded[1].action == "top_processes" and "hogzilla" in recorded[1].observation
    assert recorded[2].action == "finish" and recorded[2].evaluation == "answer accepted"
    assert isinstance(events[0], ev.RunStarted) and events[0].settings["max_steps"] == 8
    # the second prompt holds the observation in delimiters and the remaining budget
    second = prompt_of(model, 1)
    assert '<observation tool="top_processes" status="ok">' in second and "7 steps left." in second
    assert end.completion_tokens > 0 and end.prompt_tokens > 0


def test_transcript_only_grows_so_the_kv_cache_is_reused():
    replies = [call("top_processes", n=5), call("read_log", path="/var/log/a.log"), call("scan", path="/srv"),
               finish("hogzilla pid 4711 at 98.5% CPU", process="hogzilla")]
    events, model, _ = run(replies)
    assert ended(events).status == ev.FINISHED
    for (before, _), (after, _) in zip(model.calls, model.calls[1:]):
        assert after[: len(before)] == before, "an earlier message changed between steps"
    system = model.calls[0][0][0].content
    assert "steps left" not in system  # nothing that varies lives in the system message


def test_first_snapshot_is_the_first_observation_and_labels_the_appliance():
    tools = Tools()
    snapshot = lambda pids: {"top_cpu": [{"pid": 999999, "name": "python3", "cpu_pct": 180.0},
                                         {"pid": 4711, "name": "hogzilla", "cpu_pct": 98.0}]}
    engine = Engine(ScriptedModel([finish("hogzilla (pid 4711) uses 98.0% CPU.", process="hogzilla", pid=4711)]),
                    tools.registry(), EngineSettings(), self_pids=frozenset({999999}), snapshot=snapshot)
    events = list(engine.run("Which process uses the most CPU?"))
    first_user = engine.model.calls[0][0][1].content
    assert "Which process uses the most CPU?" in first_user and '<observation tool="snapshot"' in first_user
    line = next(l for l in first_user.splitlines() if "pid=999999" in l)
    assert SELF_LABEL in line
    assert SELF_LABEL not in next(l for l in first_user.splitlines() if "pid=4711" in l)
    assert ended(events).status == ev.FINISHED


def test_tool_data_mentioning_the_appliance_pid_is_labelled():
    def top_processes():
        return ok([{"pid": 31337, "name": "python3", "cpu_pct": 150.0}])

    registry = Registry([ToolSpec("top_processes", "x", schema_from_signature(top_processes), top_processes)])
    events, _, _ = run([call("top_processes"), finish("python3 is me", process="python3")],
                       registry=registry, self_pids=frozenset({31337}))
    obs = of(events, ev.ObservationMade)[1]
    assert SELF_LABEL in obs.text


def test_snapshot_can_be_turned_off():
    events, model, _ = run([call("top_processes"), GOOD_FINISH], EngineSettings(snapshot=False))
    assert "<observation" not in model.calls[0][0][1].content
    assert [r.step for r in of(events, ev.StepRecorded)] == [1, 2]


# ---- step limit and budgets -------------------------------------------------------------------


def test_step_limit_last_step_may_only_finish_and_the_count_is_visible():
    replies = [call("read_log", path=f"/var/log/{i}.log") for i in range(3)] + [finish("disk quota exceeded for user7")]
    events, model, _ = run(replies, EngineSettings(max_steps=4, reflection=False),
                           model=ScriptedModel(replies, labels=CPU_LABELS))  # a CPU question may finish at once
    assert ended(events).status == ev.FINISHED
    assert "finish" in actions_allowed(model.calls[0][1]) and len(actions_allowed(model.calls[0][1])) > 1
    assert actions_allowed(model.calls[-1][1]) == ["finish"]
    assert "This is your last step: you must use finish now" in prompt_of(model, 3)
    assert "4 steps left." in prompt_of(model, 0) and "3 steps left." in prompt_of(model, 1)


def test_step_limit_without_finish_ends_with_a_forced_answer_marked_as_such():
    replies = [call("read_log", path=f"/var/log/{i}.log") for i in range(3)]  # ignores the grammar
    events, _, _ = run(replies, EngineSettings(max_steps=3, reflection=False))
    end = ended(events)
    assert end.status == ev.MAX_STEPS and end.steps == 3
    final = of(events, ev.FinalAnswer)[-1]
    assert final.forced and "step limit" in final.answer and "disk quota" in final.answer


def test_token_budget_stops_the_run_with_status_budget():
    replies = [call("read_log", path=f"/var/log/{i}.log") for i in range(8)]
    events, model, _ = run(replies, EngineSettings(token_budget=1000, reflection=False))
    end = ended(events)
    assert end.status == ev.BUDGET and "token budget" in end.error
    assert end.prompt_tokens + end.completion_tokens >= 1000
    assert len(model.calls) < 8
    assert of(events, ev.FinalAnswer)[-1].forced


def test_time_budget_stops_the_run_between_steps():
    now = [0.0]

    def clock():
        now[0] += 10.0
        return now[0]

    replies = [call("read_log", path=f"/var/log/{i}.log") for i in range(8)]
    events, model, _ = run(replies, EngineSettings(time_budget_seconds=45, reflection=False), clock=clock)
    end = ended(events)
    assert end.status == ev.BUDGET and "time budget" in end.error
    assert len(model.calls) < 8


# ---- repeats, cache and no progress ----------------------------------------------------------


def test_repeat_is_answered_from_memory_with_a_note_and_third_forces_reflection():
    same = call("read_log", path="/var/log/a.log")
    reflection = {"continue": True, "reason": "I keep repeating", "next_plan": "call top_processes"}
    replies = [same, same, same, reflection, call("top_processes"), GOOD_FINISH]
    events, model, tools = run(replies)
    assert tools.calls["read_log"] == 1  # ttl None: the scan result stays valid for the run
    obs = of(events, ev.ObservationMade)
    assert [o.status for o in obs[1:4]] == ["ok", "repeat", "repeat"]
    assert obs[2].cached and "disk quota" in obs[2].text
    assert [s.repeat_of for s in of(events, ev.StepRecorded)[1:4]] == [None, 1, 1]
    assert "Already done: you made this exact call at step 1; here is the result again. Pick a different tool or finish." in prompt_of(model, 2)
    refl = of(events, ev.Reflected)
    assert len(refl) == 1 and "same call 3 times" in refl[0].trigger
    assert model.calls[3][1]["required"] == ["continue", "reason", "next_plan"]
    assert "Follow this plan: call top_processes" in prompt_of(model, 4)
    assert of(events, ev.StepRecorded)[3].reflection["next_plan"] == "call top_processes"
    assert ended(events).status == ev.FINISHED


def test_live_reading_with_expired_ttl_is_taken_again_but_still_flagged_as_a_repeat():
    same = call("top_processes", n=5)
    events, model, tools = run([same, same, GOOD_FINISH], tools=None, registry=None)
    assert tools.calls["top_processes"] == 2  # ttl 0: a live reading is never reused
    assert "Already done: you made this exact call at step 1" in prompt_of(model, 2)
    assert of(events, ev.StepRecorded)[2].evaluation.startswith("repeat of step 1")
    assert of(events, ev.StepRecorded)[2].repeat_of == 1 and of(events, ev.StepRecorded)[1].repeat_of is None


def test_ttl_in_seconds_reuses_a_fresh_result():
    tools = Tools()
    same = call("top_processes", n=5)
    events, _, _ = run([same, same, GOOD_FINISH], tools=tools, registry=tools.registry(ttl_top=60.0))
    assert tools.calls["top_processes"] == 1
    assert of(events, ev.ObservationMade)[2].cached


def test_argument_order_does_not_make_a_call_new():
    events, _, tools = run([call("read_log", path="/x.log", lines=5),
                            {"thought": "t", "action": "read_log", "action_input": {"lines": 5, "path": "/x.log"}},
                            finish("disk quota exceeded for user7")], EngineSettings(reflection=False))
    assert tools.calls["read_log"] == 1


def test_no_new_information_forces_a_final_answer_marked_forced():
    same = call("read_log", path="/var/log/a.log")
    forced_finish = finish("The log shows ERROR disk quota exceeded for user7.", error="disk quota exceeded",
                           evidence=["ERROR disk quota exceeded for user7"])
    settings = EngineSettings(no_progress_steps=2, reflection=False)
    events, model, _ = run([same, same, same, forced_finish], settings)
    # step 1 new, steps 2 and 3 repeats -> no new info twice -> step 4 may only finish
    assert actions_allowed(model.calls[3][1]) == ["finish"]
    assert "no new information in the last 2 steps" in prompt_of(model, 3)
    final = of(events, ev.FinalAnswer)[-1]
    assert final.forced and ended(events).status == ev.FINISHED
    assert "forced" in of(events, ev.StepRecorded)[-1].evaluation


# ---- reflection triggers ------------------------------------------------------------------------

REFLECT = {"continue": True, "reason": "the log is missing", "next_plan": "read /var/log/a.log instead"}


@pytest.mark.parametrize(
    "bad_call, trigger",
    [
        (call("read_log", path="/var/log/missing.log"), "the tool failed"),
        (call("read_log", path="/var/log/empty.log"), "the tool found nothing"),
        (call("broken"), "the tool failed"),
        (call("nonexistent_tool"), "the action was invalid"),
    ],
)
def test_reflection_at_failure_empty_and_invalid_and_its_plan_is_followed(bad_call, trigger):
    replies = [bad_call, REFLECT, call("read_log", path="/var/log/a.log"),
               finish("disk quota exceeded for user7", error="disk quota exceeded")]
    events, model, _ = run(replies)
    refl = of(events, ev.Reflected)
    assert [r.trigger for r in refl] == [trigger]
    assert "Stop and reflect" in prompt_of(model, 1)
    assert "Follow this plan: read /var/log/a.log instead" in prompt_of(model, 2)
    deltas = [d for d in of(events, ev.TextDelta) if d.kind == "reflection"]
    assert "".join(d.text for d in deltas) == json.dumps(REFLECT)
    assert ended(events).status == ev.FINISHED


def test_reflection_when_the_step_limit_is_near():
    replies = [call("read_log", path="/var/log/a.log"), call("scan", path="/srv"),
               {"continue": True, "reason": "enough", "next_plan": "finish with the quota error"},
               finish("disk quota exceeded for user7", error="disk quota exceeded")]
    events, model, _ = run(replies, EngineSettings(max_steps=4))
    assert [r.trigger for r in of(events, ev.Reflected)] == ["only 2 steps are left"]


def test_reflection_saying_stop_makes_the_next_step_finish_only():
    replies = [call("read_log", path="/var/log/a.log"), call("read_log", path="/var/log/missing.log"),
               {"continue": False, "reason": "enough evidence", "next_plan": "finish"},
               finish("disk quota exceeded for user7", error="disk quota exceeded")]
    events, model, _ = run(replies)
    assert actions_allowed(model.calls[3][1]) == ["finish"]
    assert "Use finish now" in prompt_of(model, 3)
    assert ended(events).status == ev.FINISHED


def test_after_the_model_stops_itself_a_rejected_answer_can_still_be_fixed():
    """The CI run of the real CPU-hog test: the model said stop in a reflection, its finish named
    a fact no observation showed, and the engine replaced it at once although steps were left."""
    replies = [call("read_log", path="/var/log/a.log"), call("read_log", path="/var/log/missing.log"),
               {"continue": False, "reason": "enough evidence", "next_plan": "finish"},
               finish("busyloop (pid 4242) fills the disk."),
               finish("disk quota exceeded for user7", error="disk quota exceeded")]
    events, model, _ = run(replies)
    assert len(of(events, ev.AnswerRejected)) == 1
    assert actions_allowed(model.calls[4][1]) == ["finish"]
    end = ended(events)
    assert end.status == ev.FINISHED and end.answer == "disk quota exceeded for user7"
    assert not of(events, ev.FinalAnswer)[-1].forced


def test_reflection_cannot_stop_the_run_before_any_tool_worked():
    replies = [call("read_log", path="/var/log/missing.log"),
               {"continue": False, "reason": "that answers it", "next_plan": "finish"},
               call("read_log", path="/var/log/a.log"),
               finish("disk quota exceeded for user7", error="disk quota exceeded")]
    events, model, _ = run(replies)
    assert "read_log" in actions_allowed(model.calls[2][1])
    assert "Follow this plan" in prompt_of(model, 2)
    assert ended(events).status == ev.FINISHED


# ---- the answer check ----------------------------------------------------------------------------


def test_finish_needs_a_tool_call_unless_the_snapshot_answers():
    # a log question: step 1's grammar has no finish, and a finish anyway is sent back
    events, model, tools = run([finish("hogzilla (pid 4711) uses 98.5% CPU.", process="hogzilla"),
                                call("read_log", path="/var/log/a.log"),
                                finish("disk quota exceeded for user7", stance="problem")],
                               question="Why did the backup job fail?")
    first_schema = json.dumps(model.calls[0][1])
    assert '"const": "finish"' not in first_schema and '"const": "read_log"' in first_schema
    assert "4711" in of(events, ev.AnswerRejected)[0].reason  # it states what no fact shown holds
    assert '"const": "finish"' in json.dumps(model.calls[2][1])
    assert ended(events).status == ev.FINISHED and not of(events, ev.FinalAnswer)[-1].forced
    assert "use a tool first" in prompt_of(model, 0)


CPU_LABELS = [{"asks": "process", "resource": "cpu", "fault": False}]


def test_a_cpu_question_may_finish_from_the_snapshot():
    replies = [finish("hogzilla (pid 4711) uses 98.5% CPU.", process="hogzilla", pid=4711)]
    events, model, _ = run(replies, model=ScriptedModel(replies, labels=CPU_LABELS),
                           question="Which process uses the most CPU?",
                           snapshot={"top_cpu": [{"pid": 4711, "name": "hogzilla", "cpu_pct": 98.5}]})
    assert '"const": "finish"' in json.dumps(model.calls[0][1])
    assert not of(events, ev.AnswerRejected) and ended(events).status == ev.FINISHED


def test_a_repeated_tool_is_left_out_of_the_next_two_steps():
    same = call("read_log", path="/var/log/a.log")
    events, model, _ = run([same, same, call("top_processes"), call("scan", path="/tmp"), GOOD_FINISH])
    schemas = [json.dumps(c[1]) for c in model.calls]
    assert '"const": "read_log"' in schemas[1]
    assert '"const": "read_log"' not in schemas[2] and '"const": "top_processes"' in schemas[2]
    assert '"const": "read_log"' not in schemas[3]  # two steps, so an A, B, A, B alternation stops too
    assert '"const": "read_log"' in schemas[4]


def test_error_lines_in_a_log_and_a_ranked_headline_nudge_to_finish():
    events, model, _ = run([call("read_log", path="/var/log/a.log"), GOOD_FINISH])
    assert "The ERROR lines above answer" in prompt_of(model, 1)


# ---- bad actions become observations ---------------------------------------------------------------


@pytest.mark.parametrize(
    "reply, status, text",
    [
        (call("nonexistent_tool"), "invalid", "unknown tool 'nonexistent_tool'"),
        (call("read_log"), "invalid", "missing the required argument 'path'"),
        (call("read_log", path="/a", bogus=1), "invalid", "unknown argument 'bogus'"),
        (call("top_processes", n="five"), "invalid", "must be of type integer"),
        (call("top_processes", n=500), "invalid", "must be <= 20"),
        (call("broken"), "error", "RuntimeError: sensor bus exploded"),
        (call("slow"), "timeout", "did not finish within"),
        ("{not json", "invalid", "not valid JSON"),
        ('{"thought": "x", "action_input": {}}', "invalid", 'needs an "action"'),
        (call("finish", answer="x"), "invalid", "missing the required argument 'stance'"),
    ],
)
def test_bad_actions_and_tool_failures_are_observations(reply, status, text):
    reflection = {"continue": True, "reason": "r", "next_plan": "p"}
    events, model, tools = run([reply, reflection, call("top_processes"), GOOD_FINISH])
    obs = of(events, ev.ObservationMade)[1]
    assert obs.status == status and text in obs.text
    assert text in model.calls[1][0][-1].content
    # only a reply that is no step at all is marked unparsable (a typed field, not its words)
    assert of(events, ev.StepRecorded)[1].unparsable is isinstance(reply, str)  # the raw replies here are no step
    assert ended(events).status == ev.FINISHED


# ---- ask_user --------------------------------------------------------------------------------------


def test_ask_user_gets_the_persons_reply():
    asked: list[str] = []

    def ask(question: str) -> str:
        asked.append(question)
        return "It is the build server, hogzilla runs there"

    replies = [call("ask_user", question="Which machine do you mean?"), GOOD_FINISH]
    events, model, _ = run(replies, ask=ask)
    assert asked == ["Which machine do you mean?"]
    assert of(events, ev.AskedUser)[0].question == asked[0]
    assert of(events, ev.UserReplied)[0].reply.startswith("It is the build server")
    assert "It is the build server" in prompt_of(model, 1)
    assert "ask_user" in actions_allowed(model.calls[0][1])


@pytest.mark.parametrize("settings, ask", [(EngineSettings(), None),
                                           (EngineSettings(allow_ask=False), lambda q: "never used")])
def test_when_nobody_can_answer_the_model_is_told_so(settings, ask):
    replies = [call("ask_user", question="Which one?"), {"continue": True, "reason": "r", "next_plan": "p"},
               call("top_processes"), GOOD_FINISH]
    events, model, _ = run(replies, settings, ask=ask)
    assert "ask_user" not in actions_allowed(model.calls[0][1])
    assert "Nobody can answer questions in this run" in model.calls[0][0][1].content
    assert not of(events, ev.AskedUser)
    assert "Nobody can answer questions in this run" in prompt_of(model, 1)
    assert ended(events).status == ev.FINISHED


def test_a_person_who_does_not_answer_is_an_observation():
    replies = [call("ask_user", question="Which one?"), {"continue": True, "reason": "r", "next_plan": "p"},
               call("top_processes"), GOOD_FINISH]
    events, model, _ = run(replies, ask=lambda q: None)
    assert of(events, ev.UserReplied)[0].reply is None
    assert "The person gave no answer" in prompt_of(model, 1)


# ---- context compaction -----------------------------------------------------------------------------


def test_old_observations_are_compacted_near_the_context_length():
    def big(part: int):
        return ok("\n".join(f"row {part}-{i} " + "x" * 60 for i in range(40)) + f"\nERROR part {part} broke")

    registry = Registry([ToolSpec("big", "big output", schema_from_signature(big), big, {"part": 1})])
    replies = [call("big", part=i) for i in range(1, 6)] + [finish("part 5 broke", error="part 5 broke")]
    model = ScriptedModel(replies, context_length=3800)
    events, _, _ = run(replies, EngineSettings(max_steps=6, reflection=False), registry=registry, model=model)
    assert ended(events).status == ev.FINISHED
    last_prompt = model.calls[-1][0]
    compacted = [m for m in last_prompt if 'compacted="yes"' in m.content]
    assert compacted, "no observation was compacted"
    assert model.count_tokens(last_prompt) <= 3800
    assert all("ERROR" in m.content for m in compacted)  # the summary keeps the error line
    assert "row 5-0" in last_prompt[-1].content  # the newest observation is intact


# ---- cancel and model failure ------------------------------------------------------------------------


def test_cancel_between_tokens_ends_the_run_as_cancelled():
    cancel = threading.Event()
    model = ScriptedModel([call("top_processes", thought="x" * 400)], delay=0.01, piece_size=2)
    engine = Engine(model, Tools().registry(), EngineSettings(), snapshot=lambda pids: SNAP)
    events = []
    started = time.monotonic()
    for event in engine.run("q", cancel=cancel):
        events.append(event)
        if isinstance(event, ev.TextDelta) and len(of(events, ev.TextDelta)) == 3:
            cancel.set()
    assert time.monotonic() - started < 2.0
    end = ended(events)
    assert end.status == ev.CANCELLED
    assert len(of(events, ev.TextDelta)) < 10
    assert [r.step for r in of(events, ev.StepRecorded)] == [0]  # the unfinished step is not recorded


def test_model_exception_ends_the_run_with_one_line_error():
    model = ScriptedModel([call("top_processes"), GOOD_FINISH], fail_on_call=1)
    events, _, _ = run(None, model=model)
    end = ended(events)
    assert end.status == ev.ERROR and "scripted model failure" in end.error and "\n" not in end.error
    assert [r.step for r in of(events, ev.StepRecorded)] == [0, 1]


def test_text_deltas_stream_the_step_as_it_is_generated():
    reply = call("finish", stance="value", cites=["F1"], subject="", value="0.4", answer="The load is 0.4.")
    events, _, _ = run([reply])
    deltas = [d.text for d in of(events, ev.TextDelta) if d.step == 1]
    assert len(deltas) > 5 and "".join(deltas) == json.dumps(reply)
    # thought and action events come after the text
    kinds = [type(e).__name__ for e in events if getattr(e, "step", None) == 1]
    assert kinds.index("ThoughtMade") > kinds.index("TextDelta")


def test_settings_are_frozen_and_serialisable():
    s = EngineSettings()
    with pytest.raises(Exception):
        s.max_steps = 3  # type: ignore[misc]
    assert json.loads(json.dumps(s.as_dict()))["max_steps"] == 8
    assert replace(s, max_steps=3).max_steps == 3
    with pytest.raises(ValueError):
        EngineSettings(max_steps=0)


def test_the_tools_that_fit_the_question_are_named_next_to_it():
    from appliance.agent.prompt import matching_tools

    def nothing():
        return ok(1)

    specs = [ToolSpec(name, desc, schema_from_signature(nothing), nothing) for name, desc in [
        ("top_processes", "The busiest processes by CPU or memory. Use when the fan is loud."),
        ("disk_usage", "Every filesystem and how full it is. Use for a full disk."),
        ("read_log", "The end of a log file with its errors."),
    ]]
    assert matching_tools("Why is my fan so loud?", specs)[0] == "top_processes"
    assert matching_tools("My disk is full", specs)[0] == "disk_usage"
    assert matching_tools("Which errors are in the log?", specs)[0] == "read_log"
    assert matching_tools("hello there", specs) == []
    events, model, _ = run([GOOD_FINISH], registry=Registry(specs))
    assert "Tools that fit this question: top_processes" in model.calls[0][0][1].content


@pytest.mark.parametrize("question,first", [
    ("The app in /opt/billing cannot connect to its database. Why?", "list_dir"),
    ("The relay refuses to start. Its configuration is /etc/relay/relay.conf. Which setting is wrong?", "read_file"),
    ("Backups fail. The log is /srv/backup/nightly.log. What went wrong?", "read_log"),
    ("What does /var/log/syslog say about the crash?", "read_log"),
])
def test_a_place_named_in_the_question_is_looked_at_first(question, first):
    from appliance.agent.prompt import suggested_tools
    from appliance.tools.registry import default_registry

    assert suggested_tools(question, default_registry().specs)[0] == first


def test_a_named_folder_does_not_displace_a_tool_that_already_looks_at_files():
    from appliance.agent.prompt import suggested_tools
    from appliance.tools.registry import default_registry

    tools = suggested_tools("Which single file under /srv/data takes the most space?", default_registry().specs)
    assert tools[0] == "largest_files" and "list_dir" not in tools


def test_the_system_prompt_is_the_same_for_every_question_so_the_kv_cache_carries_over():
    """A model kept loaded (the TUI, eval) must reuse the whole system prompt on the next question;
    only the question message may differ between runs."""
    _, disk_model, _ = run([GOOD_FINISH], question="My disk is full, which folder is it?")
    _, fan_model, _ = run([GOOD_FINISH], question="Why is my fan loud?")
    disk_system, fan_system = disk_model.calls[0][0][0], fan_model.calls[0][0][0]
    assert disk_system.role == fan_system.role == "system"
    assert disk_system.content == fan_system.content
    assert disk_model.calls[0][0][1].content != fan_model.calls[0][0][1].content


def test_each_run_tells_the_model_a_new_question_starts():
    """So the thread policy reads the load afresh (a hog may have started between questions)."""
    class Marking(ScriptedModel):
        def __init__(self, replies):
            super().__init__(replies)
            self.began_at_call: list[int] = []

        def begin_run(self):
            self.began_at_call.append(len(self.calls))

    model = Marking([GOOD_FINISH] * 6)
    run([], model=model)
    first_run_calls = len(model.calls)
    run([], model=model, question="Is my disk full?")
    assert first_run_calls >= 1 and len(model.calls) > first_run_calls
    assert model.began_at_call == [0, first_run_calls]  # once per run, before its first model call


def test_a_ranked_headline_is_the_first_line_and_nudges_to_finish():
    def ranked():
        return ok({"path": "/srv", "largest": [{"path": "/srv/home", "size": "64.6 MiB"},
                                               {"path": "/srv/logs", "size": "980 KiB"}],
                   "headline": "largest: /srv/home 64.6 MiB (95%)"})

    registry = Registry([ToolSpec("ranked", "Ranked sizes.", schema_from_signature(ranked), ranked, {})])
    events, model, _ = run([call("ranked"), finish("/srv/home is the largest, 64.6 MiB.", path="/srv/home")],
                           registry=registry, question="Which directory under /srv uses the most space?")
    observation = of(events, ev.ObservationMade)[1].text
    assert observation.splitlines()[1] == "F2 headline: largest: /srv/home 64.6 MiB (95%)"
    assert "The first line above answers a 'which/largest/most' question" in prompt_of(model, 1)
    assert ended(events).status == ev.FINISHED


def test_a_number_in_an_observation_sentence_backs_an_answer():
    def listeners(port: Annotated[int, Range(1, 65535)]):
        return result("empty", {"headline": f"port {port}: no process listens on it"}, "no matching sockets")

    registry = Registry([ToolSpec("listeners", "Who listens on a port.", schema_from_signature(listeners),
                                  listeners, {"port": 80})])
    stop = {"continue": False, "reason": "nothing listens", "next_plan": "finish"}  # empty -> a reflection
    events, _, _ = run([call("listeners", port=56141), stop, finish("Nothing is listening on TCP port 56141.")],
                       registry=registry, question="Is any process listening on TCP port 56141?")
    assert of(events, ev.StepRecorded)[-1].evaluation == "answer accepted"
    assert ended(events).status == ev.FINISHED


def test_a_log_read_again_with_more_lines_of_the_same_errors_is_no_new_information(tmp_path):
    """The same error repeated with other times and numbers tells nothing new however many lines
    are read: two such reads in a row leave only finish (real read_log on a real file)."""
    from appliance.tools.paths import PathPolicy
    from appliance.tools.registry import ToolContext, build_registry

    log = tmp_path / "reportgen.log"
    log.write_text("".join(f"2026-12-02 06:{i // 60:02d}:{i % 60:02d} ERROR reportgen: cannot write report: "
                           f"[Errno 13] Permission denied: '/srv/reports/r-{i}.pdf'\n" for i in range(60)))
    registry = build_registry(ToolContext(policy=PathPolicy.default([tmp_path])))
    reads = [call("read_log", path=str(log), lines=n, pattern="ERROR") for n in (5, 20, 40)]
    answer = finish("The log shows: ERROR reportgen: cannot write report: [Errno 13] Permission denied.",
                    error="Permission denied", evidence=[])
    model = ScriptedModel([*reads, answer])
    engine = Engine(model, registry, EngineSettings(no_progress_steps=2, reflection=False, snapshot=False))
    events = list(engine.run(f"why are no reports written? the log is {log}"))
    steps = {s.step: s for s in of(events, ev.StepRecorded)}
    assert steps[1].evaluation == "new information"
    assert steps[2].evaluation == steps[3].evaluation == "no new information"
    assert actions_allowed(model.calls[3][1]) == ["finish"]


def test_a_claim_sent_back_and_written_again_unchanged_is_not_tried_a_third_time():
    made_up = finish("hogzilla (pid 4711) uses 12345 MiB.", process="hogzilla")
    replies = [call("read_log", path="/var/log/a.log"), made_up, made_up, made_up]
    events, model, _ = run(replies, EngineSettings(max_steps=8, reflection=False, answer_rejections=2),
                           question="Why did the backup job fail?")
    assert len(of(events, ev.AnswerRejected)) == 1  # the second, identical claim ends the retries
    final = of(events, ev.FinalAnswer)[-1]
    assert final.forced and final.answer.startswith("I could not settle")
    assert len(model.replies) == 1  # the third copy was never asked for


def test_a_claim_of_the_wrong_shape_stands_as_written_once_its_retries_are_spent():
    shapeless = finish("The log shows the backup ran out of disk quota.")  # states no count
    replies = [call("read_log", path="/var/log/a.log"), shapeless, shapeless]
    events, model, _ = run(replies, EngineSettings(max_steps=8, reflection=False),
                           question="How many backups failed?")
    assert [e.reason.split(":")[0] for e in of(events, ev.AnswerRejected)] == ["the question asks how many or how much"]
    final = of(events, ev.FinalAnswer)[-1]
    assert not final.forced and final.answer == "The log shows the backup ran out of disk quota."
    assert ended(events).status == ev.FINISHED
