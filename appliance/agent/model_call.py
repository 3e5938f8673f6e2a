"""One run's model calls: streamed live, stoppable, and counted against the run's budgets.

Why a worker thread per call: the model's `generate` blocks until its reply is complete, while the
consumer of the run's events (the TUI, `appliance ask`) must see every token as it comes and must
be able to stop the call between tokens (cancel, the time budget).
"""

from __future__ import annotations

import queue
import threading
from typing import Callable, Generator, Sequence

from appliance.agent import events as ev
from appliance.agent.settings import EngineSettings
from appliance.agent.stops import ModelFailed, RunStop
from appliance.errors import one_line
from appliance.llm.base import ChatModel, Generation, Message


class ModelCaller:
    """Makes one run's model calls and keeps what they cost: tokens, and the model's own seconds
    (from each call's measurement, so the run's timing can tell them from the tools' and its own)."""

    def __init__(self, model: ChatModel, settings: EngineSettings, run_id: str, cancel: threading.Event,
                 clock: Callable[[], float], started: float) -> None:
        self.model = model
        self.s = settings
        self.run_id = run_id
        self.cancel = cancel
        self.clock = clock
        self.deadline = started + settings.time_budget_seconds
        self.prompt_tokens = 0
        self.prompt_reused = 0
        self.completion_tokens = 0
        self.prompt_seconds = 0.0
        self.generation_seconds = 0.0
        self.started = started
        self.first_token: float | None = None
        self.last: Generation | None = None  # the latest call's generation  # seconds from the run's start to the model's first token

    def generate(self, step: int, messages: Sequence[Message], schema: dict, max_tokens: int,
                 kind: str, temperature: float | None = None) -> Generator[ev.Event, None, Generation]:
        """One model call, streamed as TextDelta (and PromptProgress) events while it runs, stopped
        between tokens by cancel or the time budget. temperature: None for the settings' own."""
        heat = self.s.temperature if temperature is None else temperature
        pieces: queue.Queue[str | ev.PromptProgress | None] = queue.Queue()  # None: the call is over
        box: dict[str, Generation] = {}
        errors: list[BaseException] = []
        stop = threading.Event()

        def should_stop() -> bool:
            return stop.is_set() or self.out_of_time()

        def progress(done: int, total: int, seconds_left: float) -> None:
            pieces.put(ev.PromptProgress(self.run_id, step, done, total, round(seconds_left, 1)))

        def work() -> None:
            try:
                box["gen"] = self.model.generate(
                    list(messages), schema, max_tokens=max_tokens, temperature=heat,
                    on_text=pieces.put, should_stop=should_stop, on_progress=progress,
                )
            except BaseException as exc:  # handed to the engine's thread below
                errors.append(exc)
            finally:
                pieces.put(None)

        worker = threading.Thread(target=work, name="engine-generate", daemon=True)
        worker.start()
        try:
            while (piece := pieces.get()) is not None:
                if self.first_token is None and isinstance(piece, str):
                    self.first_token = self.clock() - self.started
                yield ev.TextDelta(self.run_id, step, piece, kind) if isinstance(piece, str) else piece
        finally:
            stop.set()
            worker.join()
        if errors:
            raise ModelFailed(f"the model failed: {one_line(errors[0])}")
        gen = box["gen"]
        self.last = gen
        self._count(gen)
        if gen.finish_reason == "cancelled" or self.cancel.is_set():
            if self.cancel.is_set():
                raise RunStop(ev.CANCELLED, "cancelled")
            raise RunStop(ev.BUDGET, f"the time budget of {self.s.time_budget_seconds:g} s was used up")
        return gen

    def out_of_time(self) -> bool:
        """Cancelled, or past the time budget: what stops a model call (and a warm-up beside it)."""
        return self.cancel.is_set() or self.clock() > self.deadline

    def count_warm(self, seconds: float, evaluated: int) -> None:
        """Charge the run with the warm-up of its system prompt done beside step 0 (`WarmBeside`)."""
        self.prompt_seconds += seconds
        self.prompt_tokens += evaluated

    def _count(self, gen: Generation) -> None:
        self.prompt_tokens += gen.stats.prompt_tokens_evaluated
        self.prompt_reused += gen.stats.prompt_tokens_reused
        self.completion_tokens += gen.stats.completion_tokens
        self.prompt_seconds += gen.stats.prompt_ms / 1000.0
        self.generation_seconds += gen.stats.generation_ms / 1000.0

    def check_limits(self) -> None:
        """Before a step: cancel, the time budget and the token budget end the run."""
        if self.cancel.is_set():
            raise RunStop(ev.CANCELLED, "cancelled")
        if self.clock() > self.deadline:
            raise RunStop(ev.BUDGET, f"the time budget of {self.s.time_budget_seconds:g} s was used up")
        used = self.prompt_tokens + self.completion_tokens
        if used >= self.s.token_budget:
            raise RunStop(ev.BUDGET, f"the token budget of {self.s.token_budget} tokens was used up ({used})")
