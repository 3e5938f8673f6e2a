"""Shared pieces of the TUI tests: an app wired to the real Engine with a scripted model, a tiny
deterministic tool registry and (optionally) a real SQLite store in a temporary folder.

The scripted model is the right stand-in here: these tests are about the interface (streaming,
cancel, prompts, history), not about what a real model would say.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterable

from appliance.agent.question.classify import is_label_call
from appliance.agent.engine import Engine
from appliance.agent.settings import EngineSettings
from appliance.llm.base import GenerationStats
from appliance.llm.fake import ScriptedModel
from support.claims import claim
from appliance.tools.base import Registry, ToolSpec, ok
from appliance.tui.app import ApplianceApp
from appliance.tui.system_sampler import ProcessReading, SystemSample

PROCESSES = [
    {"pid": 4242, "name": "burn", "cpu_percent": 99.0, "memory_mb": 12},
    {"pid": 812, "name": "sshd", "cpu_percent": 0.3, "memory_mb": 9},
]

THOUGHT_1 = "The fan is loud, so something may be using the CPU; list the busiest processes first."
STEP_TOOL = {"thought": THOUGHT_1, "action": "top_processes", "action_input": {"limit": 5}}
STEP_FINISH = claim("The **burn** process (pid 4242) keeps one core at 99% CPU.", "problem",
                    thought="The burn process uses 99% CPU.", subject="burn (pid 4242)", value="99% CPU")
STEP_ASK = {"thought": "I need to know which service.", "action": "ask_user",
            "action_input": {"question": "Which service keeps failing?"}}


def top_processes(limit: int = 5) -> dict:
    """The busiest processes (fixed data, so screens are the same on every machine)."""
    return ok({"processes": PROCESSES[:limit], "note": "\n".join(f"line {i}" for i in range(12))})


def registry() -> Registry:
    return Registry([
        ToolSpec(
            name="top_processes",
            description="Lists the processes using the most CPU. Use for slowness, heat, fan noise.",
            parameters={"type": "object", "properties": {"limit": {"type": "integer", "minimum": 1, "maximum": 20}},
                        "required": [], "additionalProperties": False},
            func=top_processes,
            example={"limit": 5},
        )
    ])


class FixedStatsModel(ScriptedModel):
    """A ScriptedModel whose token statistics are fixed (speed, reuse, threads) so screens and
    snapshots do not depend on how fast the test machine is."""

    def generate(self, *args: Any, **kwargs: Any):  # type: ignore[override]
        gen = super().generate(*args, **kwargs)
        if is_label_call(args[1] if len(args) > 1 else kwargs["schema"]):
            return gen  # the question's labels (declined by the scripted model): no step's cost
        stats = GenerationStats(prompt_tokens_evaluated=100, prompt_tokens_reused=700, completion_tokens=50,
                                generation_ms=1000.0, prompt_ms=200.0, threads=1, threads_batch=2)
        return dataclasses.replace(gen, stats=stats)


FIXED_SNAPSHOT = {"load": [0.5, 0.4, 0.3], "cpu_percent": 51.0, "memory_percent": 40.0}


def engine_factory(clock: Callable[[], float] | None = None) -> Callable[[Any, Any], Engine]:
    def make(model: Any, settings: Any) -> Engine:
        kwargs = {"clock": clock} if clock else {}
        return Engine(model, registry(), settings, snapshot=lambda pids: dict(FIXED_SNAPSHOT), **kwargs)

    return make


def fake_sample() -> SystemSample:
    return SystemSample(
        cpu_percent=42.0, memory_percent=37.0, memory_used_gb=8.9, memory_total_gb=24.0,
        top=(ProcessReading(4242, "burn", 99.0, 12.0), ProcessReading(812, "sshd", 0.3, 9.0)),
    )


def make_app(
    replies: Iterable[Any] = (STEP_TOOL, STEP_FINISH),
    *,
    delay: float = 0.0,
    model: Any = None,
    settings: EngineSettings | None = None,
    loader: Callable[[str | None], Any] | None = None,
    deterministic: bool = False,
    release: threading.Event | None = None,
    **kwargs: Any,
) -> ApplianceApp:
    """The real app and engine; the model is scripted. deterministic: fixed clocks for snapshots;
    release: each reply's last piece waits for it (see ScriptedModel)."""
    model = model or FixedStatsModel(list(replies), name="smollm2-135m-instruct", delay=delay, release=release)
    clock = (lambda: 0.0) if deterministic else None
    options: dict[str, Any] = dict(
        model_loader=loader or (lambda spec: model),
        engine_factory=engine_factory(clock),
        settings=settings or EngineSettings(max_steps=6),
        sampler=fake_sample,
    )
    if deterministic:
        options["clock"] = clock
    options.update(kwargs)
    return ApplianceApp(**options)


async def wait_for(pilot: Any, condition: Callable[[], bool], timeout: float = 10.0, step: float = 0.02) -> float:
    """Pause the pilot until `condition()` holds; returns the seconds it took (fails on timeout)."""
    started = time.perf_counter()
    while not condition():
        if time.perf_counter() - started > timeout:
            raise AssertionError(f"condition not met within {timeout} s")
        await pilot.pause(step)
    return time.perf_counter() - started


async def ask(pilot: Any, question: str) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: app.model is not None)
    box = app.query_one("#question")
    box.value = question
    await pilot.press("enter")


def screen_text(app: Any) -> str:
    """Every piece of text the current screen shows, as plain text (for assertions)."""
    from textual.widgets import Static

    parts = []
    for widget in app.screen.query("*"):
        if isinstance(widget, Static):
            parts.append(str(widget.render()))
    return "\n".join(parts)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def tmp_store_paths(tmp_path: Path) -> Path:
    return tmp_path / "runs.db"
