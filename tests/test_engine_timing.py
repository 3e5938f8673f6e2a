"""Every second of a run accounted for: RunEnded.timing splits the run's own clock into prompt
evaluation, generation, tools and the engine's rest, and charges the model's load to the first run
only; runtime carries what the model reports. A scripted model with known delays and a tool that
sleeps make the parts predictable."""

from __future__ import annotations

import dataclasses
import time

from appliance.agent import events as ev
from appliance.agent.engine import Engine
from appliance.agent.settings import EngineSettings
from appliance.llm.fake import ScriptedModel
from appliance.tools.base import Registry, ToolSpec, ok
from support.claims import claim

TOOL_CALL = {"thought": "look", "action": "slow_tool", "action_input": {}}
FINISH = claim("slow_tool reports value 42.", value="42")


class TimedModel(ScriptedModel):
    """Says each call spent 0.3 s on its prompt and 0.2 s generating, and that it took 1.5 s to load."""

    def __init__(self, replies):
        super().__init__(replies)
        self.load_seconds = 1.5

    def generate(self, *args, **kwargs):
        gen = super().generate(*args, **kwargs)
        time.sleep(0.5)
        return dataclasses.replace(gen, stats=dataclasses.replace(gen.stats, prompt_ms=300.0, generation_ms=200.0))

    def take_load_seconds(self) -> float:
        seconds, self.load_seconds = self.load_seconds, 0.0
        return seconds

    def runtime_report(self) -> dict:
        return {"flash_attn": False, "system_prompt": {"status": "loaded", "tokens": 1289}}


def slow_tool() -> dict:
    """Reports the value. Use for tests."""
    time.sleep(0.4)
    return ok({"value": 42})


def registry() -> Registry:
    return Registry([ToolSpec("slow_tool", "Reports the value. Use for tests.", {"type": "object", "properties": {},
                                                                               "additionalProperties": False},
                              lambda ctx=None, **kw: slow_tool())])


def run_once(model) -> ev.RunEnded:
    engine = Engine(model, registry(), EngineSettings(max_steps=3, reflection=False, question_reader="words"),
                    snapshot=lambda pids: {"load": 1})  # two model calls, as scripted
    return [e for e in engine.run("what does slow_tool say?") if isinstance(e, ev.RunEnded)][0]


def test_the_parts_add_up_to_the_runs_seconds():
    model = TimedModel([TOOL_CALL, FINISH])
    end = run_once(model)
    timing = end.timing
    assert end.status == ev.FINISHED
    assert timing["prompt"] == 0.6 and timing["generation"] == 0.4  # two calls, as the model measured them
    assert 0.4 <= timing["tools"] < 0.9  # the sleeping tool (and the instant snapshot)
    parts = timing["prompt"] + timing["generation"] + timing["tools"] + timing["engine"]
    assert abs(parts - timing["total"]) < 0.01 and abs(timing["total"] - end.seconds) < 0.01
    assert timing["model_load"] == 1.5
    assert end.runtime["system_prompt"]["status"] == "loaded"


def test_the_load_is_charged_to_the_first_run_only():
    model = TimedModel([TOOL_CALL, FINISH, TOOL_CALL, FINISH])
    assert run_once(model).timing["model_load"] == 1.5
    assert run_once(model).timing["model_load"] == 0.0


def test_a_model_without_the_optional_methods_still_gets_a_breakdown():
    end = run_once(ScriptedModel([TOOL_CALL, FINISH]))
    assert end.timing["model_load"] == 0.0 and end.runtime == {}
    assert set(end.timing) == {"model_load", "prompt", "generation", "tools", "engine", "total", "first_token"}


class LateModel(ScriptedModel):
    """Starts streaming its reply only after 0.3 s of "prompt evaluation"."""

    def generate(self, *args, **kwargs):
        time.sleep(0.3)
        return super().generate(*args, **kwargs)


def test_the_first_token_is_timed_from_the_runs_start_and_shown_in_the_line():
    from appliance.agent.timing import timing_line

    end = run_once(LateModel([TOOL_CALL, FINISH]))
    first = end.timing["first_token"]
    assert 0.3 <= first < 0.3 + 0.4 + 0.3 and first < end.timing["total"]  # the first call's, not the second's
    assert timing_line(end.timing).endswith(f"(first token after {first:.1f} s)")
    assert "first token" not in timing_line({k: v for k, v in end.timing.items() if k != "first_token"})
