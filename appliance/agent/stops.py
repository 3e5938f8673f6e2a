"""The two ways a run ends early from inside a step: stopped (cancel, a budget) or the model failed.

Why exceptions here, when everything else is an event: they unwind from deep inside a model call,
a tool wait or a question to the person straight to the run's end, which turns them into the
`RunEnded` status and reason. They never leave the engine.
"""

from __future__ import annotations


class RunStop(Exception):
    """Ends the loop early with a run status (cancelled, budget) and a reason."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


class ModelFailed(Exception):
    """The model raised: the run ends with status error and this one-line reason."""
