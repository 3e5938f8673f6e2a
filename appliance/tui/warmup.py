"""Bring the system prompt into the model's context while the person is still typing.

Why: the first question of a fresh process would otherwise start by evaluating the whole system
prompt (tens of seconds on two cores without the prompt cache, a fraction of a second with it).
The worker posts past-tense messages only; a question asked meanwhile waits for the warm-up in
the model (and is shown its progress there), it never evaluates the prompt twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from textual.message import Message

from appliance.tui import messages as msg
from appliance.errors import one_line

if TYPE_CHECKING:
    from appliance.agent.engine import Engine


def warm_model(post: Callable[[Message], object], engine: Engine, should_stop: Callable[[], bool]) -> None:
    """The worker: `engine.warm(...)` with its progress and its outcome posted as messages."""
    warm = getattr(engine, "warm", None)
    if warm is None:
        return

    def progress(done: int, total: int, seconds_left: float) -> None:
        post(msg.WarmProgressed(done, total, seconds_left))

    try:
        report = warm(should_stop=should_stop, on_progress=progress)
    except Exception as exc:  # a warm-up is a help: the first question evaluates the prompt instead
        post(msg.WarmFinished(None, one_line(exc)))
        return
    post(msg.WarmFinished(report.as_dict() if report is not None else None, ""))
