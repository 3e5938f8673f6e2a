"""`ask` shows a long prompt's evaluation on stderr (a line each quarter when stderr is not a
terminal), nothing for short prompts, and a prompt-cache note at the end."""

from __future__ import annotations

import io

from appliance.agent import events as ev
from appliance.commands.ask import ProgressPrinter


def end(note: str = "") -> ev.RunEnded:
    runtime = {"system_prompt": {"status": "evaluated", "tokens": 1289, "note": note}} if note else {}
    return ev.RunEnded("r", ev.FINISHED, "a", {}, "", 1, 10, 0, 5, 1.0, 0.0, runtime=runtime)


def test_a_long_prompt_prints_its_progress_by_quarters_and_the_note():
    err = io.StringIO()
    printer = ProgressPrinter(err)
    for done in range(64, 1300, 64):
        printer.show(ev.PromptProgress("r", 1, min(done, 1289), 1289, (1289 - done) / 50))
    printer.show(ev.PromptProgress("r", 1, 1289, 1289, 0.0))
    printer.show(end("prompt cache file x.kv ignored (truncated); evaluating the prompt afresh"))
    lines = err.getvalue().splitlines()
    assert lines[0] == "reading the prompt: 64 of 1,289 tokens, about 24 s left"
    assert lines[-2] == "reading the prompt: 1,289 of 1,289 tokens"
    assert len(lines) == 6  # the 4 quarters and the end, then the note
    assert lines[-1] == "appliance: prompt cache file x.kv ignored (truncated); evaluating the prompt afresh"


def test_a_short_prompt_prints_nothing():
    err = io.StringIO()
    printer = ProgressPrinter(err)
    printer.show(ev.PromptProgress("r", 2, 40, 40, 0.0))
    printer.show(end())
    assert err.getvalue() == ""
