"""The messages thread workers post to the app, named in the past tense (what happened).

Workers never touch widgets: they post one of these (`App.post_message` is thread-safe) and the
app's handlers update the widgets on the event loop. That keeps every widget change on one thread
and makes each flow testable by looking at which messages arrive.
"""

from __future__ import annotations

import queue
from dataclasses import dataclass
from typing import Any

from textual.message import Message


@dataclass
class EngineEmitted(Message):
    """One event of the running engine (an `appliance.agent.events` value)."""

    event: Any


@dataclass
class RunCrashed(Message):
    """The engine raised instead of ending with RunEnded (a bug or an unexpected model failure)."""

    error: str


@dataclass
class UserAsked(Message):
    """The agent asked the person a question; the worker waits for a reply on `replies`."""

    question: str
    replies: "queue.Queue[str | None]"


@dataclass
class WarmProgressed(Message):
    """The warm-up evaluated `done` of the system prompt's `total` tokens."""

    done: int
    total: int
    seconds_left: float


@dataclass
class WarmFinished(Message):
    """The warm-up ended: how the system prompt got into the context (PrefixReport.as_dict()),
    or None with `error` when it could not."""

    report: dict | None
    error: str


@dataclass
class ModelLoaded(Message):
    model: Any
    spec: str | None


@dataclass
class ModelMissing(Message):
    """The default model file is not on disk: offer to pull it or explain how to import one."""

    name: str
    size: int
    detail: str
    spec: str | None


@dataclass
class ModelLoadFailed(Message):
    """The model could not be loaded (corrupt, wrong format, not enough memory...)."""

    error: str
    spec: str | None


@dataclass
class PullProgressed(Message):
    done: int
    total: int


@dataclass
class PullFinished(Message):
    path: str


@dataclass
class PullFailed(Message):
    error: str


@dataclass
class SystemSampled(Message):
    sample: Any  # appliance.tui.system_sampler.SystemSample


@dataclass
class ChecksDone(Message):
    findings: list  # appliance.analyzers.Finding, in the analyzers' order


@dataclass
class HistoryListed(Message):
    runs: list
    query: str


@dataclass
class RunLoaded(Message):
    run: Any  # appliance.tui.history_source.RunReplay or None
    run_id: str


@dataclass
class RunExported(Message):
    path: str


@dataclass
class BackgroundFailed(Message):
    """A helper worker (history query, export, sampling) failed; shown as a notification."""

    what: str
    error: str
