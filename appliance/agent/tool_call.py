"""One tool call of a step: run it (or answer it from the run's memory) and describe what it showed.

Why the run's memory answers repeats: a small model repeats a call it already made; a scan or a
reading still fresh (the tool's ttl) comes back from memory with a note naming the earlier step,
instead of running the tool again, and a repeat is never counted as progress.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from typing import Callable

from appliance.agent import events as ev
from appliance.agent.calls import CachedObservation, call_key
from appliance.agent.control import LoopControl
from appliance.agent.facts import Entity
from appliance.agent.observe import render_result, summarize
from appliance.agent.outcome import REPEAT, Outcome, render_tool_result
from appliance.agent.prompt import finish_nudge, repeat_note
from appliance.agent.run_memory import RunMemory, reads_log
from appliance.agent.settings import EngineSettings
from appliance.agent.stops import RunStop
from appliance.tools.base import EMPTY, ERROR, OK, PARTIAL, Registry, ToolResult

_ERROR_LINE = re.compile(r"\b(ERROR|FATAL|CRITICAL|PANIC)\b")


@dataclass
class ToolCaller:
    """Makes one run's tool calls through the registry (which validates them), in a worker thread
    a cancel does not wait for."""

    registry: Registry
    settings: EngineSettings
    ctl: LoopControl
    memory: RunMemory
    self_pids: frozenset[int]
    clock: Callable[[], float]
    cancel: threading.Event

    def act(self, step: int, action: str, action_input: dict) -> Outcome:
        """Run one tool call (or answer it from the run's memory) and describe what it showed."""
        refused = self.registry.check(action, action_input)
        if refused is not None:
            status, body = render_result(refused, self.settings.observation_token_budget)
            return Outcome(status, body, action, evaluation=f"invalid call: {refused['error']}")
        self.ctl.looked = True
        calls = self.memory.calls
        key = call_key(action, action_input)
        count = calls.note_call(key, action)
        previous = calls.previous(key)
        spec = self.registry.get(action)
        now = self.clock()
        cached = calls.fresh(key, spec.ttl if spec else 0, now)
        if cached is not None:
            note = repeat_note(cached.step)
            return Outcome(REPEAT, cached.body, action, [note], cached=True, repeats=count, repeat_of=cached.step,
                           evaluation=f"repeat of step {cached.step} (answered from memory)")
        started = time.perf_counter()
        result = self._call_tool(action, action_input)
        tool_ms = (time.perf_counter() - started) * 1000
        status, body, ranked = render_tool_result(result, self.self_pids, self.settings.observation_token_budget)
        if status in (OK, EMPTY, PARTIAL):
            self.ctl.tools_worked = True
        new_info = self.memory.remember_body(step, action, body)
        reads = reads_log(self.registry, action)
        if reads:
            self.memory.remember_log(status, body)
        notes = []
        evaluation = "new information" if new_info else "no new information"
        if previous is not None:
            new_info = False  # a fresh reading of a call already made is not progress
            notes.append(repeat_note(previous.step))
            evaluation = f"repeat of step {previous.step} (fresh reading, no new information)"
        elif status == OK and reads and _ERROR_LINE.search(body):
            notes.append(finish_nudge("errors"))
        elif status == OK and ranked:
            notes.append(finish_nudge("ranked"))
        body = self.memory.facts.number_body(action, body, status, context_of(action_input))
        calls.remember(key, CachedObservation(step, now, status, body, summarize(body)))
        return Outcome(status, body, action, notes, tool_ms=tool_ms, new_info=new_info, evaluation=evaluation,
                       repeats=count if previous is not None else 0, repeat_of=previous.step if previous else None)

    def _call_tool(self, action: str, action_input: dict) -> ToolResult:
        """registry.call in a worker, so a cancel does not wait for a slow tool."""
        box: list[ToolResult] = []
        worker = threading.Thread(target=lambda: box.append(self.registry.call(action, action_input)),
                                  name=f"engine-tool-{action}", daemon=True)
        worker.start()
        while worker.is_alive():
            worker.join(0.05)
            if self.cancel.is_set():
                raise RunStop(ev.CANCELLED, "cancelled while a tool was running")
        return box[0] if box else {"status": ERROR, "data": None, "error": "the tool returned nothing"}


# An argument that names what a whole reading is about: its lines are facts about that thing too.
_CONTEXT_ARGS = (("pid", "process"), ("path", "path"), ("port", "port"), ("user", "user"), ("name", "process"),
                 ("target", "process"), ("program", "program"))


def context_of(arguments: dict) -> list[Entity]:
    """The entities a call's arguments name (a pid, a path, a port, a user, a name)."""
    found = []
    for key, kind in _CONTEXT_ARGS:
        value = arguments.get(key)
        if value in (None, ""):
            continue
        if kind == "process" and str(value).isdigit():
            found.append(Entity("process", "", int(value)))
        else:
            found.append(Entity(kind, str(value)))
    return found
