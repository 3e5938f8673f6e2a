"""The TUI's pure parts: thought extraction from streamed JSON, the status line, batching of token
pieces, the answer Markdown, history adapters (memory and the real SQLite store) and export."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from appliance.agent import events as ev
from appliance.agent.events import TextDelta
from appliance.llm.base import GenerationStats, ModelInfo
from appliance.tui.batching import DeltaBatcher
from appliance.tui.export import MarkdownExporter, replay_markdown
from appliance.tui.history_source import MemoryHistory, StoreHistory
from appliance.tui.render import StatusState, answer_markdown, format_args, should_fold, status_text
from appliance.tui.thought_stream import FieldStream

STEP = {"thought": "Disk \"/var\" is 97% full — check\nlogs é😀 \\ end", "action": "disk_usage",
        "action_input": {"path": "/var", "thought": "not this one"}}


def stream_in_pieces(text: str, size: int, name: str = "thought") -> tuple[str, list[str]]:
    field = FieldStream(name)
    pieces = [field.feed(text[i:i + size]) for i in range(0, len(text), size)]
    return field.text, pieces


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 64, 10_000])
def test_thought_is_decoded_exactly_whatever_the_piece_boundaries(size):
    raw = json.dumps(STEP)  # escapes the quote, the newline, the backslash; \u escapes for non-ASCII
    text, _ = stream_in_pieces(raw, size)
    assert text == STEP["thought"]


def test_thought_with_raw_unicode_and_whitespace_between_tokens():
    raw = '{ "thought" :  "naïve café 😀 ok" , "action": "x", "action_input": {}}'
    for size in (1, 4):
        assert stream_in_pieces(raw, size)[0] == "naïve café 😀 ok"


def test_only_the_top_level_field_is_taken_and_nothing_before_its_value():
    raw = '{"action": "a", "action_input": {"thought": "nested"}, "thought": "top"}'
    text, pieces = stream_in_pieces(raw, 1)
    assert text == "top"
    assert "".join(pieces) == "top"


def test_text_grows_while_the_value_is_still_open():
    field = FieldStream()
    assert field.feed('{"thought": "the fan') == "the fan"
    assert field.feed(" is loud") == " is loud" and not field.done
    assert field.feed('", "action"') == "" and field.done


def test_malformed_input_never_raises():
    for raw in ['{"thought": "\\uZZZZ bad"}', "not json at all", '{"thought": 12}', "}}}]]", '{"thought": "\\']:
        stream_in_pieces(raw, 1)


def test_reflection_reason_is_extracted_by_name():
    raw = json.dumps({"continue": True, "reason": "the log was empty", "next_plan": "read syslog"})
    assert stream_in_pieces(raw, 3, "reason")[0] == "the log was empty"


def test_status_line_fits_80_columns_and_keeps_model_step_and_threads():
    state = StatusState(model="qwen2.5-coder-1.5b-instruct", phase="cancelling", step=12, max_steps=12,
                        tokens_per_second=23.4, prompt_tokens_reused=7000, prompt_tokens=8000, elapsed=100.2,
                        threads=1, threads_batch=2)
    line = status_text(state, width=78)
    assert len(line) <= 78
    for part in ("cancelling", "step 12/12", "23", "7000/8000", "100s", "1/2"):
        assert part in line
    assert line.startswith("qwen2.5")
    wide = status_text(state, width=200)
    assert "threads 1/2" in wide and "reused 7000/8000" in wide and "23 tok/s" in wide
    assert wide.startswith("qwen2.5-coder-1.5b-instruct · cancelling")


def test_status_line_leaves_out_what_is_not_known_yet():
    line = status_text(StatusState(model="m", phase="loading model"), width=80)
    assert line == "m · loading model"


def test_batcher_merges_pieces_of_one_step_and_keeps_event_order():
    now = [0.0]
    batcher = DeltaBatcher(0.05, clock=lambda: now[0])
    out = []
    for index, text in enumerate("abcdef"):
        now[0] = index * 0.01
        out += list(batcher.feed(TextDelta("r", 1, text)))
    assert [e.text for e in out] == ["abcdef"]  # flushed once 50 ms had passed
    out = list(batcher.feed(TextDelta("r", 1, "g")))
    assert out == []
    thought = ev.ThoughtMade("r", 1, "abcdefg")
    out = list(batcher.feed(thought))
    assert out == [TextDelta("r", 1, "g"), thought]  # held text first, then the event
    out = list(batcher.feed(TextDelta("r", 1, "x", "reflection")))
    out += list(batcher.feed(TextDelta("r", 2, "y")))
    out += list(batcher.flush())
    assert [(e.step, e.kind, e.text) for e in out] == [(1, "reflection", "x"), (2, "step", "y")]


def test_unbatched_interval_hands_every_piece_on():
    batcher = DeltaBatcher(0.0)
    assert [e.text for p in "abc" for e in batcher.feed(TextDelta("r", 1, p))] == ["a", "b", "c"]


def test_answer_markdown_has_the_answer_and_its_evidence_in_plain_words_and_no_result_record():
    md = answer_markdown(answer="Process burn uses 99% CPU.", evidence=["top: burn 99%"],
                         result={"stance": "problem", "cites": ["F2"], "subject": "burn (pid 4242)"}, status="finished")
    assert md.startswith("## Answer\n")
    assert "- top: burn 99%" in md and "stance" not in md and "F2" not in md and "```" not in md
    failed = answer_markdown(answer="", status="error", error="the model failed: boom", heading=False)
    assert "##" not in failed and "the model failed: boom" in failed and "No answer" in failed


def test_long_observations_fold_and_args_are_cut():
    assert should_fold("\n".join(["x"] * 10)) and not should_fold("one line")
    assert format_args({"path": "/" + "a" * 500}).endswith("…") and len(format_args({"p": "a" * 500})) == 160


def run_events(run_id: str, question: str, started: float) -> list:
    model = ModelInfo(name="smollm2-135m-instruct")
    stats = GenerationStats(prompt_tokens_evaluated=10, completion_tokens=20, generation_ms=400, threads=1,
                            threads_batch=2)
    return [
        ev.RunStarted(run_id, question, model, {"max_steps": 4}, started, "0.1.0"),
        ev.StepRecorded(run_id, 1, started + 1, "look at the disk", "disk_usage", {"path": "/var"}, "ok",
                        "/var 97% used", "97% used", {"continue": True, "reason": "full", "next_plan": "logs"},
                        "ok", stats),
        ev.FinalAnswer(run_id, 2, "/var is 97% full.", {"path": "/var"}, ("disk_usage: /var 97%",)),
        ev.RunEnded(run_id, ev.FINISHED, "/var is 97% full.", {"path": "/var"}, "", 2, 10, 0, 20, 2.0, started + 2),
    ]


def test_memory_history_lists_searches_and_replays():
    history = MemoryHistory()
    for event in run_events("r1", "what is filling my disk?", 1000.0) + run_events("r2", "why so hot?", 2000.0):
        history.record(event)
    assert [r.run_id for r in history.list_runs()] == ["r2", "r1"]
    assert [r.run_id for r in history.list_runs("disk")] == ["r1"]
    replay = history.get_run("r1")
    assert replay.row.status == ev.FINISHED and replay.row.steps == 1
    assert replay.steps[0].threads == 1 and replay.steps[0].reflection["reason"] == "full"
    assert replay.evidence == ("disk_usage: /var 97%",)


def test_store_history_reads_what_the_real_store_recorded(tmp_path):
    from appliance.store import open_store

    db = tmp_path / "runs.db"
    assert StoreHistory(db).list_runs() == []  # no database yet: an empty history, not an error
    with open_store(db) as store:
        for event in run_events("abc123", "what is filling my disk?", 1_795_900_000.0):
            store.record(event)
    history = StoreHistory(db)
    rows = history.list_runs()
    assert [(r.run_id, r.status, r.steps, r.model) for r in rows] == [("abc123", "finished", 2, "smollm2-135m-instruct")]
    assert abs(rows[0].started_at - 1_795_900_000.0) < 1
    assert history.list_runs("filling") and not history.list_runs("nothing-like-this")
    replay = history.get_run("abc123")
    assert replay.answer == "/var is 97% full." and replay.result == {"path": "/var"}
    assert replay.evidence == ("disk_usage: /var 97%",)  # the store keeps evidence in its own column
    assert replay.steps[0].action == "disk_usage" and replay.steps[0].action_input == {"path": "/var"}
    assert replay.steps[0].reflection["next_plan"] == "logs"
    assert (replay.steps[0].threads, replay.steps[0].threads_batch, replay.steps[0].tokens_per_second) == (1, 2, 50.0)


def test_export_writes_the_whole_trajectory(tmp_path):
    history = MemoryHistory()
    for event in run_events("r1", "what is filling my disk?", 1000.0):
        history.record(event)
    path = MarkdownExporter(tmp_path / "out")(history.get_run("r1"))
    text = path.read_text()
    assert path.name == "run-r1.md"
    assert text.startswith("# what is filling my disk?")
    assert "## Step 1: disk_usage" in text and "/var 97% used" in text and "## Answer" in text
    assert text == replay_markdown(history.get_run("r1"))


def test_pure_tui_modules_do_not_import_textual():
    code = ("import sys; import appliance.tui.thought_stream, appliance.tui.render, appliance.tui.batching, "
            "appliance.tui.history_source, appliance.tui.export, appliance.tui.system_sampler, "
            "appliance.tui.loading; assert 'textual' not in sys.modules, 'textual imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_what_the_machine_or_the_database_wrote_reaches_the_screen_without_control_sequences():
    """A stored answer, evidence line or result value cannot retitle the window or clear the screen."""
    from appliance.tui.render import answer_markdown

    shown = answer_markdown(answer="disk full\x1b]0;pwned\x07 on /srv\x1b[2J", evidence=["line \x1b[31mred"],
                            result={"path": "/srv/\x1b[1mx"}, error="boom\x9b2J")
    assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown
    assert "disk full on /srv" in shown and "line red" in shown
