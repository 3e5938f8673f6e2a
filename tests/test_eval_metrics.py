"""Metrics from a run's events, and the per-scenario summaries the table and `compare` show."""

from __future__ import annotations

from appliance.agent import events as ev
from appliance.eval.compare import compare, format_comparison
from appliance.eval.metrics import RunTally, format_table, summarise_by_scenario
from appliance.llm.base import GenerationStats, ModelInfo


def step(n, action, status, evaluation="", tokens=10, ms=500.0, **typed):
    return ev.StepRecorded(
        run_id="r", step=n, at=0.0, thought="", action=action, action_input={}, observation_status=status,
        observation="", observation_summary="", reflection=None, evaluation=evaluation,
        stats=GenerationStats(completion_tokens=tokens, generation_ms=ms), **typed,
    )


def test_tally_counts_what_went_wrong_and_what_it_cost():
    tally = RunTally()
    for event in [
        ev.RunStarted("r", "q?", ModelInfo("m"), {}, 0.0, "0"),
        step(0, "snapshot", "ok", "machine snapshot", tokens=0, ms=0.0),
        step(1, "", "invalid", "unparsable step: your output is not valid JSON", unparsable=True),
        # the counts come from the step's typed fields, never from its words: "json" in an invalid
        # call's words is no parse failure, "repeat of step" in a new call's words no repeat
        step(2, "nosuch", "invalid", "invalid call: unknown tool, not valid json input"),
        step(3, "top_processes", "ok", "new information (not a repeat of step 1)"),
        step(4, "top_processes", "repeat", "repeat of step 3 (answered from memory)", repeat_of=3),
        step(5, "top_processes", "ok", "repeat of step 4 (fresh reading, no new information)", repeat_of=4),
        ev.Reflected("r", 5, "same call", True, "r", "p"),
        ev.AnswerRejected("r", 6, "not backed"),
        ev.FinalAnswer("r", 6, "busy: hashminer", {"process": "hashminer"}, (), forced=False),
        ev.RunEnded("r", "finished", "busy: hashminer", {"process": "hashminer"}, "", 6, 900, 300, 80, 12.5, 0.0),
    ]:
        tally.add(event)
    m = tally.metrics()
    assert (m["invalid_actions"], m["parse_failures"], m["repeated_actions"]) == (2, 1, 2)
    assert (m["reflections"], m["answer_rejections"], m["steps"]) == (1, 1, 6)
    assert (m["prompt_tokens"], m["prompt_tokens_reused"], m["completion_tokens"]) == (900, 300, 80)
    assert m["tokens_per_second"] == 50 / 2.5  # 5 steps x 10 tokens in 5 x 0.5 s
    assert tally.answer == "busy: hashminer" and tally.run_id == "r" and m["status"] == "finished"


def _case(scenario, success, steps, leaks=0, reason="ok"):
    return {"scenario": scenario, "success": success, "reason": reason,
            "metrics": {"steps": steps, "canary_leaks": leaks, "seconds": 10.0}}


def test_summaries_average_per_scenario_and_total_leaks():
    table = summarise_by_scenario([_case("a", True, 2), _case("a", False, 4, leaks=1), _case("b", True, 3)])
    assert table["a"]["success_rate"] == 0.5 and table["a"]["steps"] == 3.0 and table["a"]["canary_leaks"] == 1
    assert table["overall"]["cases"] == 3 and table["overall"]["successes"] == 2
    text = format_table(table, title="T")
    assert text.splitlines()[0] == "T" and "| a " in text and "50%" in text


def test_compare_reports_deltas_and_changed_reasons():
    a = {"id": 1, "model": "m", "suite": "s", "repeat": 1, "started_at": "t",
         "cases": [_case("a", False, 5, reason="does not name x"), _case("b", True, 2)]}
    b = {"id": 2, "model": "m", "suite": "s", "repeat": 1, "started_at": "u",
         "cases": [_case("a", True, 3), _case("c", True, 1)]}
    diff = compare(a, b)
    rows = diff["scenarios"]
    assert rows["a"]["success_a"] == 0.0 and rows["a"]["success_b"] == 1.0 and rows["a"]["steps"] == -2.0
    assert rows["a"]["changed"] == ["fixed: does not name x"]
    assert rows["b"]["success_b"] is None and rows["c"]["success_a"] is None
    assert rows["b"]["changed"] == []  # not run on one side: nothing "fixed"
    shared = rows["overall (shared)"]  # only scenario a ran on both sides
    assert (shared["success_a"], shared["success_b"]) == (0.0, 1.0)
    text = format_comparison(diff)
    assert "0% → 100% ▲" in text and "a: fixed: does not name x" in text


def test_compare_reads_evaluations_recorded_before_kinds_existed_and_shows_kinds_when_they_do():
    old = {"id": 1, "model": "m", "suite": "full", "repeat": 1, "started_at": "t",
           "cases": [_case("cpu.precise", False, 5), _case("cpu.control", True, 2)]}  # no kind column yet
    new = {"id": 2, "model": "m", "suite": "full", "repeat": 1, "started_at": "u",
           "cases": [dict(_case("cpu.precise", True, 3), kind="precise"),
                     dict(_case("cpu.control", False, 2, reason="names a culprit"), kind="control")]}
    diff = compare(old, new)
    assert diff["kinds"]["?"] == {"success_a": 0.5, "success_b": None}
    assert diff["kinds"]["precise"] == {"success_a": None, "success_b": 1.0}
    text = format_comparison(diff)
    assert "| kind " in text and "| control " in text and "cpu.control: new: names a culprit" in text


def test_headline_counts_fault_cases_and_controls_apart_and_forced_answers_fail():
    from appliance.eval.metrics import format_headline, headline, summarise_by

    cases = [dict(_case("a.precise", True, 2), kind="precise", family="a"),
             dict(_case("a.vague", False, 2), kind="vague", family="a"),
             dict(_case("a.control", True, 2, leaks=1), kind="control", family="a")]
    cases[1]["metrics"]["forced_answer"] = True
    cases[0]["metrics"]["steered"] = True
    numbers = headline(cases)
    assert (numbers["fault_cases"], numbers["fault_success_rate"]) == (2, 0.5)
    assert (numbers["controls"], numbers["control_success_rate"], numbers["canary_leaks"]) == (1, 1.0, 1)
    assert numbers["forced_answers"] == 1
    assert format_headline(numbers) == ("fault cases right: 1/2 (50%) · controls right: 1/1 (100%) · "
                                        "forced answers: 1 · steered retries: 1 (1 right) · canary leaks: 1")
    assert list(summarise_by(cases, "kind", ("precise", "vague", "control", "missing"))) == [
        "precise", "vague", "control", "overall"]
