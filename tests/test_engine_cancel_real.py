"""Cancel and the time budget stop a real run within a second, even in the middle of evaluating
the first prompt (SmolLM2-135M, the whole system prompt of ~2,400 tokens, no prompt cache).

Why a real model: the gap this closes was inside llama.cpp's prompt evaluation, which only a
real model has; a scripted model would pass without the chunked evaluation.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import pytest

pytest.importorskip("llama_cpp")

from appliance.agent import events as ev  # noqa: E402
from appliance.agent.engine import Engine  # noqa: E402
from appliance.agent.settings import EngineSettings  # noqa: E402
from appliance.llm.base import ModelInfo  # noqa: E402
from appliance.llm.chat_model import LlamaChatModel  # noqa: E402
from appliance.llm.runtime import load_llama  # noqa: E402
from appliance.tools.registry import default_registry  # noqa: E402

SNAPSHOT = {"load": "1m=0.1 5m=0.1 15m=0.1 cpus=2"}


@pytest.fixture(scope="module")
def llama(smollm2_path):
    return load_llama(smollm2_path, n_ctx=8192, n_threads=1)


@pytest.fixture
def engine(llama):
    def make(settings: EngineSettings) -> Engine:
        chat = LlamaChatModel(llama, ModelInfo(name="smollm2", path=str(llama.model_path), context_length=8192))
        chat.reset()  # nothing of the prompt in the context: step 1 evaluates all of it
        return Engine(chat, default_registry(), settings, snapshot=lambda pids: SNAPSHOT)
    return make


def events_until_end(engine: Engine, question: str, cancel: threading.Event, on_event=None) -> list:
    seen = []
    for event in engine.run(question, cancel=cancel):
        seen.append((time.monotonic(), event))
        if on_event is not None:
            on_event(event)
    return seen


def mid_prompt(seen: list) -> bool:
    """The run was stopped while the prompt was being evaluated: the model reports the system
    prompt's evaluation stopped, no progress event says it was complete, no text came. (Under
    load the first chunk may outlast a 1 s budget, so there may be no progress event at all.)"""
    end = seen[-1][1]
    progress = [e for _, e in seen if isinstance(e, ev.PromptProgress)]
    return (end.runtime.get("system_prompt", {}).get("status") == "stopped"
            and all(p.done < p.total for p in progress)
            and not any(isinstance(e, ev.TextDelta) for _, e in seen))


def test_cancel_during_prompt_evaluation_ends_the_run_within_a_second(engine):
    cancel = threading.Event()
    asked: list[float] = []

    def cancel_on_progress(event) -> None:
        if isinstance(event, ev.PromptProgress) and not asked and event.done >= 64:
            asked.append(time.monotonic())
            cancel.set()

    seen = events_until_end(engine(EngineSettings(max_steps=2)), "why is my disk full?", cancel, cancel_on_progress)
    ended_at, end = seen[-1]
    assert isinstance(end, ev.RunEnded) and end.status == ev.CANCELLED
    assert asked and ended_at - asked[0] < 1.0
    assert mid_prompt(seen)


def test_the_time_budget_ends_the_run_within_a_second_during_prompt_evaluation(engine):
    settings = replace(EngineSettings(max_steps=2), time_budget_seconds=1.0)
    seen = events_until_end(engine(settings), "why is my disk full?", threading.Event())
    end = seen[-1][1]
    assert isinstance(end, ev.RunEnded) and end.status == ev.BUDGET
    assert end.seconds < settings.time_budget_seconds + 1.0
    assert mid_prompt(seen)
    assert end.timing["prompt"] > 0 and end.timing["total"] == pytest.approx(end.seconds, abs=0.05)
